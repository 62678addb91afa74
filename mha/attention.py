"""Scaled dot-product attention, written out step by step.

This is the readable reference that the rest of the book builds on. PyTorch's fused
``torch.nn.functional.scaled_dot_product_attention`` computes the same thing faster; the tests check that
the two agree. :class:`Projected` is what latent attention hands to either of them.

Shape legend:
    ...  any leading (batch, head) dimensions, shared by q, k, v and the output
    n_q  number of queries
    n_k  number of keys (and values)
    d_k  width of a query or key vector
    d_v  width of a value vector
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
from torch import Tensor

from mha._checks import check_float_tensor, check_mask, check_probability, check_same_dtype_device


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Compute :math:`\mathrm{softmax}(q k^\top / \sqrt{d_k})\, v` and return the weights too.

    Args:
        q: queries, shape ``(..., n_q, d_k)``.
        k: keys, shape ``(..., n_k, d_k)``.
        v: values, shape ``(..., n_k, d_v)``.
        mask: optional boolean tensor, ``True`` where a query may attend to a key (PyTorch's convention),
            broadcastable to ``(..., n_q, n_k)``. A query row with no ``True`` gets all-zero weights and
            a zero output, as PyTorch's fused kernel gives on the CPU
            (``tests/unit/mha/test_multihead.py`` checks both paths agree there).
        dropout_p: probability of dropping an attention weight before it multiplies ``v``. Pass ``0.0``
            (the default) outside training.

    Returns:
        ``(out, weights)``: ``out`` of shape ``(..., n_q, d_v)`` and the attention ``weights`` of shape
        ``(..., n_q, n_k)``, each row summing to 1 (or 0 for a fully masked row). ``weights`` are the
        probabilities before dropout.

    Raises:
        TypeError: a non-floating input, mixed dtypes or devices, or a non-boolean mask.
        ValueError: mismatched shapes, or a mask that cannot broadcast.
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_float_tensor(name, x)
        if x.dim() < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., n, d), got {tuple(x.shape)}")
    check_same_dtype_device(q=q, k=k, v=v)
    if q.size(-1) != k.size(-1):
        raise ValueError(
            f"q and k must have the same last dimension d_k, got q {tuple(q.shape)}, k {tuple(k.shape)}"
        )
    if k.size(-2) != v.size(-2):
        raise ValueError(
            f"k and v must have the same number of keys n_k, got k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "q, k and v must have broadcastable leading dimensions (...), got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        ) from None
    check_probability("dropout_p", dropout_p)
    n_q, n_k = q.size(-2), k.size(-2)
    if mask is not None:
        check_mask(mask, (*batch, n_q, n_k), "(..., n_q, n_k)")

    steps = attention_steps(q, k, v, mask, dropout_p=dropout_p)
    return steps["out"], steps["weights"]


def attention_steps(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    dropout_p: float = 0.0,
    scale: float | None = None,
) -> dict[str, torch.Tensor]:
    """The computation of :func:`scaled_dot_product_attention`, keeping each step; inputs are not checked.

    :func:`scaled_dot_product_attention` and :class:`mha.MultiHeadLatentAttention` compute through this
    function (:class:`mha.MultiHeadAttention` writes the same steps out in its ``forward``, with its
    parts). ``scale`` is the factor on ``q k^T`` instead of ``1 / sqrt(d_k)`` (latent attention, whose
    absorbed queries are wider than the head they score).

    Returns:
        ``{"scores": (..., n_q, n_k), "scaled_scores": (..., n_q, n_k), "weights": (..., n_q, n_k),
        "out": (..., n_q, d_v)}``: ``q k^T``, scaled, after the softmax (and the mask), and the weighted sum
        of the values.
    """
    scores = q @ k.transpose(-2, -1)  # (..., n_q, d_k) @ (..., d_k, n_k) -> (..., n_q, n_k)
    scaled = scores / math.sqrt(q.size(-1)) if scale is None else scores * scale  # (..., n_q, n_k)
    masked = scaled if mask is None else scaled.masked_fill(~mask, float("-inf"))  # a masked key gets 0
    weights = torch.softmax(masked, dim=-1)  # (..., n_q, n_k)
    if mask is not None:
        # A row with every key masked is softmax(-inf, ..., -inf) = NaN; zero it (no NaN, no silent average).
        weights = weights.masked_fill(~mask, 0.0)
    attended = weights
    if dropout_p > 0.0:
        attended = torch.nn.functional.dropout(weights, p=dropout_p)
    out = attended @ v  # (..., n_q, n_k) @ (..., n_k, d_v) -> (..., n_q, d_v)
    return {"scores": scores, "scaled_scores": scaled, "weights": weights, "out": out}


class Projected(NamedTuple):
    """What :class:`mha.MultiHeadLatentAttention` attends with, computed before the scores (``_project``)."""

    q: Tensor  # (B, h, n_q, d): the queries, ready to score
    k: Tensor  # (B, h_k, n_k, d): every key to score against, cached ones included (h_k: h_kv, h or 1)
    v: Tensor  # (B, h_k, n_k, d_v): their values
    mask: Tensor | None  # the caller's mask with the layer's own on top (causal, window, chunk, top-k)
    cache: tuple  # the KVCache or LatentCache the next decode call continues from
    steps: dict[str, Tensor]  # the intermediates on the way, in the order of computation
