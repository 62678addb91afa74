"""What one accelerator computes and moves per second, from its vendor's published figures.

Decoding one token reads the whole key/value cache and does few multiply-adds per number read: with
multi-head attention, one (``2 h n d_k`` multiply-adds over ``2 h n d_k`` cached numbers). Whether a GPU
then waits on memory is the ratio of its arithmetic rate to its memory bandwidth, which
:meth:`GpuSpec.macs_per_element` gives per number of a dtype. The figures are the vendor's, each with its
source; none is measured here.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mha._checks import check_positive_int, check_positive_number


@dataclass(frozen=True)
class GpuSpec:
    """Peak rates of one accelerator, as its vendor publishes them.

    Raises:
        TypeError, ValueError: a field of the wrong type or value; the message names the field.
    """

    name: str  # the product, e.g. "H100 SXM"
    bf16_flops: float  # dense bfloat16 matrix arithmetic, FLOP/s (a multiply-add is 2 FLOP), no sparsity
    memory_bandwidth: float  # bytes per second between the GPU's memory and its cores
    memory_bytes: int  # the GPU's memory
    source: str  # where each figure comes from

    def __post_init__(self) -> None:
        check_positive_number("bf16_flops", self.bf16_flops)
        check_positive_number("memory_bandwidth", self.memory_bandwidth)
        check_positive_int("memory_bytes", self.memory_bytes)
        if not self.source.strip():
            raise ValueError(f"{self.name}: every GPU needs a source")

    def macs_per_element(self, dtype: torch.dtype = torch.bfloat16) -> float:
        """Multiply-adds the GPU can do in the time it reads one number of ``dtype`` from memory, at peak:
        ``(bf16_flops / 2) / (memory_bandwidth / element_size)``. Below this many multiply-adds per number
        read, a computation waits on memory."""
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
        element = torch.empty((), dtype=dtype).element_size()
        return (self.bf16_flops / 2) / (self.memory_bandwidth / element)


GPUS: dict[str, GpuSpec] = {
    g.name: g
    for g in (
        GpuSpec(
            "H100 SXM",
            989.4e12,
            3.35e12,
            80 * 10**9,
            "NVIDIA H100 Tensor Core GPU datasheet (2023), H100 SXM column: BF16 Tensor Core 1,979 teraFLOPS "
            "'with sparsity', GPU memory 80 GB, GPU memory bandwidth 3.35 TB/s; dense BF16 989.4 TFLOPS "
            "(half "
            "the sparse rate): NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022), Table 1 (H100 "
            "SXM5)",
        ),
    )
}
