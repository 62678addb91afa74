"""Multi-head attention as an ``nn.Module``, with the paper's names.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o`` where
``head_i = Attention(Q W_q^i, K W_k^i, V W_v^i)`` (Vaswani et al. 2017, section 3.2.2).
The ``h`` per-head projections are stored side by side in one ``nn.Linear`` each for Q, K and V, which is
the same thing as ``h`` separate matrices (the chapter "The math" checks this numerically).

Shape legend:
    B        batch size
    n_q      number of queries (target length)
    n_k      number of keys and values (source length)
    d_model  model width, the size of each input and output vector
    h        number of query heads
    h_kv     number of key/value heads (``n_kv_heads``; ``h`` for ordinary multi-head attention)
    d_k      width of each head: d_model / h, unless a model sets it apart (``head_dim``); d_v = d_k here

Today's layers are options of this one module, each off by default (the 2017 layer): a head width, rotary
positions (partial, interleaved, proportional), norms of queries, keys and values, keys as values, an output
gate, a scale, soft-capping, windows, chunks, sinks and a temperature. ``mha.pretrained.from_transformers``
builds the attention of Llama, Qwen3, Qwen3-Next, Qwen3.5, Gemma 3, Gemma 4, gpt-oss and Llama 4 from them,
and the tests check each against transformers.
"""

from __future__ import annotations

from typing import TypedDict

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from mha._checks import (
    check_cache,
    check_choice,
    check_heads,
    check_layer_inputs,
    check_mask,
    check_numbers,
    check_positive_int,
    check_positive_number,
    check_probability,
    check_rotary_width,
)
from mha.attention import Projected, attention_steps
from mha.cache import KVCache, grow, trim
from mha.masks import causal_mask
from mha.positional import rotate


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


class AttentionSteps(TypedDict, total=False):
    """What :meth:`MultiHeadAttention.steps` returns, in the order of computation; a key is missing where its
    option is off or its path did not compute it (``fused``). With ``k_eq_v``, ``k`` and ``v`` are both the
    key projection, and from ``k_normed`` on, keys and values cover the cached tokens too."""

    q: Tensor  # (B, n_q, h d_k), the projections
    k: Tensor  # (B, n_k, h_kv d_k)
    v: Tensor  # (B, n_k, h_kv d_k)
    q_normed: Tensor  # (B, h, n_q, d_k), with qk_norm
    k_normed: Tensor  # (B, h_kv, n_k, d_k)
    v_normed: Tensor  # (B, h_kv, n_k, d_k), with v_norm
    q_rotated: Tensor  # (B, h, n_q, d_k), with rope_theta
    k_rotated: Tensor  # (B, h_kv, n_k, d_k)
    temperature: Tensor  # (n_q,), with temperature: each query's factor
    q_heads: Tensor  # (B, h, n_q, d_k), the queries attended with
    k_heads: Tensor  # (B, h, n_k, d_k): cached keys included, grouped-query heads repeated for their queries
    v_heads: Tensor  # (B, h, n_k, d_k)
    scores: Tensor  # (B, h, n_q, n_k), q k^T
    scaled_scores: Tensor  # (B, h, n_q, n_k), scaled (and capped)
    sink: Tensor  # (B, h, n_q), with sinks: each row's weight on its sink, from the softmax of the weights
    weights: Tensor  # (B, h, n_q, n_k), after the softmax and the mask
    heads: Tensor  # (B, h, n_q, d_k), each head's output
    concat: Tensor  # (B, n_q, h d_k), the heads side by side
    gate: Tensor  # (B, n_q, h d_k), with gate: sigmoid(x W_g), what multiplies concat
    out: Tensor  # (B, n_q, d_model)
    cache: KVCache  # for the next decode call


class MultiHeadAttention(nn.Module):
    """Multi-head attention with optional grouped-query heads and the options of today's decoders.

    Args:
        d_model: width of the input and output vectors.
        h: number of attention heads; must divide ``d_model`` unless ``head_dim`` is given.
        n_kv_heads: number of key/value heads for grouped-query attention; must divide ``h``. ``None``
            (the default) means ``h``: ordinary multi-head attention. ``1`` is multi-query attention.
        head_dim: the head width ``d_k``, when a model sets it apart from ``d_model / h`` (Gemma, gpt-oss,
            Qwen3-30B-A3B); ``None`` means ``d_model / h``.
        bias: whether the projections have biases.
        dropout: dropout probability on the attention weights, applied in training mode only.
        rope_theta: rotary position embeddings with this base (Su et al. 2021; half-split pairs, as Llama and
            transformers): queries and keys at positions ``0 .. n-1``, offset by the cache when decoding.
            ``None``: no positions in the layer (Llama 4's NoPE layers).
        rope_fraction: partial rotary: the share of each head that turns, its first ``fraction d_k``
            coordinates (an even number; Qwen3-Next 0.25); the rest carry no position.
        rope_style: ``"half-split"`` (the default), ``"interleaved"`` (pairs of neighbours, Llama 4) or
            ``"proportional"`` (Gemma 4: pairs across the whole head, only the first ``fraction d_k / 2`` of
            them turning, at the frequencies of a full rotary); :func:`mha.positional.rotary_tables` draws
            the three.
        qk_norm: an RMSNorm over each head's query and key (``q_norm``, ``k_norm``: ``nn.RMSNorm(d_k)``,
            eps 1e-6), before the rotation (Qwen3, Gemma 3, OLMo 2). Gemma 3's ``x_hat (1 + w)`` is this norm
            with weight ``1 + w``. ``"weightless"``: the norm without a weight (Llama 4, which normalises
            after its rotation; a rotation keeps lengths, so the two orders agree).
        v_norm: a weightless RMSNorm over each head's value (``v_norm``, Gemma 4).
        k_eq_v: keys double as values (Gemma 4's full layers): no ``W_v``; each head's value is its key
            projection before the key's norm and rotation (after ``v_norm``). :meth:`decode` then caches one
            tensor per token, not two.
        gate: an output gate (Qwen3-Next, Qwen3.5; Qiu et al. 2025): the merged heads are multiplied by
            ``sigmoid(x W_g)``, one gate per head coordinate, before ``W_o``.
        scale: the factor on ``q k^T``; ``None`` means ``1 / sqrt(d_k)`` (Gemma 3: ``query_pre_attn_scalar``
            to the power -1/2; Gemma 4: 1).
        softcap: logit soft-capping ``c tanh(s / c)`` of the scaled scores (Gemma 2).
        window: a sliding window: query ``i`` sees keys ``j`` with ``i - w < j <= i`` (``w`` keys, itself
            included), on top of the mask it is given; :meth:`decode` keeps only the last ``w`` keys.
        chunk: chunked attention (Llama 4): a query sees the earlier keys of its own chunk of ``chunk``
            positions (aligned to position 0), on top of the mask it is given; :meth:`decode` keeps only
            the current chunk.
        sinks: one learned logit per head (``sinks``, shape ``(h,)``) that joins each softmax and is then
            dropped, so a head may attend to nothing (gpt-oss).
        temperature: Llama 4's attention-temperature tuning of its NoPE layers, ``(floor_scale,
            attn_scale)``: the query at position ``p`` is multiplied by
            ``1 + attn_scale log(1 + floor((p + 1) / floor_scale))``, exactly 1 below ``floor_scale - 1``.

    Attributes:
        W_q: ``nn.Linear(d_model, h * d_k)``, the ``h`` query projections side by side.
        W_k: ``nn.Linear(d_model, n_kv_heads * d_k)``, the key projections.
        W_v: ``nn.Linear(d_model, n_kv_heads * d_k)``, the value projections (``None`` with ``k_eq_v``).
        W_o: ``nn.Linear(h * d_k, d_model)``, the output projection.
        W_g, q_norm, k_norm, v_norm, sinks: with ``gate``, ``qk_norm``, ``v_norm``, ``sinks``, else ``None``.

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
        rope_theta: float | None = None,
        rope_fraction: float = 1.0,
        rope_style: str = "half-split",
        qk_norm: bool | str = False,
        v_norm: bool = False,
        k_eq_v: bool = False,
        gate: bool = False,
        scale: float | None = None,
        softcap: float | None = None,
        window: int | None = None,
        chunk: int | None = None,
        sinks: bool = False,
        temperature: tuple[float, float] | None = None,
    ) -> None:
        super().__init__()
        h, n_kv_heads, d_k = check_heads(d_model, h, n_kv_heads, head_dim=head_dim)
        check_probability("dropout", dropout)
        for name, value in (("rope_theta", rope_theta), ("scale", scale), ("softcap", softcap)):
            if value is not None:
                check_positive_number(name, value)
        if rope_theta is not None:
            check_rotary_width(d_k, rope_fraction)
        elif (rope_fraction, rope_style) != (1.0, "half-split"):
            raise ValueError(f"rope_fraction={rope_fraction} and rope_style={rope_style!r} need rope_theta")
        check_choice("rope_style", rope_style, ("half-split", "interleaved", "proportional"))
        check_choice("qk_norm", qk_norm, (False, True, "weightless"))
        if temperature is not None:
            temperature = check_numbers("temperature", temperature, "(floor_scale, attn_scale)")
        self.d_model, self.h, self.n_kv_heads, self.d_k = d_model, h, n_kv_heads, d_k
        self.dropout, self.scale, self.softcap, self.temperature = dropout, scale, softcap, temperature
        self.rope_theta, self.rope_fraction, self.rope_style = rope_theta, rope_fraction, rope_style
        self.window = None if window is None else check_positive_int("window", window)
        self.chunk = None if chunk is None else check_positive_int("chunk", chunk)
        self.W_q = nn.Linear(d_model, h * d_k, bias=bias)
        self.W_k = nn.Linear(d_model, n_kv_heads * d_k, bias=bias)
        self.W_v = None if k_eq_v else nn.Linear(d_model, n_kv_heads * d_k, bias=bias)
        self.W_o = nn.Linear(h * d_k, d_model, bias=bias)
        self.W_g = nn.Linear(d_model, h * d_k, bias=bias) if gate else None
        weighted = qk_norm is True
        self.q_norm = nn.RMSNorm(d_k, eps=1e-6, elementwise_affine=weighted) if qk_norm else None
        self.k_norm = nn.RMSNorm(d_k, eps=1e-6, elementwise_affine=weighted) if qk_norm else None
        self.v_norm = nn.RMSNorm(d_k, eps=1e-6, elementwise_affine=False) if v_norm else None
        self.sinks = nn.Parameter(torch.zeros(h)) if sinks else None

    def extra_repr(self) -> str:
        kv = f", n_kv_heads={self.n_kv_heads}" if self.n_kv_heads != self.h else ""
        options = {"rope_theta": None, "rope_fraction": 1.0, "rope_style": "half-split", "scale": None}
        options.update(softcap=None, window=None, chunk=None, temperature=None)
        changed = [
            f", {k}={getattr(self, k)!r}" for k, default in options.items() if getattr(self, k) != default
        ]
        changed = "".join(changed + ([", k_eq_v=True"] if self.W_v is None else []))
        return f"d_model={self.d_model}, h={self.h}{kv}, d_k={self.d_k}, dropout={self.dropout}{changed}"

    @property
    def why_not_fused(self) -> str:
        """Why ``need_weights=False`` runs the explicit path after all: the options PyTorch's fused kernel
        lacks (soft-capping, sinks), named; ``""`` when the kernel runs (``nn.MultiheadAttention`` keeps such
        a reason too, ``why_not_fast_path``)."""
        lacking = (name for name in ("softcap", "sinks") if getattr(self, name) is not None)
        return "; ".join(f"{name} is set: PyTorch's kernel has no {name}" for name in lacking)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        need_weights: bool = True,
    ) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: shape ``(B, n_q, d_model)``.
            key: shape ``(B, n_k, d_model)``; defaults to ``query`` (self-attention).
            value: shape ``(B, n_k, d_model)``; defaults to ``key``.
            mask: optional boolean tensor, ``True`` where a query may attend to a key, broadcastable to
                ``(B, h, n_q, n_k)``; see :func:`mha.causal_mask` and :func:`mha.padding_mask`.
            need_weights: ``True`` (the default) runs the explicit path and returns the weights;
                ``False`` runs PyTorch's fused ``scaled_dot_product_attention`` (unless
                :attr:`why_not_fused` says why not) and returns ``None`` for them.

        Returns:
            ``(out, weights)``: ``out`` of shape ``(B, n_q, d_model)`` and the per-head attention weights of
            shape ``(B, h, n_q, n_k)``, or ``None`` when ``need_weights=False``.
        """
        steps = self.steps(query, key, value, mask, fused=not need_weights)
        return steps["out"], steps["weights"] if need_weights else None  # (B, n_q, d_model), (B, h, n_q, n_k)

    def decode(
        self, x: Tensor, cache: KVCache | None = None, *, need_weights: bool = False
    ) -> tuple[Tensor, Tensor | None, KVCache]:
        """Causal self-attention for new tokens, reusing the keys and values of the tokens before them.

        Generating text one token at a time, a decoder projects each token's key and value once and keeps
        them (the KV cache); a new token's query attends to all of them and to itself. Token by token this
        gives exactly what ``forward`` gives for the whole sequence under :func:`mha.causal_mask`.

        Args:
            x: the new tokens, shape ``(B, n_new, d_model)``: a whole prompt at first, then one at a time.
            cache: the :class:`KVCache` returned by the previous call, or ``None`` at the start.
            need_weights: run the explicit path and return the weights ``(B, h, n_new, n_past + n_new)``;
                ``False`` (the default) runs PyTorch's fused kernel.

        Returns:
            ``(out, weights, cache)``: ``out`` of shape ``(B, n_new, d_model)``, the weights or ``None``, and
            the cache grown by ``n_new`` tokens (with a ``window``, only its last ``window`` tokens; with a
            ``chunk``, only the current chunk's).

        Example:
            >>> attn = MultiHeadAttention(d_model=16, h=4, n_kv_heads=2).eval()
            >>> x = torch.randn(1, 5, 16)
            >>> out, _, cache = attn.decode(x[:, :4])  # the prompt
            >>> last, _, cache = attn.decode(x[:, 4:], cache)  # one more token
            >>> torch.allclose(last, attn(x, mask=causal_mask(5))[0][:, 4:], atol=1e-6)
            True
        """
        steps = self.steps(x, cache=cache, causal=True, fused=not need_weights)
        return steps["out"], steps["weights"] if need_weights else None, steps["cache"]

    def steps(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        *,
        cache: KVCache | None = None,
        causal: bool = False,
        fused: bool = False,
    ) -> AttentionSteps:
        """The forward pass, keeping every intermediate tensor; ``forward`` and ``decode`` return a few.

        Takes the arguments of :meth:`forward`, and a ``cache`` from :meth:`decode`, whose keys and values
        come before those of ``key`` and ``value``. The explicit and the fused path differ only in how the
        heads are computed; everything before and after is this one method, so a view of the stages
        (``mha.compute.stages``) shows the forward pass itself.

        Args:
            causal: put :func:`mha.causal_mask` ``(n_q, n_k)`` (cached keys counted) on top of ``mask``.
            fused: compute the heads with PyTorch's fused kernel (unless :attr:`why_not_fused` says why not),
                which keeps no per-head scores or weights.

        Returns:
            The intermediates in the order of computation (:class:`AttentionSteps` gives the keys and shapes).
        """
        p = self._project(query, key, value, mask, cache, causal)
        dropout_p = self.dropout if self.training else 0.0
        if fused and not self.why_not_fused:  # grouped-query heads: enable_gqa shares each key/value head
            kernel = {"attn_mask": p.mask, "dropout_p": dropout_p, "scale": self.scale}
            heads = F.scaled_dot_product_attention(
                p.q, p.k, p.v, **kernel, enable_gqa=self.n_kv_heads != self.h
            )
            attention = {}  # heads: (B, h, n_q, d_k)
        else:  # each group of h / h_kv query heads shares one key/value head
            group = self.h // self.n_kv_heads
            k_heads = p.k.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
            v_heads = p.v.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
            options = {"scale": self.scale, "softcap": self.softcap, "sinks": self.sinks}
            attention = attention_steps(p.q, k_heads, v_heads, p.mask, dropout_p=dropout_p, **options)
            heads = attention.pop("out")  # (B, h, n_q, d_k); scores, scaled_scores, weights (B, h, n_q, n_k)
            attention = {"q_heads": p.q, "k_heads": k_heads, "v_heads": v_heads, **attention}
        concat = merge_heads(heads)  # (B, n_q, h d_k)
        gate = {} if self.W_g is None else {"gate": torch.sigmoid(self.W_g(query))}  # (B, n_q, h d_k)
        out = self.W_o(concat * gate["gate"] if gate else concat)  # (B, n_q, d_model)
        tail = {
            "heads": heads,
            "concat": concat,
            **gate,
            "out": out,
            "cache": trim(p.cache, self.window, self.chunk),
        }
        return {**p.steps, **attention, **tail}

    def _project(
        self,
        query: Tensor,
        key: Tensor | None,
        value: Tensor | None,
        mask: Tensor | None,
        cache: KVCache | None,
        causal: bool,
    ) -> Projected:
        """Check the inputs; project, split into heads, normalise, rotate; grow the cache; add the masks."""
        key, value, mask = self._checked(query, key, value, mask, cache)
        start = 0 if cache is None else cache.start  # the position of the first token the cache holds
        q_start = k_start = start + (0 if cache is None else cache.k.size(-2))  # the new tokens' first
        q, k = self.W_q(query), self.W_k(key)  # (B, n_q, h d_k), (B, n_k, h_kv d_k)
        v = k if self.W_v is None else self.W_v(value)  # (B, n_k, h_kv d_k)
        steps = {"q": q, "k": k, "v": v}
        q, k, v = split_heads(q, self.h), split_heads(k, self.n_kv_heads), split_heads(v, self.n_kv_heads)
        if self.W_v is None:  # keys as values: keys and values come from the cached projections of all tokens
            cache, k_start = grow(cache, KVCache(k, None)), start
            k = v = cache.k  # (B, h_kv, n_past + n_k, d_k)
        if self.q_norm is not None:  # each head's query and key over its root mean square (times a weight)
            q, k = self.q_norm(q), self.k_norm(k)  # (B, h, n_q, d_k), (B, h_kv, n_k, d_k)
            steps.update(q_normed=q, k_normed=k)
        if self.v_norm is not None:
            v = steps["v_normed"] = self.v_norm(v)  # (B, h_kv, n_k, d_k)
        if self.rope_theta is not None:  # the new tokens sit after those in the cache
            options = {"theta": self.rope_theta, "fraction": self.rope_fraction, "style": self.rope_style}
            q, k = rotate(q, q_start, **options), rotate(k, k_start, **options)  # shapes kept
            steps.update(q_rotated=q, k_rotated=k)
        if self.temperature is not None:  # Llama 4: queries sharpen as their position grows
            floor_scale, attn_scale = self.temperature
            position = torch.arange(q_start, q_start + q.size(-2), dtype=q.dtype, device=q.device)  # (n_q,)
            tempered = 1 + attn_scale * torch.log1p(torch.floor((position + 1) / floor_scale))  # (n_q,)
            q = q * tempered[:, None]  # (B, h, n_q, d_k)
            steps["temperature"] = tempered
        if self.W_v is not None:
            cache = grow(cache, KVCache(k, v))  # (B, h_kv, n_past + n_k, d_k) each
            k, v = cache.k, cache.v
        n_q, n_k = q.size(-2), k.size(-2)
        if causal or self.window is not None or self.chunk is not None:  # causal bands: windows and chunks
            band = causal_mask(n_q, n_k, window=self.window, chunk=self.chunk, start=start, device=q.device)
            mask = band if mask is None else mask & band  # (n_q, n_k) or broadcast to (B, h, n_q, n_k)
        return Projected(q, k, v, mask, cache, steps)

    def _checked(
        self,
        query: Tensor,
        key: Tensor | None,
        value: Tensor | None,
        mask: Tensor | None,
        cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """Fill in the defaults for ``key`` and ``value``, check all inputs, and return them."""
        key = query if key is None else key
        value = key if value is None else value
        check_layer_inputs(query, key, value, d_model=self.d_model, weight=self.W_q.weight)
        shape = ("(B, h_kv, n_past, d_k)", (query.size(0), self.n_kv_heads, None, self.d_k))
        values = ("be None: keys double as values (k_eq_v)", None) if self.W_v is None else shape
        n_k = key.size(1) + (
            0 if cache is None else check_cache(cache, KVCache, query, {"k": shape, "v": values})
        )
        if mask is not None:
            check_mask(mask, (query.size(0), self.h, query.size(1), n_k), "(B, h, n_q, n_k)")
        return key, value, mask

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
        d_model, h = module.embed_dim, module.num_heads
        bias = module.in_proj_bias is not None
        ours = cls(d_model, h, bias=bias, dropout=module.dropout)
        ours.to(device=module.in_proj_weight.device, dtype=module.in_proj_weight.dtype)
        with torch.no_grad():
            w_q, w_k, w_v = module.in_proj_weight.chunk(3, dim=0)  # 3 x (d_model, d_model)
            for linear, weight in ((ours.W_q, w_q), (ours.W_k, w_k), (ours.W_v, w_v)):
                linear.weight.copy_(weight)
            ours.W_o.weight.copy_(module.out_proj.weight)
            if bias:
                b_q, b_k, b_v = module.in_proj_bias.chunk(3)  # 3 x (d_model,)
                for linear, b in ((ours.W_q, b_q), (ours.W_k, b_k), (ours.W_v, b_v)):
                    linear.bias.copy_(b)
                ours.W_o.bias.copy_(module.out_proj.bias)
        return ours.train(module.training)
