"""Attention maps stored compactly for a page: every weight as one byte, compressed, in base64.

The MiniLM box (:mod:`book.minilm.stored`) and the SmolLM2 figure (:mod:`book.smollm2.stored`) ship every
head's weights on a few texts with their pages. Both store a weight ``w`` in ``[0, 1]`` as ``round(w * 255)``,
the maps of all texts one after another in row-major order ``(L, h, n, n)``, then zlib and base64. The
pages inflate them themselves (``storedMaps`` in ``book/widgets/static/core.js``: ``DecompressionStream``)
and read them back with :func:`unpack`'s port, ``unpackMaps`` in ``book/widgets/static/ports/stored_maps.js``.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence

import numpy as np
import torch

SCALE = 255  # a weight w is stored as round(w * SCALE), one byte
ENCODING = "uint8-zlib-base64"


def quantise(weights: torch.Tensor) -> bytes:
    """Attention weights in ``[0, 1]`` as bytes ``round(w * 255)``, in row-major order."""
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point():
        raise TypeError(f"weights must be a floating-point tensor, got {type(weights).__name__}")
    if weights.numel() and (weights.min() < -1e-6 or weights.max() > 1 + 1e-6):
        raise ValueError("weights must lie in [0, 1]")
    q = torch.round(weights.detach().to("cpu", torch.float64).clamp(0.0, 1.0) * SCALE)
    return q.to(torch.uint8).contiguous().numpy().tobytes()


def pack(chunks: Sequence[bytes]) -> str:
    """The ``data`` field: the texts' quantised maps, one after another, compressed and in base64."""
    return base64.b64encode(zlib.compress(b"".join(chunks), 9)).decode("ascii")


def unpack(stored: dict, texts: str) -> list[np.ndarray]:
    """The weights that ``stored`` holds (``layers``, ``heads``, ``scale``, ``encoding``, ``data`` and the
    list ``stored[texts]`` of items with ``tokens``): for each item an array ``(L, h, n, n)`` of q / scale."""
    if stored.get("encoding") != ENCODING:
        raise ValueError(f"stored must use the encoding {ENCODING!r}, got {stored.get('encoding')!r}")
    raw = np.frombuffer(zlib.decompress(base64.b64decode(stored["data"])), dtype=np.uint8)
    L, h = stored["layers"], stored["heads"]
    lengths = [len(item["tokens"]) for item in stored[texts]]
    need = sum(L * h * n * n for n in lengths)
    if need != raw.size:
        raise ValueError(f"stored data holds {raw.size} weights, its {texts} need {need}")
    out, start = [], 0
    for n in lengths:
        out.append(raw[start : start + L * h * n * n].reshape(L, h, n, n) / stored["scale"])
        start += L * h * n * n
    return out
