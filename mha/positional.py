"""Positions: sinusoidal encodings added to the input (Vaswani et al. 2017, section 3.5), and rotary
embeddings that turn each head's queries and keys (Su et al. 2021), so that a score depends on the
offset between two positions only.

Shape legend:
    n        number of positions
    d_model  width of each encoding
    d_k      width of one head (rotary embeddings act per head)
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


def rotary_tables(
    n: int,
    d_k: int,
    *,
    theta: float = 10000.0,
    offset: int = 0,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Cosines and sines of rotary position embeddings (Su et al. 2021), positions ``offset .. offset+n-1``.

    Pair ``i`` of a head's ``d_k`` coordinates turns by the angle :math:`p\,\theta^{-2i/d_k}` at position
    ``p``. The pairs are the two halves of the head (coordinate ``i`` with ``i + d_k/2``), as in Llama's code
    and transformers' default ("half-split"), so both tables repeat their ``d_k/2`` columns twice.

    Args:
        n: number of positions.
        d_k: head width; must be even.
        theta: the base of the frequencies (``rope_theta``).
        offset: position of the first row (the cache length when decoding).
        dtype: floating-point dtype of the result (computed in float64, then converted).
        device: where to create the tables.

    Returns:
        ``(cos, sin)``, each of shape ``(n, d_k)``; :func:`apply_rotary` uses them.
    """
    check_positive_int("n", n)
    check_positive_int("d_k", d_k)
    if d_k % 2:
        raise ValueError(f"rotary embeddings need an even head width d_k, got {d_k}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a non-negative int, got {offset!r}")
    if not theta > 0:
        raise ValueError(f"theta must be positive, got {theta!r}")
    inv_freq = theta ** (-torch.arange(0, d_k, 2, dtype=torch.float64, device=device) / d_k)  # (d_k/2,)
    position = torch.arange(offset, offset + n, dtype=torch.float64, device=device)  # (n,)
    angle = torch.outer(position, inv_freq).repeat(1, 2)  # (n, d_k): the half-split layout
    return angle.cos().to(dtype), angle.sin().to(dtype)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each pair ``(x_i, x_{i + d_k/2})`` of ``x`` by the angles of :func:`rotary_tables`.

    Args:
        x: queries or keys, shape ``(..., n, d_k)``.
        cos, sin: the tables of :func:`rotary_tables`, shape ``(n, d_k)``.

    Returns:
        The rotated tensor, shape ``(..., n, d_k)``; a rotation keeps each pair's length.
    """
    x1, x2 = x.chunk(2, dim=-1)  # 2 x (..., n, d_k/2)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin  # (..., n, d_k)
