"""Positions: sinusoidal encodings added to the input (Vaswani et al. 2017, section 3.5), and rotary
embeddings that turn each head's queries and keys (Su et al. 2021), so that a score depends on the
offset between two positions only.

The parts :class:`mha.MultiHeadAttention` calls as ``q, k = positions(q, k, start)`` (``start``: the position
of the first new token): :class:`NoPositions` (the 2017 layer's, the default), :class:`Rotary` (full, partial,
interleaved or proportional) and :class:`Temperature` (Llama 4's NoPE layers).

Shape legend:
    n        number of positions (n_q queries, n_k keys)
    d_model  width of each encoding
    B        batch size; h query heads, h_kv key/value heads
    d_k      width of one head (rotary embeddings act per head)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha._checks import (
    check_choice,
    check_fraction,
    check_positive_int,
    check_positive_number,
    check_rotary_width,
)


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
    fraction: float = 1.0,
    proportional: bool = False,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Cosines and sines of rotary position embeddings (Su et al. 2021), positions ``offset .. offset+n-1``.

    The first ``r = fraction d_k`` coordinates of a head turn, in ``r/2`` pairs; pair ``i`` turns by the angle
    :math:`p\,\theta^{-2i/r}` at position ``p`` (partial rotary: Qwen3-Next 0.25, GLM-4.5 0.5; the rest of the
    head carries no position). :func:`apply_rotary` pairs coordinate ``i`` with ``i + r/2`` (the two halves,
    transformers' ``rotate_half``, "half-split"), so both tables repeat their ``r/2`` columns
    twice.

    ``proportional`` is Gemma 4's form: the whole head is split in halves, pair ``i`` is ``(i, i + d_k/2)``,
    and only the first ``r/2`` pairs turn, by :math:`p\,\theta^{-2i/d_k}`, the frequencies of a full-width
    rotary; the other pairs turn by 0 (cosine 1, sine 0). The tables are then ``d_k`` wide.

    Args:
        n: number of positions.
        d_k: head width.
        theta: the base of the frequencies (``rope_theta``).
        offset: position of the first row (the cache length when decoding).
        fraction: the share of the head that turns; ``fraction * d_k`` must be an even integer.
        proportional: Gemma 4's proportional rotary (above).
        dtype: floating-point dtype of the result (computed in float64, then converted).
        device: where to create the tables.

    Returns:
        ``(cos, sin)``, each of shape ``(n, r)`` (``(n, d_k)`` if ``proportional``); :func:`apply_rotary`
        turns the first ``r`` (or ``d_k``) coordinates with them.
    """
    check_positive_int("n", n)
    r = check_rotary_width(check_positive_int("d_k", d_k), fraction)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a non-negative int, got {offset!r}")
    if not theta > 0:
        raise ValueError(f"theta must be positive, got {theta!r}")
    exponents = torch.arange(0, r, 2, dtype=torch.float64, device=device) / (d_k if proportional else r)
    inv_freq = theta**-exponents  # (r/2,)
    if proportional:  # the pairs past r/2 keep their place and turn by 0
        inv_freq = torch.cat([inv_freq, inv_freq.new_zeros(d_k // 2 - r // 2)])  # (d_k/2,)
    position = torch.arange(offset, offset + n, dtype=torch.float64, device=device)  # (n,)
    angle = torch.outer(position, inv_freq).repeat(1, 2)  # (n, r) or (n, d_k): the half-split layout
    return angle.cos().to(dtype), angle.sin().to(dtype)


def apply_rotary(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, interleaved: bool = False
) -> torch.Tensor:
    """Turn the first ``r`` coordinates of ``x`` by the angles of :func:`rotary_tables` (``r`` their width);
    the rest pass unchanged.

    Half-split (the default) pairs ``(x_i, x_{i + r/2})``; ``interleaved`` pairs neighbours
    ``(x_{2i}, x_{2i+1})`` with the same angles, in place (Meta's Llama code, every version; DeepSeek's).

    Args:
        x: queries or keys, shape ``(..., n, d)`` with ``d >= r``.
        cos, sin: the tables of :func:`rotary_tables`, shape ``(n, r)``.
        interleaved: pair neighbours instead of halves.

    Returns:
        The turned tensor, shape ``(..., n, d)``; a rotation keeps each pair's length.
    """
    r = cos.size(-1)
    x_rot, x_pass = x[..., :r], x[..., r:]  # (..., n, r), (..., n, d - r)
    if interleaved:  # (x_2i, x_2i+1) as a complex number times e^(i angle)
        x1, x2, cos, sin = x_rot[..., 0::2], x_rot[..., 1::2], cos[..., : r // 2], sin[..., : r // 2]
        turned = torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).flatten(-2)  # (..., n, r)
    else:
        x1, x2 = x_rot.chunk(2, dim=-1)  # 2 x (..., n, r/2)
        turned = x_rot * cos + torch.cat([-x2, x1], dim=-1) * sin  # (..., n, r)
    return turned if r == x.size(-1) else torch.cat([turned, x_pass], dim=-1)  # (..., n, d)


class NoPositions(nn.Module):
    """The 2017 layer's part: no positions inside the layer (its positions are added to the input,
    :func:`sinusoidal_positions`; Llama 4's NoPE layers have none at all). Returns ``(q, k)`` as they are."""

    def forward(self, q: Tensor, k: Tensor, start: int) -> tuple[Tensor, Tensor]:
        return q, k


class Rotary(nn.Module):
    """Rotary positions (Su et al. 2021, RoFormer): each head's queries and keys turned by their positions.

    ``style`` is how the pairs are laid out: ``"half-split"`` (pairs ``(i, i + r/2)``, transformers'
    ``rotate_half``), ``"interleaved"`` (neighbours ``(2i, 2i+1)``, Meta's Llama code, DeepSeek's) or
    ``"proportional"`` (Gemma 4's full layers: pairs across the whole head, only the first
    ``fraction d_k / 2`` of them turning, at the frequencies of a full rotary). ``fraction`` is partial
    rotary, the share of a head that turns (Qwen3-Next 0.25, GLM-4.5 0.5; ``partial_rotary_factor``).
    :func:`rotary_tables` and :func:`apply_rotary` do the arithmetic.

    Args:
        theta: the base of the frequencies (``rope_theta``).
        fraction: the share of each head that turns; ``fraction d_k`` must be an even number.
        style: ``"half-split"``, ``"interleaved"`` or ``"proportional"``.
    """

    def __init__(self, theta: float, *, fraction: float = 1.0, style: str = "half-split") -> None:
        super().__init__()
        self.theta = check_positive_number("theta", theta)
        check_choice("style", style, ("half-split", "interleaved", "proportional"))
        self.fraction, self.style = check_fraction(fraction), style

    def check(self, *, d_k: int, **_: int) -> None:
        """Raise ``ValueError`` unless ``fraction d_k`` is an even number of coordinates."""
        check_rotary_width(d_k, self.fraction)

    def extra_repr(self) -> str:
        return f"theta={self.theta:g}, fraction={self.fraction:g}, style={self.style!r}"

    def forward(self, q: Tensor, k: Tensor, start: int) -> tuple[Tensor, Tensor]:
        """``q`` ``(B, h, n_q, d_k)`` and ``k`` ``(B, h_kv, n_k, d_k)`` at positions ``start, start + 1,
        ...``, turned; the shapes are kept."""
        n, d_k = max(q.size(-2), k.size(-2)), q.size(-1)
        options = {"fraction": self.fraction, "proportional": self.style == "proportional"}
        cos, sin = rotary_tables(
            n, d_k, theta=self.theta, offset=start, **options, dtype=q.dtype, device=q.device
        )
        interleaved = self.style == "interleaved"
        turn = [
            apply_rotary(x, cos[: x.size(-2)], sin[: x.size(-2)], interleaved=interleaved) for x in (q, k)
        ]
        return turn[0], turn[1]  # (B, h, n_q, d_k), (B, h_kv, n_k, d_k)


class Temperature(nn.Module):
    """Llama 4's attention-temperature tuning of its NoPE layers (transformers' ``attn_temperature_tuning``):
    no positions, but the query at position ``p`` is multiplied by
    ``1 + attn_scale log(1 + floor((p + 1) / floor_scale))``, exactly 1 below ``floor_scale - 1``, so that
    far-away queries score more sharply. Keys are left as they are.

    Args:
        floor_scale: the length of the steps, in positions (Llama 4: 8192).
        attn_scale: how much each step sharpens (Llama 4: 0.1).
    """

    def __init__(self, floor_scale: float, attn_scale: float) -> None:
        super().__init__()
        self.floor_scale = check_positive_number("floor_scale", floor_scale)
        self.attn_scale = check_positive_number("attn_scale", attn_scale)

    def extra_repr(self) -> str:
        return f"floor_scale={self.floor_scale:g}, attn_scale={self.attn_scale:g}"

    def factor(self, position: Tensor) -> Tensor:
        """The factor of the queries at ``position`` (a float tensor of positions, any shape)."""
        return 1 + self.attn_scale * torch.log1p(torch.floor((position + 1) / self.floor_scale))

    def forward(self, q: Tensor, k: Tensor, start: int) -> tuple[Tensor, Tensor]:
        position = torch.arange(start, start + q.size(-2), dtype=q.dtype, device=q.device)  # (n_q,)
        return q * self.factor(position)[:, None], k  # (B, h, n_q, d_k), k unchanged
