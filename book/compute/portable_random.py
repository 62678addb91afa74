"""A counter-based random generator that JavaScript reproduces bit for bit.

The head explorer runs twice: in Python with a live kernel, and in the reader's browser on the static
site. Both must draw the same token vectors and the same initial weights, so neither uses its language's
own generator (``torch.Generator``, ``Math.random``). Instead each number is a hash of where it is used:
the value at position ``i`` of stream ``key`` is ``mix32(key + i * GOLDEN mod 2**32)``, with Chris
Wellons' ``lowbias32`` integer hash as ``mix32``, and its top 24 bits give a uniform number in ``[0, 1)``,
exact in float32 and float64. Only 32-bit integer arithmetic is involved (``Math.imul`` in JavaScript),
so the two languages agree exactly; ``book/widgets/static/ports/random.js`` is the port, and
``tests/unit/book/compute/test_portable_random.py`` checks it against this module.

This is not a generator for statistics or cryptography: it is a reproducible way to fill small tensors.
"""

from __future__ import annotations

import torch

MASK32 = 0xFFFFFFFF
GOLDEN = 0x9E3779B9  # 2**32 / golden ratio: consecutive counters land far apart before mixing


def _mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """``x * c mod 2**32`` for int64 tensors holding 32-bit values, without overflowing int64."""
    lo, hi = c & 0xFFFF, c >> 16
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & MASK32


def mix32(x: torch.Tensor) -> torch.Tensor:
    """``lowbias32``: a bijective hash of 32-bit values (in an int64 tensor) to 32-bit values."""
    x = x ^ (x >> 16)
    x = _mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = _mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def text_word(text: str) -> int:
    """A 32-bit word for a string: FNV-1a over its UTF-8 bytes (``TextEncoder`` gives the same bytes)."""
    h = 0x811C9DC5
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * 0x01000193) & MASK32
    return h


def stream_key(*words: int) -> int:
    """The key of a stream named by a few 32-bit words, e.g. ``(seed, parameter index)``."""
    key = 0x243F6A88  # the first digits of pi: any fixed start will do
    for word in words:
        if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word <= MASK32:
            raise ValueError(f"stream words must be ints in [0, 2**32), got {word!r}")
        key = int(mix32(torch.tensor([(key + word * GOLDEN) & MASK32]))[0])
    return key


def uniform(key: int, n: int, *, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """``n`` numbers in ``[0, 1)``, multiples of ``2**-24``: positions ``0 .. n-1`` of stream ``key``."""
    counters = torch.arange(n, dtype=torch.int64)  # (n,)
    bits = mix32((key + _mul32(counters, GOLDEN)) & MASK32) >> 8  # (n,), 24 bits each
    return bits.to(dtype) * 2.0**-24
