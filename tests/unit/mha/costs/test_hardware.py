"""mha.costs.hardware: the GPU figures are the vendor's, and the ratio behind "decoding waits on memory"."""

import pytest
import torch

from mha.costs.hardware import GPUS, GpuSpec


def test_h100_figures_are_the_datasheets():
    h100 = GPUS["H100 SXM"]
    assert (h100.bf16_flops, h100.memory_bandwidth, h100.memory_bytes) == (989.4e12, 3.35e12, 80 * 10**9)
    assert "1,979 teraFLOPS" in h100.source and "3.35 TB/s" in h100.source and "80 GB" in h100.source
    assert 2 * h100.bf16_flops == pytest.approx(1979e12, rel=1e-3)  # the datasheet's sparse rate is twice


def test_multiply_adds_per_number_read():
    h100 = GPUS["H100 SXM"]
    # 494.7 T multiply-adds per second against 1.675 T bfloat16 numbers per second
    assert h100.macs_per_element() == pytest.approx(989.4e12 / 2 / (3.35e12 / 2))
    assert round(h100.macs_per_element()) == 295
    assert h100.macs_per_element(torch.float32) == 2 * h100.macs_per_element(torch.bfloat16)
    with pytest.raises(TypeError, match="dtype"):
        h100.macs_per_element("bf16")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"bf16_flops": 0.0}, "bf16_flops"),
        ({"memory_bandwidth": -1.0}, "memory_bandwidth"),
        ({"memory_bytes": 0}, "memory_bytes"),
        ({"source": " "}, "source"),
    ],
)
def test_bad_specs_name_the_field(fields, message):
    base = {"name": "x", "bf16_flops": 1e12, "memory_bandwidth": 1e12, "memory_bytes": 1, "source": "s"}
    with pytest.raises(ValueError, match=message):
        GpuSpec(**{**base, **fields})
