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
    d_k      width of each head, d_model / h (d_v = d_k here)
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from mha._checks import check_float_tensor, check_heads, check_mask, check_same_dtype_device
from mha.attention import attention_steps
from mha.masks import causal_mask


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
    keeps them: ``k`` and ``v`` of shape ``(B, h_kv, n, d_k)``."""

    k: torch.Tensor
    v: torch.Tensor

    @property
    def nbytes(self) -> int:
        """Bytes held: ``2 B h_kv n d_k`` elements, what :func:`mha.costs.kv_cache_bytes` counts per layer."""
        return self.k.nbytes + self.v.nbytes


def _grow(cache: KVCache | None, k: torch.Tensor, v: torch.Tensor) -> KVCache:
    """``cache`` with new keys and values ``(B, h_kv, n_new, d_k)`` appended along the sequence."""
    if cache is None:
        return KVCache(k, v)
    return KVCache(torch.cat([cache.k, k], dim=-2), torch.cat([cache.v, v], dim=-2))  # (B, h_kv, n, d_k)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with optional grouped-query heads.

    Args:
        d_model: width of the input and output vectors.
        h: number of attention heads; must divide ``d_model``.
        n_kv_heads: number of key/value heads for grouped-query attention; must divide ``h``. ``None``
            (the default) means ``h``: ordinary multi-head attention. ``1`` is multi-query attention.
        bias: whether the four projections have biases.
        dropout: dropout probability on the attention weights, applied in training mode only.

    Attributes:
        W_q: ``nn.Linear(d_model, d_model)``, the ``h`` query projections side by side.
        W_k: ``nn.Linear(d_model, n_kv_heads * d_k)``, the key projections.
        W_v: ``nn.Linear(d_model, n_kv_heads * d_k)``, the value projections.
        W_o: ``nn.Linear(d_model, d_model)``, the output projection.

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
        bias: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        h, n_kv_heads, _ = check_heads(d_model, h, n_kv_heads)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
        self.d_model, self.h, self.n_kv_heads = d_model, h, n_kv_heads
        self.d_k = d_model // h
        self.dropout = dropout
        self.W_q = nn.Linear(d_model, h * self.d_k, bias=bias)
        self.W_k = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.W_v = nn.Linear(d_model, n_kv_heads * self.d_k, bias=bias)
        self.W_o = nn.Linear(h * self.d_k, d_model, bias=bias)

    def extra_repr(self) -> str:
        kv = f", n_kv_heads={self.n_kv_heads}" if self.n_kv_heads != self.h else ""
        return f"d_model={self.d_model}, h={self.h}{kv}, d_k={self.d_k}, dropout={self.dropout}"

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
            the cache grown by ``n_new`` tokens.

        Example:
            >>> attn = MultiHeadAttention(d_model=16, h=4, n_kv_heads=2).eval()
            >>> x = torch.randn(1, 5, 16)
            >>> out, _, cache = attn.decode(x[:, :4])  # the prompt
            >>> last, _, cache = attn.decode(x[:, 4:], cache)  # one more token
            >>> torch.allclose(last, attn(x, mask=causal_mask(5))[0][:, 4:], atol=1e-6)
            True
        """
        self._check_inputs(x, x, x)
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
            A dict, in the order of computation: ``q``, ``k``, ``v`` (the projections, ``(B, n, h d_k)``
            and ``(B, n_k, h_kv d_k)``), ``q_heads`` ``(B, h, n_q, d_k)``, ``k_heads``, ``v_heads``
            ``(B, h, n_k, d_k)`` (with grouped-query heads repeated for their query heads), ``scores``
            and ``scaled_scores`` ``(B, h, n_q, n_k)``, ``weights`` ``(B, h, n_q, n_k)``, ``heads``
            ``(B, h, n_q, d_k)``, ``concat`` ``(B, n_q, d_model)``, ``out`` ``(B, n_q, d_model)``, and
            ``cache``, the :class:`KVCache` of every key and value attended to.
        """
        key, value, mask = self._checked(query, key, value, mask, cache)
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)  # (B, n_q, d_model), 2 x (B, n_k, h_kv d_k)
        q_heads = split_heads(q, self.h)  # (B, h, n_q, d_k)
        cache = _grow(cache, split_heads(k, self.n_kv_heads), split_heads(v, self.n_kv_heads))
        # Each group of h / h_kv query heads shares one key/value head.
        group = self.h // self.n_kv_heads
        k_heads = cache.k.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
        v_heads = cache.v.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
        attention = attention_steps(q_heads, k_heads, v_heads, mask, dropout_p=self._dropout_p())
        concat = merge_heads(attention["out"])  # (B, n_q, d_model)
        return {
            "q": q,
            "k": k,
            "v": v,
            "q_heads": q_heads,
            "k_heads": k_heads,
            "v_heads": v_heads,
            "scores": attention["scores"],  # (B, h, n_q, n_k)
            "scaled_scores": attention["scaled_scores"],  # (B, h, n_q, n_k)
            "weights": attention["weights"],  # (B, h, n_q, n_k)
            "heads": attention["out"],  # (B, h, n_q, d_k)
            "concat": concat,
            "out": self.W_o(concat),  # (B, n_q, d_model)
            "cache": cache,
        }

    def _fused(
        self,
        query: torch.Tensor,
        key: torch.Tensor | None,
        value: torch.Tensor | None,
        mask: torch.Tensor | None,
        cache: KVCache | None,
    ) -> tuple[torch.Tensor, KVCache]:
        """The fused path: PyTorch's kernel, same maths, no weights materialised for the caller."""
        key, value, mask = self._checked(query, key, value, mask, cache)
        q = split_heads(self.W_q(query), self.h)  # (B, h, n_q, d_k)
        cache = _grow(
            cache, split_heads(self.W_k(key), self.n_kv_heads), split_heads(self.W_v(value), self.n_kv_heads)
        )
        heads = F.scaled_dot_product_attention(
            q,
            cache.k,
            cache.v,
            attn_mask=mask,
            dropout_p=self._dropout_p(),
            enable_gqa=self.n_kv_heads != self.h,
        )  # (B, h, n_q, d_k)
        return self.W_o(merge_heads(heads)), cache  # (B, n_q, d_model)

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
        self._check_inputs(query, key, value)
        n_k = key.size(1) + (0 if cache is None else self._check_cache(cache, query))
        if mask is not None:
            check_mask(mask, (query.size(0), self.h, query.size(1), n_k), "(B, h, n_q, n_k)")
        return key, value, mask

    def _check_inputs(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_float_tensor(name, x)
            if x.dim() != 3 or x.size(-1) != self.d_model:
                n = "n_q" if name == "query" else "n_k"
                raise ValueError(
                    f"{name} must have shape (B, {n}, d_model={self.d_model}), got {tuple(x.shape)}"
                )
        if not query.size(0) == key.size(0) == value.size(0):
            raise ValueError(
                "query, key and value must have the same batch size B, got "
                f"{query.size(0)}, {key.size(0)}, {value.size(0)}"
            )
        if key.size(1) != value.size(1):
            raise ValueError(
                f"key and value must have the same length n_k, got {key.size(1)} and {value.size(1)}"
            )
        check_same_dtype_device(query=query, key=key, value=value)
        weight = self.W_q.weight
        if query.dtype != weight.dtype or query.device != weight.device:
            raise TypeError(
                f"query has dtype {query.dtype} on {query.device} but the module's parameters have "
                f"dtype {weight.dtype} on {weight.device}; use module.to(query) or convert the input"
            )

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
