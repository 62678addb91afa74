"""What an attention layer costs: parameters, multiply-adds and key/value-cache memory.

Counts are exact for :class:`mha.MultiHeadAttention` (the tests compare them with the module's parameters
and with ``torch.utils.flop_counter.FlopCounterMode``). A multiply-add (MAC) is one multiplication and one
addition; ``FlopCounterMode`` and most papers count it as 2 FLOPs. Softmax, scaling and masking are left
out: they are O(h n_q n_k) element-wise operations, not matrix products.

Shape legend:
    B        batch size
    n_q      number of queries
    n_k      number of keys and values (the context a query sees)
    d_model  model width
    h        number of query heads
    h_kv     number of key/value heads (``n_kv_heads``; h for MHA, 1 for MQA)
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from mha._checks import check_heads, check_positive_int
from mha.costs.configs import ModelConfig


def projection_params(
    d_model: int, h: int, n_kv_heads: int | None = None, *, bias: bool = True
) -> dict[str, int]:
    """Parameters of each projection of one attention layer: a dict with keys ``W_q, W_k, W_v, W_o``.

    ``W_q`` and ``W_o`` are ``d_model x d_model``; ``W_k`` and ``W_v`` are ``d_model x (h_kv d_k)``, which is
    where grouped-query and multi-query attention save parameters. Biases add the output widths.

    Args:
        d_model: model width.
        h: number of query heads.
        n_kv_heads: number of key/value heads; ``None`` means ``h``.
        bias: whether the four projections have biases.
    """
    _, h_kv, d_k = check_heads(d_model, h, n_kv_heads)
    full, kv = d_model * (d_model + bias), d_model * h_kv * d_k + bias * h_kv * d_k
    return {"W_q": full, "W_k": kv, "W_v": kv, "W_o": full}


def attention_params(d_model: int, h: int, n_kv_heads: int | None = None, *, bias: bool = True) -> int:
    """Number of parameters of one attention layer, ``W_q, W_k, W_v, W_o`` (and their biases).

    The sum of :func:`projection_params`.
    """
    return sum(projection_params(d_model, h, n_kv_heads, bias=bias).values())


def attention_macs_parts(
    d_model: int, h: int, n_q: int, n_k: int | None = None, *, n_kv_heads: int | None = None
) -> tuple[int, int]:
    """The two parts of :func:`attention_macs`: ``(projections, scores)``.

    ``projections`` (``W_q``, ``W_k``, ``W_v``, ``W_o``) grows linearly with the sequence length;
    ``scores`` (``q k^T`` and ``weights v``) grows with ``n_q n_k``, quadratically for self-attention.
    """
    _, h_kv, d_k = check_heads(d_model, h, n_kv_heads)
    n_q = check_positive_int("n_q", n_q)
    n_k = n_q if n_k is None else check_positive_int("n_k", n_k)
    projections = 2 * n_q * d_model * d_model + 2 * n_k * d_model * h_kv * d_k
    scores = 2 * h * n_q * n_k * d_k  # q k^T and weights v, each (n_q, d_k) x (d_k, n_k) per head
    return projections, scores


def attention_macs(
    d_model: int, h: int, n_q: int, n_k: int | None = None, *, n_kv_heads: int | None = None
) -> int:
    """Multiply-adds of one attention layer's forward pass over one sequence.

    ``n_q`` queries attend to ``n_k`` keys, and every score is computed (a causal mask hides half of them,
    but the explicit path and most kernels still compute the full ``n_q x n_k`` block).

    Args:
        d_model: model width.
        h: number of query heads.
        n_q: number of queries.
        n_k: number of keys and values; defaults to ``n_q`` (self-attention).
        n_kv_heads: number of key/value heads; ``None`` means ``h``.

    Returns:
        ``n_q d_model^2`` (``W_q``) + ``2 n_k d_model h_kv d_k`` (``W_k``, ``W_v``)
        + ``2 h n_q n_k d_k`` (scores and weights times values) + ``n_q d_model^2`` (``W_o``).
    """
    return sum(attention_macs_parts(d_model, h, n_q, n_k, n_kv_heads=n_kv_heads))


def attention_macs_per_token(d_model: int, h: int, context: int, *, n_kv_heads: int | None = None) -> int:
    """Multiply-adds of one attention layer for one new token when decoding with a key/value cache.

    The new token is projected to one query, key and value; its query attends to ``context`` keys (the
    cached ones and its own); the result goes through ``W_o``. Only the attention term grows with the
    context.

    Args:
        d_model: model width.
        h: number of query heads.
        context: number of keys the new token attends to, including itself.
        n_kv_heads: number of key/value heads; ``None`` means ``h``.
    """
    _, h_kv, d_k = check_heads(d_model, h, n_kv_heads)
    context = check_positive_int("context", context)
    return 2 * d_model * d_model + 2 * d_model * h_kv * d_k + 2 * h * context * d_k


def kv_cache_bytes(
    n_layers: int,
    n_kv_heads: int,
    d_k: int,
    context: int,
    *,
    batch: int = 1,
    dtype: torch.dtype = torch.bfloat16,
) -> int:
    """Bytes needed to cache the keys and values of ``context`` tokens during decoding.

    Each layer stores a key and a value of width ``h_kv d_k`` per token: ``2 * n_layers * batch * context *
    h_kv * d_k * bytes_per_element``. Grouped-query and multi-query attention shrink it by ``h / h_kv``.

    Args:
        n_layers: number of decoder layers that cache keys and values.
        n_kv_heads: key/value heads per layer.
        d_k: width of each head.
        context: number of cached tokens per sequence.
        batch: number of sequences decoded at once.
        dtype: the cache's element type (``torch.bfloat16``, ``torch.float16``, ``torch.float32``, ...).
    """
    for name, value in (
        ("n_layers", n_layers),
        ("n_kv_heads", n_kv_heads),
        ("d_k", d_k),
        ("context", context),
    ):
        check_positive_int(name, value)
    check_positive_int("batch", batch)
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
    element = torch.empty((), dtype=dtype).element_size()
    return 2 * n_layers * batch * context * n_kv_heads * d_k * element


def attention_weights_bytes(B: int, h: int, n_q: int, n_k: int, *, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of the ``(B, h, n_q, n_k)`` attention-weight tensor that the explicit path materialises."""
    for name, value in (("B", B), ("h", h), ("n_q", n_q), ("n_k", n_k)):
        check_positive_int(name, value)
    return B * h * n_q * n_k * torch.empty((), dtype=dtype).element_size()


def saved_for_backward_bytes(fn: Callable[[], object]) -> int:
    """Bytes of the distinct tensors that autograd keeps for the backward pass while ``fn()`` runs.

    This is the activation memory that training pays for a call: every tensor a backward formula needs
    (inputs of matrix products, softmax outputs, ...). Tensors that share storage (a tensor and its
    transpose) count once. Inputs that require gradients and parameters count too, since autograd holds
    them. The measurement is exact and deterministic, unlike a reading of the allocator.

    Args:
        fn: a call with no arguments, e.g. ``lambda: attn(x)``, whose inputs require gradients.
    """
    kept: list[torch.Tensor] = []  # hold every saved tensor, so that no storage is freed and reused

    def pack(t: torch.Tensor) -> torch.Tensor:
        kept.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    storages = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in kept}
    return sum(storages.values())


@dataclass(frozen=True)
class ModelCosts:
    """Attention costs of a whole model (all its attention layers), weights only (no biases)."""

    params: int  # attention weights W_q, W_k, W_v, W_o over all attention layers
    macs_per_token: int  # multiply-adds in attention layers to decode one token at the given context
    macs_per_sequence: int  # multiply-adds in attention layers for a forward pass over context tokens
    kv_cache_bytes: int  # key/value cache for batch sequences of context tokens


def model_costs(
    config: ModelConfig, context: int, *, batch: int = 1, dtype: torch.dtype = torch.bfloat16
) -> ModelCosts:
    """Attention parameters, multiply-adds and KV-cache size of a decoder-only model.

    Args:
        config: a decoder-only model (``config.kind == "decoder"``): only those decode with a KV cache.
        context: tokens per sequence (the KV cache holds this many; a new token attends to this many).
        batch: sequences processed at once (scales the multiply-adds per sequence and the cache).
        dtype: element type of the cache.

    Returns:
        A :class:`ModelCosts`; ``macs_per_token`` is for one token of one sequence, ``macs_per_sequence``
        for the whole batch.
    """
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
    if config.kind != "decoder":
        raise ValueError(f"{config.name} is an {config.kind} model; costs here are for decoder-only models")
    d, h, h_kv, L = config.d_model, config.h, config.n_kv_heads, config.n_layers
    check_positive_int("batch", batch)
    return ModelCosts(
        params=L * attention_params(d, h, h_kv, bias=False),
        macs_per_token=L * attention_macs_per_token(d, h, context, n_kv_heads=h_kv),
        macs_per_sequence=batch * L * attention_macs(d, h, context, n_kv_heads=h_kv),
        kv_cache_bytes=kv_cache_bytes(L, h_kv, config.d_k, context, batch=batch, dtype=dtype),
    )


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units, e.g. ``format_bytes(3 * 2**30) == "3.00 GiB"``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if n < 1024:
        return f"{n} B"
    for power, unit in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if n >= 1024**power:
            return f"{n / 1024**power:.2f} {unit}"
    raise AssertionError("unreachable")


def format_count(n: int) -> str:
    """A large count in engineering words, e.g. ``format_count(1_500_000_000) == "1.50 G"``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    for power, suffix in ((12, "T"), (9, "G"), (6, "M"), (3, "k")):
        if n >= 10**power:
            return f"{n / 10**power:.2f} {suffix}"
    return str(n)
