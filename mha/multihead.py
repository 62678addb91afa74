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

import torch
import torch.nn.functional as F
from torch import nn

from mha._checks import check_float_tensor, check_mask, check_same_dtype_device
from mha.attention import scaled_dot_product_attention


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


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
        d_model = _positive_int("d_model", d_model)
        h = _positive_int("h", h)
        n_kv_heads = h if n_kv_heads is None else _positive_int("n_kv_heads", n_kv_heads)
        if d_model % h:
            raise ValueError(f"d_model={d_model} must be divisible by the number of heads h={h}")
        if h % n_kv_heads:
            raise ValueError(f"h={h} must be divisible by n_kv_heads={n_kv_heads}")
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
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value)
        B, n_q, _ = query.shape
        n_k = key.size(1)
        if mask is not None:
            check_mask(mask, (B, self.h, n_q, n_k), "(B, h, n_q, n_k)")
        dropout_p = self.dropout if self.training else 0.0

        # Project, then split d_model into h heads of width d_k: view, then move the head axis forward.
        q = self.W_q(query).view(B, n_q, self.h, self.d_k).transpose(1, 2)  # (B, h, n_q, d_k)
        k = self.W_k(key).view(B, n_k, self.n_kv_heads, self.d_k).transpose(1, 2)  # (B, h_kv, n_k, d_k)
        v = self.W_v(value).view(B, n_k, self.n_kv_heads, self.d_k).transpose(1, 2)  # (B, h_kv, n_k, d_k)

        if need_weights:
            # Explicit path: each group of h / h_kv query heads shares one key/value head.
            group = self.h // self.n_kv_heads
            k = k.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
            v = v.repeat_interleave(group, dim=1)  # (B, h, n_k, d_k)
            heads, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p=dropout_p)
        else:
            # Fused path: PyTorch's kernel, same maths, no weights materialised for the caller.
            heads = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=dropout_p, enable_gqa=self.n_kv_heads != self.h
            )  # (B, h, n_q, d_k)
            weights = None

        # Merge the heads back: (B, h, n_q, d_k) -> (B, n_q, h, d_k) -> (B, n_q, d_model).
        concat = heads.transpose(1, 2).contiguous().view(B, n_q, self.h * self.d_k)  # (B, n_q, d_model)
        return self.W_o(concat), weights  # (B, n_q, d_model), (B, h, n_q, n_k)

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
