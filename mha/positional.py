"""Sinusoidal positional encodings (Vaswani et al. 2017, section 3.5).

Shape legend:
    n        number of positions
    d_model  width of each encoding
"""

from __future__ import annotations

import torch

from mha._checks import check_positive_int


def sinusoidal_positions(n: int, d_model: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    r"""Return the encodings :math:`PE_{p, 2i} = \sin(p / 10000^{2i/d})`, :math:`PE_{p, 2i+1} = \cos(\cdot)`.

    Args:
        n: number of positions ``0 .. n-1``.
        d_model: width of each encoding (any positive int; an odd width drops the last cosine).
        dtype: floating-point dtype of the result.

    Returns:
        Tensor of shape ``(n, d_model)`` with values in ``[-1, 1]``.
    """
    check_positive_int("n", n)
    check_positive_int("d_model", d_model)
    position = torch.arange(n, dtype=torch.float64)[:, None]  # (n, 1)
    i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d_model / 2),)
    angle = position / 10000.0 ** (i / d_model)  # (n, ceil(d_model / 2))
    pe = torch.empty(n, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
    return pe.to(dtype)
