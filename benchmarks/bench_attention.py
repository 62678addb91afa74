"""Speed of mha's two paths against torch.nn.MultiheadAttention, on the CPU, as ratios.

Usage:
    python -m benchmarks.bench_attention [--batch 8] [--n 256] [--d-model 512] [--heads 8] [--repeats 15]

All three run the same self-attention on the same input with the same weights (copied with
``MultiHeadAttention.from_torch``), in eval mode under ``torch.inference_mode``:

- ``torch``:    ``nn.MultiheadAttention(x, x, x, need_weights=False)``, PyTorch's own module at its fastest.
- ``fused``:    ``mha.MultiHeadAttention(x, need_weights=False)``, our module on PyTorch's fused kernel.
- ``explicit``: ``mha.MultiHeadAttention(x)``, our readable path that also returns the (B, h, n, n) weights.

The three are timed in turn within each repeat (interleaved, so a drift in machine speed hits all of them),
and each figure is the median over repeats. glibc's allocator is told to keep freed memory (``mallopt``, as
``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_MMAP_THRESHOLD_`` would): by default it may hand the explicit path's
three 16 MB score and weight tensors back to the system after each call and fault them in again on the
next, which made the explicit ratio jump between 1.15 and 1.6 from one run to the next on the same machine
(before and after the core's parts alike); the three candidates run under the same allocator. The last
line is machine-readable: ``ratio_fused=<x.xx> ratio_explicit=<x.xx>`` (ours divided by PyTorch's).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util

import torch
from torch import nn

import mha
from benchmarks._timing import interleaved_medians

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def keep_freed_memory() -> None:
    """Ask glibc's allocator to keep what is freed (no-op where the C library is not glibc)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    if hasattr(libc, "mallopt"):
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--inner", type=int, default=3, help="calls per timing")
    args = parser.parse_args()

    keep_freed_memory()  # for the rest of this process (a test that runs this script keeps it too: harmless)
    torch.manual_seed(0)
    theirs = nn.MultiheadAttention(args.d_model, args.heads, batch_first=True).eval()
    ours = mha.MultiHeadAttention.from_torch(theirs).eval()
    x = torch.randn(args.batch, args.n, args.d_model)  # (B, n, d_model)

    candidates = {
        "torch": lambda: theirs(x, x, x, need_weights=False),
        "fused": lambda: ours(x, need_weights=False),
        "explicit": lambda: ours(x),
    }
    with torch.inference_mode():
        reference = candidates["torch"]()[0]
        for name in ("fused", "explicit"):  # same answer before we time anything
            torch.testing.assert_close(candidates[name]()[0], reference, atol=1e-5, rtol=1e-4)
        print(
            f"B={args.batch} n={args.n} d_model={args.d_model} h={args.heads} "
            f"threads={torch.get_num_threads()} repeats={args.repeats}x{args.inner}"
        )
        medians = interleaved_medians(candidates, repeats=args.repeats, inner=args.inner)
    print(
        f"ratio_fused={medians['fused'] / medians['torch']:.2f} "
        f"ratio_explicit={medians['explicit'] / medians['torch']:.2f}"
    )


if __name__ == "__main__":
    main()
