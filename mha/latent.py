"""Multi-head latent attention (DeepSeek-V2, 2024; DeepSeek-V3; Kimi K2), with the names of the V2 paper.

Each token is compressed to a latent ``c_kv = RMSNorm(x W_dkv)`` from which every head rebuilds its key and
value; positions enter through a rotary part, with one rotated key ``k_rope`` for all heads. A decoder
caches ``d_c + d_r`` numbers per token and layer (DeepSeek-V3: 512 + 64 = 576), not ``2 h_kv d_k``.

DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5) is an option: a "lightning indexer" of a few cheap heads
scores every earlier token for each query, and the query attends only to its ``top_k`` best.

Shape legend:
    B        batch size
    n_q      number of queries (the new tokens)
    n_k      number of keys (the cached tokens, then the new ones)
    d_model  model width
    h        number of heads
    d_cq     width of the query latent (``q_rank``)
    d_c      width of the key-value latent (``kv_rank``), the cached part
    d_nope   per-head width of the query and key parts without positions
    d_r      width of the rotary part of a query and of the shared rotary key
    d_v      per-head value width
    h_i      number of indexer heads (``index_heads``)
    d_i      width of an indexer head and of the shared index key (``index_dim``)
"""

from __future__ import annotations

from typing import TypedDict

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mha._checks import (
    check_cache,
    check_float_tensor,
    check_layer_inputs,
    check_mask,
    check_positive_int,
    check_positive_number,
    check_probability,
)
from mha.attention import Projected, attention_steps
from mha.cache import LatentCache, grow
from mha.masks import causal_mask
from mha.multihead import merge_heads, split_heads
from mha.positional import apply_rotary, rotary_tables


class LatentSteps(TypedDict, total=False):
    """What :meth:`MultiHeadLatentAttention.forward` records (``record=``), in the order of computation (the
    fused path keeps no ``scores``, ``scaled_scores`` or ``weights``)."""

    c_q: Tensor  # (B, n_q, d_cq), the query latent (x itself without q_rank)
    q_nope: Tensor  # (B, h, n_q, d_nope)
    q_rope: Tensor  # (B, h, n_q, d_r), rotated
    index_scores: Tensor  # (B, n_q, n_k), with top_k: the indexer's score of each key for each query
    selected: Tensor  # (B, n_q, n_k), with top_k: the keys each query attends to (top_k or all it sees)
    q_heads: Tensor  # plain (B, h, n_q, d_nope + d_r); absorbed (B, h, n_q, d_c + d_r)
    k_heads: Tensor  # plain (B, h, n_k, d_nope + d_r); absorbed (B, 1, n_k, d_c + d_r), the latent itself
    v_heads: Tensor  # plain (B, h, n_k, d_v); absorbed (B, 1, n_k, d_c)
    scores: Tensor  # (B, h, n_q, n_k)
    scaled_scores: Tensor  # (B, h, n_q, n_k)
    weights: Tensor  # (B, h, n_q, n_k)
    heads: Tensor  # (B, h, n_q, d_v)
    concat: Tensor  # (B, n_q, h d_v)
    out: Tensor  # (B, n_q, d_model)
    cache: LatentCache  # every token attended to, for the next decode call


class MultiHeadLatentAttention(nn.Module):
    """Self-attention in which head ``i`` scores ``q_i = [q_nope_i, rope(q_rope_i)]`` against
    ``k_i = [c_kv W_uk_i, rope(k_rope)]``, scaled by ``1 / sqrt(d_nope + d_r)``, and averages ``c_kv W_uv_i``.

    **The absorbed form** (``absorb=True``): as ``q_nope_i . (c_kv W_uk_i) = (q_nope_i W_uk_i^T) . c_kv``,
    the key up-projection folds into the query, and the value up-projection moves after the attention
    (``(weights c_kv) W_uv_i``): every head attends to the latent itself, ``[c_kv, k_rope]``, one key/value
    head shared by all (multi-query attention of width d_c + d_r), with equal outputs. This is why the layer
    decodes fast: the plain form rebuilds ``h`` keys and values from every cached latent at every step
    (``n_k d_c h (d_nope + d_v)`` multiply-adds per new token); the absorbed one reads the cache as it is.
    For a long prompt the plain form is cheaper (narrower heads): ``forward`` uses it by default, ``decode``
    the absorbed one.

    Args:
        d_model: width of the input and output vectors.
        h: number of heads.
        kv_rank: d_c, the width of the cached key-value latent.
        d_nope: per-head width of the query and key parts without positions.
        d_rope: d_r, the (even) width of the rotary parts.
        d_v: per-head value width; ``None`` means ``d_nope``.
        q_rank: d_cq, the width of the query latent; ``None`` projects the query directly from the input
            (DeepSeek-V2-Lite).
        rope_theta: the base of the rotary frequencies (as in :class:`mha.MultiHeadAttention`).
        eps: epsilon of the two RMSNorms.
        bias: biases on ``W_dq``, ``W_dkv`` and ``W_o`` (DeepSeek's ``attention_bias``).
        dropout: dropout probability on the attention weights, in training mode only.
        index_heads, index_dim, top_k: DeepSeek Sparse Attention (given together, with ``q_rank``): the
            lightning indexer's ``h_i`` heads of width ``d_i`` score key ``s`` for query ``t`` as
            ``I_ts = sum_j w_tj ReLU(q_tj . k_s / sqrt(d_i))``, with ``q_tj`` from the query latent,
            ``w_tj`` and the one index key ``k_s`` (LayerNorm'd) from the input, the first ``d_r``
            coordinates of both rotated (half-split) at their positions; each query attends only to its
            ``top_k`` best keys among those the mask lets it see (ties go to the earlier key).
            :meth:`decode` caches the index keys with the latent.

    Attributes:
        W_dq: ``nn.Linear(d_model, d_cq)``, the query down-projection (``None`` without ``q_rank``);
        q_norm: ``nn.RMSNorm(d_cq)`` on the query latent (or ``None``).
        W_uq: ``nn.Linear(d_cq, h (d_nope + d_r))``, W^UQ and W^QR, per head ``[nope | rope]``.
        W_dkv: ``nn.Linear(d_model, d_c + d_r)``, W^DKV and W^KR: the latent and the shared rotary key.
        kv_norm: ``nn.RMSNorm(d_c)`` on the latent.
        W_ukv: ``nn.Linear(d_c, h (d_nope + d_v))``, W^UK and W^UV, per head ``[key | value]``.
        W_o: ``nn.Linear(h d_v, d_model)``, the output projection.
        W_iq, W_ik, ik_norm, W_iw: with ``top_k``, the indexer's ``nn.Linear(d_cq, h_i d_i)`` for its queries,
            ``nn.Linear(d_model, d_i)`` and ``nn.LayerNorm(d_i)`` for its key, ``nn.Linear(d_model, h_i)`` for
            its head weights (scaled by ``1 / sqrt(h_i)``), else ``None``.

    Example:
        >>> mla = MultiHeadLatentAttention(32, 4, kv_rank=12, d_nope=8, d_rope=4, q_rank=16)
        >>> out, weights = mla(torch.randn(2, 5, 32), mask=causal_mask(5))
        >>> out.shape, weights.shape
        (torch.Size([2, 5, 32]), torch.Size([2, 4, 5, 5]))
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        *,
        kv_rank: int,
        d_nope: int,
        d_rope: int,
        d_v: int | None = None,
        q_rank: int | None = None,
        rope_theta: float = 10000.0,
        eps: float = 1e-6,
        bias: bool = False,
        dropout: float = 0.0,
        index_heads: int | None = None,
        index_dim: int | None = None,
        top_k: int | None = None,
    ) -> None:
        super().__init__()
        sizes = {"d_model": d_model, "h": h, "kv_rank": kv_rank, "d_nope": d_nope, "d_rope": d_rope}
        indexer = {"index_heads": index_heads, "index_dim": index_dim, "top_k": top_k}
        _check_options(sizes, {"d_v": d_v, "q_rank": q_rank}, indexer, rope_theta, dropout)
        d_v = d_nope if d_v is None else d_v
        self.index_heads, self.index_dim, self.top_k = index_heads, index_dim, top_k
        self.d_model, self.h, self.q_rank, self.kv_rank = d_model, h, q_rank, kv_rank
        self.d_nope, self.d_rope, self.d_v = d_nope, d_rope, d_v
        self.rope_theta, self.dropout = rope_theta, dropout
        self.scale = (d_nope + d_rope) ** -0.5  # the head's q.k width, also in the absorbed form
        self.W_dq = None if q_rank is None else nn.Linear(d_model, q_rank, bias=bias)
        self.q_norm = None if q_rank is None else nn.RMSNorm(q_rank, eps=eps)
        self.W_uq = nn.Linear(q_rank or d_model, h * (d_nope + d_rope), bias=False)
        self.W_dkv = nn.Linear(d_model, kv_rank + d_rope, bias=bias)
        self.kv_norm = nn.RMSNorm(kv_rank, eps=eps)
        self.W_ukv = nn.Linear(kv_rank, h * (d_nope + d_v), bias=False)
        self.W_o = nn.Linear(h * d_v, d_model, bias=bias)
        sparse = top_k is not None
        self.W_iq = nn.Linear(q_rank, index_heads * index_dim, bias=False) if sparse else None
        self.W_ik = nn.Linear(d_model, index_dim, bias=False) if sparse else None
        self.ik_norm = nn.LayerNorm(index_dim, eps=1e-6) if sparse else None
        self.W_iw = nn.Linear(d_model, index_heads, bias=False) if sparse else None

    def extra_repr(self) -> str:
        names = ["d_model", "h", "q_rank", "kv_rank", "d_nope", "d_rope", "d_v", "rope_theta"]
        names += [] if self.top_k is None else ["index_heads", "index_dim", "top_k"]
        return ", ".join(f"{name}={getattr(self, name)}" for name in names)

    def forward(
        self,
        x: Tensor,
        mask: Tensor | None = None,
        *,
        cache: LatentCache | None = None,
        need_weights: bool = True,
        absorb: bool = False,
        record: dict | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Self-attention over ``x`` at the positions after the cached tokens (``0 .. n-1`` without a cache).

        Args:
            x: shape ``(B, n, d_model)``.
            mask: optional boolean tensor, ``True`` where a query may attend to a key, broadcastable to
                ``(B, h, n, n_past + n)``; a decoder passes :func:`mha.causal_mask`.
            cache: the :class:`LatentCache` of the tokens before these (:meth:`decode`), or ``None``.
            need_weights: ``True`` runs the explicit path and returns the weights;
                ``False`` runs PyTorch's fused kernel and returns ``None`` for them.
            absorb: compute in the absorbed form (see the class docstring); the result is the same.
            record: a dict that receives this pass's intermediates, by name, in the order of computation
                (:class:`LatentSteps` gives the names and shapes; the fused path keeps no scores or weights).

        Returns:
            ``(out, weights)``: ``(B, n, d_model)`` and ``(B, h, n, n_past + n)`` (or ``None``).
        """
        p = self._project(x, mask, cache, absorb, record)
        seen = {} if record is None else record  # the intermediates, for a caller who asked (record=)
        seen.update(p.steps, q_heads=p.q, k_heads=p.k, v_heads=p.v)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            attention = attention_steps(p.q, p.k, p.v, p.mask, dropout_p=dropout_p, scale=self.scale)
            heads, weights = attention.pop("out"), attention["weights"]  # (B, h, n_q, d_v or d_c absorbed)
            seen.update(attention)  # scores, scaled_scores, weights: (B, h, n_q, n_k)
        else:  # absorbed, the one latent key/value head serves every query head, as in GQA
            kernel = {"dropout_p": dropout_p, "scale": self.scale, "enable_gqa": absorb}
            heads, weights = F.scaled_dot_product_attention(p.q, p.k, p.v, p.mask, **kernel), None
        if absorb:  # the value up-projection, after the attention: (B, h, n_q, d_c) @ (h, d_c, d_v)
            heads = heads @ self._up_projections()[1].transpose(1, 2)  # (B, h, n_q, d_v)
        concat = merge_heads(heads)  # (B, n_q, h d_v)
        out = self.W_o(concat)  # (B, n_q, d_model)
        seen.update(heads=heads, concat=concat, out=out, cache=p.cache)
        return out, weights

    def decode(
        self, x: Tensor, cache: LatentCache | None = None, *, need_weights: bool = False, absorb: bool = True
    ) -> tuple[Tensor, Tensor | None, LatentCache]:
        """Causal self-attention for new tokens, reusing the latents and rotary keys of the tokens before.

        This is ``forward`` with the cache and :func:`mha.causal_mask`; token by token it equals
        ``forward(x, mask=causal_mask(n))`` on the whole sequence.

        Args:
            x: the new tokens, shape ``(B, n_new, d_model)``.
            cache: the :class:`LatentCache` of the previous call, or ``None`` at the start.
            need_weights: run the explicit path and return the weights ``(B, h, n_new, n_past + n_new)``.
            absorb: attend to the cached latent itself (the default), or rebuild per-head keys and values.

        Returns:
            ``(out, weights, cache)``: ``(B, n_new, d_model)``, the weights or ``None``, and the cache grown
            by ``n_new`` tokens, ``kv_rank + d_rope`` elements each.
        """
        n_k = x.size(1) + self._cached(x, cache)  # the cached tokens, then the new ones
        mask, seen = causal_mask(x.size(1), n_k, device=x.device), {}  # (n_new, n_k), aligned bottom-right
        out, weights = self(x, mask, cache=cache, need_weights=need_weights, absorb=absorb, record=seen)
        return out, weights, seen["cache"]

    def _project(
        self, x: Tensor, mask: Tensor | None, cache: LatentCache | None, absorb: bool, record: dict | None
    ) -> Projected:
        """Check the inputs; the queries, the grown cache, and the keys and values each head attends to."""
        n_past = self._checked(x, mask, cache)
        if record is not None and not isinstance(record, dict):
            raise TypeError(
                f"record must be a dict (it receives the intermediates) or None, got {type(record).__name__}"
            )
        h, d_nope, d_r, d_v, d_c = self.h, self.d_nope, self.d_rope, self.d_v, self.kv_rank
        B, n, _ = x.shape
        c_q = x if self.W_dq is None else self.q_norm(self.W_dq(x))  # (B, n_q, d_cq)
        q = split_heads(self.W_uq(c_q), h)  # (B, h, n_q, d_nope + d_r)
        q_nope, q_rope = q.split([d_nope, d_r], dim=-1)  # (B, h, n_q, d_nope), (B, h, n_q, d_r)
        c_kv, k_rope = self.W_dkv(x).split([d_c, d_r], dim=-1)  # (B, n_q, d_c), (B, n_q, d_r)
        cos, sin = rotary_tables(n, d_r, theta=self.rope_theta, offset=n_past, dtype=x.dtype, device=x.device)
        q_rope = apply_rotary(q_rope, cos, sin)  # (B, h, n_q, d_r)
        k_rope = apply_rotary(k_rope, cos, sin)  # (B, n_q, d_r)
        k_index = None  # with the indexer: its key, one for all its heads, LayerNorm'd and turned
        if self.top_k is not None:
            k_index = apply_rotary(self.ik_norm(self.W_ik(x)), cos, sin)  # (B, n_q, d_i)
        cache = grow(cache, LatentCache(self.kv_norm(c_kv), k_rope, k_index))  # (B, n_k, d_c), (B, n_k, d_r)
        n_k = cache.c_kv.size(1)
        steps = {"c_q": c_q, "q_nope": q_nope, "q_rope": q_rope}
        if self.top_k is not None:
            mask, index_steps = self._select(x, c_q, cos, sin, cache.k_index, mask)
            steps.update(index_steps)  # index_scores, selected
        if absorb:
            q_latent = q_nope @ self._up_projections()[0]  # (B, h, n_q, d_nope) @ (h, d_nope, d_c)
            q_heads = torch.cat([q_latent, q_rope], dim=-1)  # (B, h, n_q, d_c + d_r)
            k_heads = torch.cat([cache.c_kv, cache.k_rope], dim=-1)[:, None]  # (B, 1, n_k, d_c + d_r)
            v_heads = cache.c_kv[:, None]  # (B, 1, n_k, d_c): the latent is every head's value
        else:
            kv = split_heads(self.W_ukv(cache.c_kv), h)  # (B, h, n_k, d_nope + d_v)
            k_nope, v_heads = kv.split([d_nope, d_v], dim=-1)  # (B, h, n_k, d_nope), (B, h, n_k, d_v)
            k_shared = cache.k_rope[:, None].expand(B, h, n_k, d_r)  # (B, h, n_k, d_r): one key for all heads
            q_heads = torch.cat([q_nope, q_rope], dim=-1)  # (B, h, n_q, d_nope + d_r)
            k_heads = torch.cat([k_nope, k_shared], dim=-1)  # (B, h, n_k, d_nope + d_r)
        return Projected(q_heads, k_heads, v_heads, mask, cache, steps)

    def _select(
        self,
        x: Tensor,
        c_q: Tensor,
        cos: Tensor,
        sin: Tensor,
        k_index: Tensor,
        mask: Tensor | None,
    ) -> tuple[Tensor, dict[str, Tensor]]:
        """The lightning indexer: each query's ``top_k`` keys, as a mask on top of ``mask``, and its steps,
        the index scores ``(B, n_q, n_k)`` (``-inf`` where ``mask`` hides a key) and the ``selected`` keys."""
        B, n_q, _ = x.shape
        q = apply_rotary(split_heads(self.W_iq(c_q), self.index_heads), cos, sin)  # (B, h_i, n_q, d_i)
        relu = torch.relu(q @ k_index[:, None].transpose(-2, -1) * self.index_dim**-0.5)  # (B, h_i, n_q, n_k)
        w = self.W_iw(x) * self.index_heads**-0.5  # (B, n_q, h_i): each head's weight, per query
        scores = torch.einsum("bqj,bjqk->bqk", w, relu)  # (B, n_q, n_k)
        visible = torch.ones_like(scores, dtype=torch.bool)  # (B, n_q, n_k)
        if mask is not None:  # a key no head of this query may see is never selected
            visible = torch.broadcast_to(mask, (B, self.h, n_q, k_index.size(1))).any(dim=1)  # (B, n_q, n_k)
            scores = scores.masked_fill(~visible, float("-inf"))
        best = scores.sort(dim=-1, descending=True, stable=True).indices[..., : self.top_k]  # (B, n_q, top_k)
        selected = torch.zeros_like(visible).scatter_(-1, best, True) & visible  # (B, n_q, n_k)
        mask = selected[:, None] if mask is None else mask & selected[:, None]  # (B, 1 or h, n_q, n_k)
        return mask, {"index_scores": scores, "selected": selected}

    def _up_projections(self) -> tuple[Tensor, Tensor]:
        """Each head's W_uk ``(h, d_nope, d_c)`` and W_uv ``(h, d_v, d_c)``, the rows of ``W_ukv``."""
        d_nope = self.d_nope
        weight = self.W_ukv.weight.view(self.h, d_nope + self.d_v, self.kv_rank)  # (h, d_nope + d_v, d_c)
        return weight[:, :d_nope], weight[:, d_nope:]

    def _checked(self, x: Tensor, mask: Tensor | None, cache: LatentCache | None) -> int:
        """Check the input (``query`` in errors, as in :class:`mha.MultiHeadAttention`), cache and mask;
        return the number of cached tokens."""
        check_layer_inputs(x, x, x, d_model=self.d_model, weight=self.W_dkv.weight)
        n_past = self._cached(x, cache)
        if mask is not None:
            check_mask(mask, (x.size(0), self.h, x.size(1), n_past + x.size(1)), "(B, h, n_q, n_k)")
        return n_past

    def _cached(self, x: Tensor, cache: LatentCache | None) -> int:
        """Check ``cache`` (or ``None``) against this layer and the new tokens ``x``; return its length."""
        if check_float_tensor("x", x).dim() != 3:
            raise ValueError(f"x must have shape (B, n, d_model), got {tuple(x.shape)}")
        widths = {"c_kv": ("(B, n_past, d_c)", self.kv_rank), "k_rope": ("(B, n_past, d_r)", self.d_rope)}
        widths["k_index"] = ("(B, n_past, d_i)", self.index_dim)
        shapes = {name: (legend, (x.size(0), None, d)) for name, (legend, d) in widths.items()}
        if self.top_k is None:
            shapes["k_index"] = ("be None: this layer has no indexer", None)
        return 0 if cache is None else check_cache(cache, LatentCache, x, shapes)


def _check_options(sizes: dict, optional: dict, indexer: dict, rope_theta: float, dropout: float) -> None:
    """Check the arguments of :class:`MultiHeadLatentAttention`: its ``sizes`` (positive ints, ``d_rope``
    even), the ``optional`` sizes (``None`` or positive), the indexer's three (all or none; with
    ``q_rank``)."""
    for name, value in sizes.items():
        check_positive_int(name, value)
    for name, value in optional.items():  # None: d_v = d_nope; no query latent
        if value is not None:
            check_positive_int(name, value)
    if sizes["d_rope"] % 2:
        raise ValueError(f"d_rope must be even (rotary embeddings turn pairs), got {sizes['d_rope']}")
    check_positive_number("rope_theta", rope_theta)
    check_probability("dropout", dropout)
    if all(v is None for v in indexer.values()):
        return
    given = ", ".join(f"{k}={v!r}" for k, v in indexer.items())  # DeepSeek Sparse Attention
    if None in indexer.values() or optional["q_rank"] is None:
        raise ValueError(f"index_heads, index_dim and top_k go together, with q_rank; got {given}")
    for name, value in indexer.items():
        check_positive_int(name, value)
    if indexer["index_dim"] < sizes["d_rope"]:
        raise ValueError(
            f"index_dim={indexer['index_dim']} must be at least d_rope={sizes['d_rope']}: that many turn"
        )
