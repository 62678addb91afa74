"""Multi-head attention as an ``nn.Module``, with the paper's names.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o`` where
``head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)`` (Vaswani et al. 2017, section 3.2.2).
The ``h`` per-head projections are stored side by side in one ``nn.Linear`` each for Q, K and V, which is
the same thing as ``h`` separate matrices (the chapter "The math" checks this numerically).

Shape legend:
    B        batch size
    n_q      number of queries (target length)
    n_k      number of keys and values (source length; the cached tokens too, when decoding)
    d_model  model width, the size of each input and output vector
    h        number of query heads
    h_kv     number of key/value heads (``n_kv_heads``; ``h`` for ordinary multi-head attention)
    d_k      width of each head: d_model / h, unless a model sets it apart (``head_dim``); d_v = d_k here

``forward`` is the 2017 layer, read top to bottom. What today's models change in it are *parts*, small modules
that the forward always calls and that do nothing in the 2017 layer (:data:`PARTS`); keys that double as
values are a subclass, :class:`KeysAsValues`. The parts of today's families are data, :mod:`mha.families`.
"""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mha._checks import (
    check_attention_inputs,
    check_heads,
    check_kv_cache,
    check_part,
    check_positive_number,
    check_probability,
)
from mha.bands import NoBand
from mha.cache import KVCache, grow
from mha.gates import NoGate
from mha.masks import causal_mask
from mha.positional import NoPositions


def split_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """Split the last axis into ``heads`` heads and move the head axis forward.

    ``(B, n, heads * d_k) -> (B, heads, n, d_k)``: a ``view`` (each token's vector cut into ``heads`` pieces),
    then a ``transpose`` (so each head's pieces form one ``(n, d_k)`` matrix). A ``view`` to
    ``(B, heads, n, d_k)`` alone would mix tokens into heads; the chapter "The code" shows it.
    """
    B, n, width = x.shape
    return x.view(B, n, heads, width // heads).transpose(1, 2)  # (B, heads, n, d_k)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """The inverse of :func:`split_heads`: ``(B, h, n, d_k) -> (B, n, h * d_k)``, heads side by side."""
    B, h, n, d_k = x.shape
    return x.transpose(1, 2).contiguous().view(B, n, h * d_k)  # (B, n, h, d_k) -> (B, n, h * d_k)


# The 2017 layer's part for each slot, which changes nothing; MultiHeadAttention's docstring names others.
PARTS = dict(positions=NoPositions, q_norm=nn.Identity, k_norm=nn.Identity, v_norm=nn.Identity)
PARTS.update(scores=nn.Identity, softmax=partial(nn.Softmax, dim=-1), band=NoBand, gate=NoGate)


class MultiHeadAttention(nn.Module):
    """Multi-head attention: the 2017 layer, with grouped-query heads and a part for each later change.

    :meth:`forward` calls every part, and the defaults (:data:`PARTS`) do nothing, so
    ``MultiHeadAttention(d_model, h)`` is the paper's layer. A part is a module, one named below or a new one
    with the same call (CONTRIBUTING.md, "Adding an option"); its ``check`` method, if any, checks that it
    fits the layer.

    Args:
        d_model: width of the input and output vectors.
        h: number of attention heads; must divide ``d_model`` unless ``head_dim`` is given.
        n_kv_heads: key/value heads (grouped-query attention), dividing ``h``; ``None``: ``h``; 1: MQA.
        head_dim: the head width ``d_k`` where a model sets it apart (Gemma); ``None``: ``d_model / h``.
        bias: whether the projections have biases.
        dropout: dropout probability on the attention weights, applied in training mode only.
        scale: the factor on ``q k^T``; ``None``: ``1 / sqrt(d_k)`` (Gemma 3: its own, Gemma 4: 1).
        positions: ``q, k = positions(q, k, start)``, new tokens at positions ``start, start + 1, ...``:
            ``NoPositions``, ``Rotary`` (full, partial, interleaved, proportional) or ``Temperature`` (Llama
            4's NoPE layers), of :mod:`mha.positional`.
        q_norm, k_norm, v_norm: a norm over each head's query, key or value, before the positions:
            ``nn.Identity()`` or ``nn.RMSNorm(d_k, eps=1e-6)`` (Qwen3, Gemma; weightless for Llama 4).
        scores: what the scaled scores go through: ``nn.Identity()`` or :class:`mha.scores.SoftCap`.
        softmax: from the masked scores to the weights: ``nn.Softmax(dim=-1)`` or :class:`mha.scores.Sinks`.
        band: the keys a query sees on top of the mask, and what decoding keeps: ``NoBand``, ``Window`` or
            ``Chunk``, of :mod:`mha.bands`.
        gate: ``gate(concat, x)`` before ``W_o``: ``NoGate`` or ``OutputGate``, of :mod:`mha.gates`.

    Attributes:
        W_q: ``nn.Linear(d_model, h * d_k)``, the ``h`` query projections side by side.
        W_k: ``nn.Linear(d_model, n_kv_heads * d_k)``, the key projections.
        W_v: ``nn.Linear(d_model, n_kv_heads * d_k)``, the value projections (:class:`KeysAsValues`: ``W_k``).
        W_o: ``nn.Linear(h * d_k, d_model)``, the output projection.
        positions, q_norm, k_norm, v_norm, scores, softmax, band, gate: the parts.

    Example:
        >>> attn = MultiHeadAttention(d_model=16, h=4)
        >>> x = torch.randn(2, 5, 16)  # (B, n, d_model)
        >>> out, weights = attn(x)
        >>> out.shape, weights.shape
        (torch.Size([2, 5, 16]), torch.Size([2, 4, 5, 5]))
    """

    def __init__(
        self,
        d_model: int,
        h: int,
        *,
        n_kv_heads: int | None = None,
        head_dim: int | None = None,
        bias: bool = True,
        dropout: float = 0.0,
        scale: float | None = None,
        positions: nn.Module | None = None,
        q_norm: nn.Module | None = None,
        k_norm: nn.Module | None = None,
        v_norm: nn.Module | None = None,
        scores: nn.Module | None = None,
        softmax: nn.Module | None = None,
        band: nn.Module | None = None,
        gate: nn.Module | None = None,
    ) -> None:
        super().__init__()
        h, n_kv_heads, d_k = check_heads(d_model, h, n_kv_heads, head_dim=head_dim)
        self.d_model, self.h, self.n_kv_heads, self.d_k = d_model, h, n_kv_heads, d_k
        self.dropout = check_probability("dropout", dropout)
        self.scale = d_k**-0.5 if scale is None else check_positive_number("scale", scale)
        self.W_q = nn.Linear(d_model, h * d_k, bias=bias)
        self.W_k = nn.Linear(d_model, n_kv_heads * d_k, bias=bias)
        self.W_v = nn.Linear(d_model, n_kv_heads * d_k, bias=bias)
        self.W_o = nn.Linear(h * d_k, d_model, bias=bias)
        given = {"positions": positions, "q_norm": q_norm, "k_norm": k_norm, "v_norm": v_norm}
        given.update(scores=scores, softmax=softmax, band=band, gate=gate)
        for name, part in given.items():  # the 2017 layer's part wherever none is given
            part = PARTS[name]() if part is None else part
            setattr(self, name, check_part(name, part, h=h, d_k=d_k, d_model=d_model))

    def extra_repr(self) -> str:
        shape = f"d_model={self.d_model}, h={self.h}, n_kv_heads={self.n_kv_heads}, d_k={self.d_k}"
        return f"{shape}, scale={self.scale:.4g}, dropout={self.dropout}"

    @property
    def why_not_fused(self) -> str:
        """Why ``need_weights=False`` runs the explicit path after all: the parts PyTorch's fused kernel lacks
        (each says what in ``kernel_lacks``: soft-capping, sinks), named; ``""`` when the kernel runs
        (``nn.MultiheadAttention`` keeps such a reason too, ``why_not_fast_path``)."""
        lacking = {name: getattr(part, "kernel_lacks", "") for name, part in self.named_children()}
        return "; ".join(f"{name}: PyTorch's kernel has no {what}" for name, what in lacking.items() if what)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        need_weights: bool = True,
        record: dict | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value`` (and to the tokens of ``cache`` before them).

        Args:
            query: shape ``(B, n_q, d_model)``.
            key: shape ``(B, n_k, d_model)``; defaults to ``query`` (self-attention).
            value: shape ``(B, n_k, d_model)``; defaults to ``key``.
            mask: optional boolean tensor, ``True`` where a query may attend to a key, broadcastable to
                ``(B, h, n_q, n_k)`` (``n_k`` counting the cached tokens); see :func:`mha.causal_mask` and
                :func:`mha.padding_mask`.
            cache: the :class:`KVCache` of the tokens before these (:meth:`decode`), or ``None``.
            need_weights: ``True`` (the default) runs the explicit path and returns the weights;
                ``False`` runs PyTorch's fused ``scaled_dot_product_attention`` (unless
                :attr:`why_not_fused` says why not) and returns ``None`` for them.
            record: a dict that receives the intermediates of this very pass, by name: ``q``, ``k``, ``v``
                (the projections ``(B, n, h d_k)``), ``cache`` (every key and value, normed, with positions);
                on the explicit path ``q_heads``, ``k_heads``, ``v_heads`` ``(B, h, n, d_k)`` (a key/value
                head repeated for its query heads), ``scores``, ``scaled_scores``, ``weights``
                ``(B, h, n_q, n_k)``; then ``heads`` ``(B, h, n_q, d_k)``, ``concat`` and ``out``.

        Returns:
            ``(out, weights)``: ``out`` of shape ``(B, n_q, d_model)`` and the per-head attention weights of
            shape ``(B, h, n_q, n_k)``, or ``None`` when ``need_weights=False``.
        """
        key, value, start = check_attention_inputs(self, query, key, value, mask, cache, record)
        seen = {} if record is None else record  # the intermediates, for a caller who asked (record=)
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)  # (B, n_q, h d_k), 2 x (B, n_k, h_kv d_k)
        seen.update(q=q, k=k, v=v)
        # split into heads: q (B, h, n_q, d_k), k and v (B, h_kv, n_k, d_k)
        q, k, v = split_heads(q, self.h), split_heads(k, self.n_kv_heads), split_heads(v, self.n_kv_heads)
        q, k, v = self.q_norm(q), self.k_norm(k), self.v_norm(v)  # 2017: no norms; shapes kept
        q, k = self.positions(q, k, start)  # at positions start, start + 1, ...; 2017: none in the layer
        seen["cache"] = cache = grow(cache, KVCache(k, v))  # cached tokens, then these: (B, h_kv, n_k, d_k)
        mask = self.band(mask, q, cache.k, cache.start)  # 2017: the mask as given
        if need_weights or self.why_not_fused:  # each group of h / h_kv query heads shares a key/value head
            k = cache.k.repeat_interleave(self.h // self.n_kv_heads, dim=1)  # (B, h, n_k, d_k)
            v = cache.v.repeat_interleave(self.h // self.n_kv_heads, dim=1)  # (B, h, n_k, d_k)
            scores = q @ k.transpose(-2, -1)  # (B, h, n_q, d_k) @ (B, h, d_k, n_k) -> (B, h, n_q, n_k)
            scaled = self.scores(scores * self.scale)  # 2017: divided by sqrt(d_k), nothing more
            masked = scaled if mask is None else scaled.masked_fill(~mask, float("-inf"))  # masked: weight 0
            weights = self.softmax(masked)  # (B, h, n_q, n_k), each row summing to 1
            weights = weights if mask is None else weights.masked_fill(~mask, 0.0)  # no key: zeros, not NaN
            heads = F.dropout(weights, self.dropout, self.training) @ v  # (B, h, n_q, d_k)
            seen.update(q_heads=q, k_heads=k, v_heads=v, scores=scores, scaled_scores=scaled, weights=weights)
        else:  # PyTorch's fused kernel: the same heads, no weights; enable_gqa shares the key/value heads
            dropout_p = self.dropout if self.training else 0.0
            kernel = {"dropout_p": dropout_p, "scale": self.scale, "enable_gqa": self.n_kv_heads != self.h}
            heads, weights = F.scaled_dot_product_attention(q, cache.k, cache.v, mask, **kernel), None
        concat = merge_heads(heads)  # (B, n_q, h d_k)
        out = self.W_o(self.gate(concat, query))  # (B, n_q, d_model); 2017: no gate
        seen.update(heads=heads, concat=concat, out=out)
        return out, weights if need_weights else None

    def decode(
        self, x: Tensor, cache: KVCache | None = None, *, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None, KVCache]:
        """Causal self-attention for new tokens, reusing the keys and values of the tokens before them.

        A decoder projects each token's key and value once and keeps them (the KV cache); a new token's query
        attends to all of them and to itself. This is ``forward`` with the cache and :func:`mha.causal_mask`,
        so token by token it gives exactly what ``forward`` gives for the whole sequence under that mask.

        Args:
            x: the new tokens, shape ``(B, n_new, d_model)``: a whole prompt at first, then one at a time.
            cache: the :class:`KVCache` returned by the previous call, or ``None`` at the start.
            need_weights: run the explicit path and return the weights ``(B, h, n_new, n_past + n_new)``;
                ``False`` (the default) runs PyTorch's fused kernel.

        Returns:
            ``(out, weights, cache)``: ``out`` of shape ``(B, n_new, d_model)``, the weights or ``None``, and
            the cache grown by ``n_new`` tokens, less what the band drops (a window keeps its last ``w``
            tokens, a chunk the current chunk's).

        Example:
            >>> attn = MultiHeadAttention(d_model=16, h=4, n_kv_heads=2).eval()
            >>> x = torch.randn(1, 5, 16)
            >>> out, _, cache = attn.decode(x[:, :4])  # the prompt
            >>> last, _, cache = attn.decode(x[:, 4:], cache)  # one more token
            >>> torch.allclose(last, attn(x, mask=causal_mask(5))[0][:, 4:], atol=1e-6)
            True
        """
        n_k = x.size(1) + check_kv_cache(cache, x, h_kv=self.n_kv_heads, d_k=self.d_k)  # cached, then new
        mask, seen = causal_mask(x.size(1), n_k, device=x.device), {}  # (n_new, n_k), aligned bottom-right
        out, weights = self(x, mask=mask, cache=cache, need_weights=need_weights, record=seen)
        return out, weights, self.band.trim(seen["cache"])

    @classmethod
    def from_torch(cls, module: nn.MultiheadAttention) -> MultiHeadAttention:
        """Build an equivalent module with weights copied from ``torch.nn.MultiheadAttention``.

        The copy always takes batch-first inputs ``(B, n, d_model)``, whatever ``module.batch_first`` is,
        and uses this package's mask convention (``True`` = may attend), the opposite of the boolean
        ``attn_mask`` of ``nn.MultiheadAttention``.

        Args:
            module: a ``torch.nn.MultiheadAttention`` with ``kdim == vdim == embed_dim``, no
                ``add_bias_kv`` and no ``add_zero_attn``.

        Returns:
            A ``MultiHeadAttention`` with the same dtype, device, dropout and weights.
        """
        if not isinstance(module, nn.MultiheadAttention):
            raise TypeError(f"module must be a torch.nn.MultiheadAttention, got {type(module).__name__}")
        if not module._qkv_same_embed_dim:
            raise ValueError("module must have kdim == vdim == embed_dim to be converted")
        if module.bias_k is not None or module.add_zero_attn:
            raise ValueError("module must not use add_bias_kv or add_zero_attn to be converted")
        bias = module.in_proj_bias is not None
        ours = cls(module.embed_dim, module.num_heads, bias=bias, dropout=module.dropout)
        ours.to(device=module.in_proj_weight.device, dtype=module.in_proj_weight.dtype)
        names = ("W_q", "W_k", "W_v")  # in_proj holds their three (d_model, d_model) weights, then W_o's
        state = {f"{n}.weight": w for n, w in zip(names, module.in_proj_weight.chunk(3), strict=True)}
        state["W_o.weight"] = module.out_proj.weight
        if bias:
            state.update({f"{n}.bias": b for n, b in zip(names, module.in_proj_bias.chunk(3), strict=True)})
            state["W_o.bias"] = module.out_proj.bias
        ours.load_state_dict(state)  # strict: every weight of ours, by name
        return ours.train(module.training)


class KeysAsValues(MultiHeadAttention):
    """A layer whose keys double as values (Gemma 4's full layers, ``attention_k_eq_v``): no ``W_v`` of its
    own; ``W_v`` is ``W_k``, so each head's value is its key projection, through ``v_norm`` instead of
    ``k_norm`` and without positions. Takes the arguments of :class:`MultiHeadAttention`.

    The cache holds keys and values apart (as transformers' does): a decoding step normalises and turns its
    new tokens only. The state dict lists the one projection under both names, ``W_k`` and ``W_v``.
    """

    def __init__(self, d_model: int, h: int, **options: object) -> None:
        super().__init__(d_model, h, **options)
        self.W_v = self.W_k  # the key projection, x W_k, serves the values too
