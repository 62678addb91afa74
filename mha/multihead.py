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

Today's layers are options of this one module, each ``None`` or ``False`` by default (the 2017 layer):
``head_dim``, ``rope_theta`` (rotary positions), ``qk_norm``, ``scale``, ``softcap``, ``window`` and
``sinks``. ``mha.pretrained.from_transformers`` builds Llama's, Qwen3's, Gemma 3's and gpt-oss's attention
from them, and the tests check each against transformers.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from mha._checks import (
    check_heads,
    check_layer_inputs,
    check_mask,
    check_positive_int,
    check_positive_number,
    check_probability,
    check_same_dtype_device,
)
from mha.attention import attention_steps
from mha.masks import causal_mask
from mha.positional import apply_rotary, rotary_tables


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


class KVCache(NamedTuple):
    """The keys and values of the tokens seen so far, per key/value head, as :meth:`MultiHeadAttention.decode`
    keeps them: ``k`` and ``v`` of shape ``(B, h_kv, n, d_k)`` (keys already rotated in a rotary layer).

    A sliding-window layer keeps only the last ``window`` tokens; ``start`` is the position of the first one
    held (0 until tokens fall out of the window), so the next token's position is ``start + n``.
    """

    k: torch.Tensor
    v: torch.Tensor
    start: int = 0

    @property
    def nbytes(self) -> int:
        """Bytes held: ``2 B h_kv n d_k`` elements, what :func:`mha.costs.kv_cache_bytes` counts per layer."""
        return self.k.nbytes + self.v.nbytes


def _grow(cache: KVCache | None, k: torch.Tensor, v: torch.Tensor) -> KVCache:
    """``cache`` with new keys and values ``(B, h_kv, n_new, d_k)`` appended along the sequence."""
    if cache is None:
        return KVCache(k, v)
    k, v = torch.cat([cache.k, k], dim=-2), torch.cat([cache.v, v], dim=-2)  # 2 x (B, h_kv, n, d_k)
    return KVCache(k, v, cache.start)


def _trim(cache: KVCache, window: int | None) -> KVCache:
    """``cache`` without the tokens that no later query sees through a sliding window of ``window`` keys."""
    n = cache.k.size(-2)
    if window is None or n <= window:
        return cache
    # clone: a slice would keep the whole storage alive, and nbytes would undercount it
    k, v = cache.k[..., -window:, :].clone(), cache.v[..., -window:, :].clone()  # 2 x (B, h_kv, window, d_k)
    return KVCache(k, v, cache.start + n - window)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with optional grouped-query heads and the options of today's decoders.

    Args:
        d_model: width of the input and output vectors.
        h: number of attention heads; must divide ``d_model`` unless ``head_dim`` is given.
        n_kv_heads: number of key/value heads for grouped-query attention; must divide ``h``. ``None``
            (the default) means ``h``: ordinary multi-head attention. ``1`` is multi-query attention.
        head_dim: the head width ``d_k``, when a model sets it apart from ``d_model / h`` (Gemma, gpt-oss,
            Qwen3-30B-A3B); ``None`` means ``d_model / h``.
        bias: whether the four projections have biases.
        dropout: dropout probability on the attention weights, applied in training mode only.
        rope_theta: rotary position embeddings with this base (Su et al. 2021; half-split pairs, as Llama and
            transformers): queries and keys at positions ``0 .. n-1``, offset by the cache when decoding.
            ``None``: no positions in the layer. Needs an even ``d_k``.
        qk_norm: an RMSNorm over each head's query and key (``q_norm``, ``k_norm``: ``nn.RMSNorm(d_k)``,
            eps 1e-6), before the rotation (Qwen3, Gemma 3, OLMo 2). Gemma's ``x_hat (1 + w)`` is this norm
            with weight ``1 + w``.
        scale: the factor on ``q k^T``; ``None`` means ``1 / sqrt(d_k)`` (Gemma: ``query_pre_attn_scalar``
            to the power -1/2).
        softcap: logit soft-capping ``c tanh(s / c)`` of the scaled scores (Gemma 2).
        window: a sliding window: query ``i`` sees keys ``j`` with ``i - w < j <= i`` (``w`` keys, itself
            included), on top of the mask it is given; :meth:`decode` keeps only the last ``w`` keys.
        sinks: one learned logit per head (``sinks``, shape ``(h,)``) that joins each softmax and is then
            dropped, so a head may attend to nothing (gpt-oss).

    Attributes:
        W_q: ``nn.Linear(d_model, h * d_k)``, the ``h`` query projections side by side.
        W_k: ``nn.Linear(d_model, n_kv_heads * d_k)``, the key projections.
        W_v: ``nn.Linear(d_model, n_kv_heads * d_k)``, the value projections.
        W_o: ``nn.Linear(h * d_k, d_model)``, the output projection.
        q_norm, k_norm, sinks: with ``qk_norm`` and ``sinks`` only, else ``None``.

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
        qk_norm: bool = False,
        scale: float | None = None,
        softcap: float | None = None,
        window: int | None = None,
        sinks: bool = False,
    ) -> None:
        super().__init__()
        h, n_kv_heads, d_k = check_heads(d_model, h, n_kv_heads, head_dim=head_dim)
        check_probability("dropout", dropout)
        for name, value in (("rope_theta", rope_theta), ("scale", scale), ("softcap", softcap)):
            if value is not None:
                check_positive_number(name, value)
        if rope_theta is not None and d_k % 2:
            raise ValueError(f"rope_theta (rotary embeddings) needs an even head width d_k, got d_k={d_k}")
        self.d_model, self.h, self.n_kv_heads, self.d_k = d_model, h, n_kv_heads, d_k
        self.dropout = dropout
        self.rope_theta, self.scale, self.softcap = rope_theta, scale, softcap
        self.window = None if window is None else check_positive_int("window", window)
        self.W_q = nn.Linear(d_model, h * d_k, bias=bias)
        self.W_k = nn.Linear(d_model, n_kv_heads * d_k, bias=bias)
        self.W_v = nn.Linear(d_model, n_kv_heads * d_k, bias=bias)
        self.W_o = nn.Linear(h * d_k, d_model, bias=bias)
        self.q_norm = nn.RMSNorm(d_k, eps=1e-6) if qk_norm else None
        self.k_norm = nn.RMSNorm(d_k, eps=1e-6) if qk_norm else None
        self.sinks = nn.Parameter(torch.zeros(h)) if sinks else None

    def extra_repr(self) -> str:
        kv = f", n_kv_heads={self.n_kv_heads}" if self.n_kv_heads != self.h else ""
        options = [f"{name}={getattr(self, name)}" for name in ("rope_theta", "scale", "softcap", "window")]
        options = "".join(f", {o}" for o in options if not o.endswith("=None"))
        return f"d_model={self.d_model}, h={self.h}{kv}, d_k={self.d_k}, dropout={self.dropout}{options}"

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        *,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: shape ``(B, n_q, d_model)``.
            key: shape ``(B, n_k, d_model)``; defaults to ``query`` (self-attention).
            value: shape ``(B, n_k, d_model)``; defaults to ``key``.
            mask: optional boolean tensor, ``True`` where a query may attend to a key, broadcastable to
                ``(B, h, n_q, n_k)``; see :func:`mha.causal_mask` and :func:`mha.padding_mask`.
            need_weights: ``True`` (the default) runs the explicit path and returns the weights;
                ``False`` runs PyTorch's fused ``scaled_dot_product_attention`` and returns ``None``
                for them.

        Returns:
            ``(out, weights)``: ``out`` of shape ``(B, n_q, d_model)`` and the per-head attention weights of
            shape ``(B, h, n_q, n_k)``, or ``None`` when ``need_weights=False``.
        """
        if need_weights:
            steps = self.steps(query, key, value, mask)
            return steps["out"], steps["weights"]  # (B, n_q, d_model), (B, h, n_q, n_k)
        out, _ = self._fused(query, key, value, mask, None)
        return out, None

    def decode(
        self, x: torch.Tensor, cache: KVCache | None = None, *, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None, KVCache]:
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
            the cache grown by ``n_new`` tokens (with a ``window``, only its last ``window`` tokens).

        Example:
            >>> attn = MultiHeadAttention(d_model=16, h=4, n_kv_heads=2).eval()
            >>> x = torch.randn(1, 5, 16)
            >>> out, _, cache = attn.decode(x[:, :4])  # the prompt
            >>> last, _, cache = attn.decode(x[:, 4:], cache)  # one more token
            >>> torch.allclose(last, attn(x, mask=causal_mask(5))[0][:, 4:], atol=1e-6)
            True
        """
        check_layer_inputs(x, x, x, d_model=self.d_model, weight=self.W_q.weight)
        n_past = 0 if cache is None else self._check_cache(cache, x)
        mask = causal_mask(x.size(1), n_past + x.size(1), device=x.device)  # (n_new, n_past + n_new)
        if need_weights:
            steps = self.steps(x, mask=mask, cache=cache)
            return steps["out"], steps["weights"], steps["cache"]
        out, new_cache = self._fused(x, None, None, mask, cache)
        return out, None, new_cache

    def steps(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None = None,
        value: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        *,
        cache: KVCache | None = None,
    ) -> dict[str, torch.Tensor]:
        """The explicit forward pass, keeping every intermediate tensor; ``forward`` returns two of them.

        Takes the arguments of :meth:`forward` (and a ``cache`` from :meth:`decode`, whose keys and values
        come before those of ``key`` and ``value``). ``forward(..., need_weights=True)`` is this method, so
        a view of the stages (``mha.compute.stages``) shows the forward pass itself.

        Returns:
            A dict, in the order of computation: ``q``, ``k``, ``v`` (the projections, ``(B, n_q, h d_k)``
            and ``(B, n_k, h_kv d_k)``); with ``qk_norm``, ``q_normed`` ``(B, h, n_q, d_k)`` and ``k_normed``
            ``(B, h_kv, n_k, d_k)``; with ``rope_theta``, ``q_rotated`` and ``k_rotated`` (same shapes);
            ``q_heads`` ``(B, h, n_q, d_k)``, ``k_heads``, ``v_heads`` ``(B, h, n_k, d_k)`` (the queries, keys
            and values attended with, cached ones included and grouped-query heads repeated for their query
            heads), ``scores`` and ``scaled_scores`` ``(B, h, n_q, n_k)``, ``weights`` ``(B, h, n_q, n_k)``;
            with ``sinks``, ``sink`` ``(B, h, n_q)``, each row's weight on its sink; ``heads``
            ``(B, h, n_q, d_k)``, ``concat`` ``(B, n_q, h d_k)``, ``out`` ``(B, n_q, d_model)``, and
            ``cache``, the :class:`KVCache` for the next :meth:`decode` call.
        """
        steps: dict[str, torch.Tensor] = {}
        q_heads, cache, mask = self._before_scores(query, key, value, mask, cache, steps)
        # Each group of h / h_kv query heads shares one key/value head.
        group = self.h // self.n_kv_heads
        k_heads = cache.k.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
        v_heads = cache.v.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
        options = {"scale": self.scale, "softcap": self.softcap, "sinks": self.sinks}
        attention = attention_steps(q_heads, k_heads, v_heads, mask, dropout_p=self._dropout_p(), **options)
        concat = merge_heads(attention["out"])  # (B, n_q, h d_k)
        steps.update(q_heads=q_heads, k_heads=k_heads, v_heads=v_heads)
        names = ("scores", "scaled_scores", "weights", "sink")  # (B, h, n_q, n_k) each, sink (B, h, n_q)
        steps.update((name, attention[name]) for name in names if name in attention)
        steps.update(heads=attention["out"], concat=concat, out=self.W_o(concat))  # out: (B, n_q, d_model)
        return {**steps, "cache": _trim(cache, self.window)}

    def _fused(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None,
        value: torch.Tensor | None,
        mask: torch.Tensor | None,
        cache: KVCache | None,
    ) -> tuple[torch.Tensor, KVCache]:
        """The fused path: PyTorch's kernel, same maths, no weights materialised for the caller."""
        if self.softcap is not None or self.sinks is not None:  # options the kernel does not have
            steps = self.steps(query, key, value, mask, cache=cache)
            return steps["out"], steps["cache"]
        q_heads, cache, mask = self._before_scores(query, key, value, mask, cache, {})
        heads = F.scaled_dot_product_attention(
            q_heads,
            cache.k,
            cache.v,
            attn_mask=mask,
            dropout_p=self._dropout_p(),
            scale=self.scale,
            enable_gqa=self.n_kv_heads != self.h,
        )  # (B, h, n_q, d_k)
        return self.W_o(merge_heads(heads)), _trim(cache, self.window)  # (B, n_q, d_model)

    def _before_scores(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None,
        value: torch.Tensor | None,
        mask: torch.Tensor | None,
        cache: KVCache | None,
        steps: dict[str, torch.Tensor],
    ) -> tuple[torch.Tensor, KVCache, torch.Tensor | None]:
        """Check the inputs, project, split into heads, normalise, rotate, grow the cache, add the window.

        Records ``q``, ``k``, ``v`` and the normalised and rotated queries and keys in ``steps``. Returns
        the queries ``(B, h, n_q, d_k)``, the cache of every key and value to attend to (``(B, h_kv, n_k,
        d_k)``, the window not yet applied) and the mask with the window on top.
        """
        key, value, mask = self._checked(query, key, value, mask, cache)
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)  # (B, n_q, h d_k), 2 x (B, n_k, h_kv d_k)
        steps.update(q=q, k=k, v=v)
        q = split_heads(q, self.h)  # (B, h, n_q, d_k)
        k = split_heads(k, self.n_kv_heads)  # (B, h_kv, n_k, d_k)
        if self.q_norm is not None:  # each head's query and key over its root mean square, times a weight
            q, k = self.q_norm(q), self.k_norm(k)  # (B, h, n_q, d_k), (B, h_kv, n_k, d_k)
            steps.update(q_normed=q, k_normed=k)
        if self.rope_theta is not None:  # the new tokens sit after those in the cache
            n, offset = max(q.size(-2), k.size(-2)), 0 if cache is None else cache.start + cache.k.size(-2)
            cos, sin = rotary_tables(
                n, self.d_k, theta=self.rope_theta, offset=offset, dtype=q.dtype, device=q.device
            )
            q = apply_rotary(q, cos[: q.size(-2)], sin[: q.size(-2)])  # (B, h, n_q, d_k)
            k = apply_rotary(k, cos[: k.size(-2)], sin[: k.size(-2)])  # (B, h_kv, n_k, d_k)
            steps.update(q_rotated=q, k_rotated=k)
        cache = _grow(cache, k, split_heads(v, self.n_kv_heads))  # (B, h_kv, n_past + n_k, d_k) each
        if self.window is not None:
            window = causal_mask(q.size(-2), cache.k.size(-2), window=self.window, device=q.device)
            mask = window if mask is None else mask & window  # (n_q, n_k) or broadcast to (B, h, n_q, n_k)
        return q, cache, mask

    def _check_cache(self, cache: object, x: torch.Tensor) -> int:
        """Check a cache against this module and the new tokens ``x``; return its length ``n_past``."""
        if not isinstance(cache, KVCache):
            raise TypeError(
                f"cache must be the KVCache that decode returned, or None, got {type(cache).__name__}"
            )
        n_past = cache.k.size(-2) if cache.k.dim() == 4 else -1
        expected = (x.size(0), self.n_kv_heads, n_past, self.d_k)
        for name, t in (("cache.k", cache.k), ("cache.v", cache.v)):
            if tuple(t.shape) != expected:
                raise ValueError(
                    f"{name} must have shape (B, h_kv, n_past, d_k) = {expected} for this module and x, "
                    f"got {tuple(t.shape)}"
                )
        check_same_dtype_device(x=x, cache_k=cache.k, cache_v=cache.v)
        return n_past

    def _dropout_p(self) -> float:
        return self.dropout if self.training else 0.0

    def _checked(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None,
        value: torch.Tensor | None,
        mask: torch.Tensor | None,
        cache: KVCache | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Fill in the defaults for ``key`` and ``value``, check all inputs, and return them."""
        key = query if key is None else key
        value = key if value is None else value
        check_layer_inputs(query, key, value, d_model=self.d_model, weight=self.W_q.weight)
        n_k = key.size(1) + (0 if cache is None else self._check_cache(cache, query))
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
