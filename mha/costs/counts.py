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
    d_k      width of each head: d_model / h unless a model sets it apart (``head_dim``)
    w        window of a local layer: it caches, and a new token attends to, the last w tokens only
    d_c, d_r latent attention: widths of the cached latent and rotary key (``kv_latent``, ``rope_dim``)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from mha._checks import check_heads, check_positive_int
from mha.costs.configs import ModelConfig, get_config


def projection_params(
    d_model: int, h: int, n_kv_heads: int | None = None, *, bias: bool = True, head_dim: int | None = None
) -> dict[str, int]:
    """Parameters of each projection of one attention layer: a dict with keys ``W_q, W_k, W_v, W_o``.

    ``W_q`` is ``d_model x (h d_k)`` and ``W_o`` is ``(h d_k) x d_model`` (``d_model x d_model`` where
    ``d_k = d_model / h``); ``W_k`` and ``W_v`` are ``d_model x (h_kv d_k)``, which is where grouped-query
    and multi-query attention save parameters. Biases add the output widths.

    Args:
        d_model: model width.
        h: number of query heads.
        n_kv_heads: number of key/value heads; ``None`` means ``h``.
        bias: whether the four projections have biases.
        head_dim: the head width ``d_k`` where a model sets it apart; ``None`` means ``d_model / h``.
    """
    _, h_kv, d_k = check_heads(d_model, h, n_kv_heads, head_dim=head_dim)
    kv = d_model * h_kv * d_k + bias * h_kv * d_k
    return {
        "W_q": (d_model + bias) * h * d_k,
        "W_k": kv,
        "W_v": kv,
        "W_o": h * d_k * d_model + bias * d_model,
    }


def attention_params(
    d_model: int, h: int, n_kv_heads: int | None = None, *, bias: bool = True, head_dim: int | None = None
) -> int:
    """Number of parameters of one attention layer, ``W_q, W_k, W_v, W_o`` (and their biases).

    The sum of :func:`projection_params`.
    """
    return sum(projection_params(d_model, h, n_kv_heads, bias=bias, head_dim=head_dim).values())


def attention_macs_parts(
    d_model: int,
    h: int,
    n_q: int,
    n_k: int | None = None,
    *,
    n_kv_heads: int | None = None,
    head_dim: int | None = None,
) -> tuple[int, int]:
    """The two parts of :func:`attention_macs`: ``(projections, scores)``.

    ``projections`` (``W_q``, ``W_k``, ``W_v``, ``W_o``) grows linearly with the sequence length;
    ``scores`` (``q k^T`` and ``weights v``) grows with ``n_q n_k``, quadratically for self-attention.
    """
    _, h_kv, d_k = check_heads(d_model, h, n_kv_heads, head_dim=head_dim)
    n_q = check_positive_int("n_q", n_q)
    n_k = n_q if n_k is None else check_positive_int("n_k", n_k)
    projections = 2 * n_q * d_model * h * d_k + 2 * n_k * d_model * h_kv * d_k
    scores = 2 * h * n_q * n_k * d_k  # q k^T and weights v, each (n_q, d_k) x (d_k, n_k) per head
    return projections, scores


def attention_macs(
    d_model: int,
    h: int,
    n_q: int,
    n_k: int | None = None,
    *,
    n_kv_heads: int | None = None,
    head_dim: int | None = None,
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
        head_dim: the head width ``d_k`` where a model sets it apart; ``None`` means ``d_model / h``.

    Returns:
        ``n_q d_model h d_k`` (``W_q``) + ``2 n_k d_model h_kv d_k`` (``W_k``, ``W_v``)
        + ``2 h n_q n_k d_k`` (scores and weights times values) + ``n_q h d_k d_model`` (``W_o``).
    """
    return sum(attention_macs_parts(d_model, h, n_q, n_k, n_kv_heads=n_kv_heads, head_dim=head_dim))


def attention_macs_per_token(
    d_model: int, h: int, context: int, *, n_kv_heads: int | None = None, head_dim: int | None = None
) -> int:
    """Multiply-adds of one attention layer for one new token when decoding with a key/value cache.

    The new token is projected to one query, key and value; its query attends to ``context`` keys (the
    cached ones and its own); the result goes through ``W_o``. Only the attention term grows with the
    context.

    Args:
        d_model: model width.
        h: number of query heads.
        context: number of keys the new token attends to, including itself.
        n_kv_heads: number of key/value heads; ``None`` means ``h``.
        head_dim: the head width ``d_k`` where a model sets it apart; ``None`` means ``d_model / h``.
    """
    _, h_kv, d_k = check_heads(d_model, h, n_kv_heads, head_dim=head_dim)
    context = check_positive_int("context", context)
    return 2 * d_model * h * d_k + 2 * d_model * h_kv * d_k + 2 * h * context * d_k


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
    return 2 * n_layers * batch * context * n_kv_heads * d_k * _element_size(dtype)


def _element_size(dtype: torch.dtype) -> int:
    """Bytes per element of ``dtype``."""
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
    return torch.empty((), dtype=dtype).element_size()


def attention_weights_bytes(B: int, h: int, n_q: int, n_k: int, *, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of the ``(B, h, n_q, n_k)`` attention-weight tensor that the explicit path materialises."""
    for name, value in (("B", B), ("h", h), ("n_q", n_q), ("n_k", n_k)):
        check_positive_int(name, value)
    return B * h * n_q * n_k * _element_size(dtype)


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


def model_kv_cache_bytes(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: torch.dtype = torch.bfloat16
) -> int:
    """Bytes a decoder keeps per batch of sequences after ``context`` tokens, counted layer by layer.

    Every layer of :attr:`ModelConfig.layers` counts by its kind
    (:meth:`mha.costs.layers.Layer.cache_elements`), every element at ``dtype``'s size:

    - full: ``2 h_kv d_k`` per token (``h_kv d_k`` where the keys are the values);
    - sliding or chunked: the same per token, for ``min(context, w)`` tokens (a chunk counted as a window of
      its length, its worst case);
    - latent: ``d_c + d_r`` per token, plus the indexer's key ``d_i`` where the layer has one;
    - compressed (DeepSeek-V4): the window's ``min(context, w)`` tokens, plus ``floor(context / m)``
      entries of the same width and the indexer's ``d_i`` where the layer has one;
    - linear: its state, ``h_v d_k d_v + (kernel - 1)(2 h_k d_k + h_v d_v)``, whatever the context;
    - a layer that reads another layer's cache: nothing. Multi-token-prediction layers are not among
      ``n_layers``, so not counted.

    Args:
        model: a decoder-only model, a name in :data:`mha.costs.MODEL_CONFIGS` or a ``ModelConfig``.
        context: tokens decoded so far per sequence (it may exceed the model's trained context).
        batch: sequences decoded at once.
        dtype: the cache's element type.

    Returns:
        The cache (and state) size in bytes. For a model of full layers it equals :func:`kv_cache_bytes` of
        its ``n_layers, n_kv_heads, d_k``.
    """
    config = get_config(model, decoder_only=True)
    context, batch = check_positive_int("context", context), check_positive_int("batch", batch)
    return batch * _element_size(dtype) * sum(layer.cache_elements(context) for layer in config.layers)


def _cached_tokens(config: ModelConfig, context: int) -> int:
    """Tokens a new token attends to, over all layers: ``context`` in a global layer, ``min(context, w)`` in
    a local one (for models whose layers are all of one attention kind: :func:`layer_costs`)."""
    return sum(context if w is None else min(context, w) for w in config.layer_windows)


@dataclass(frozen=True)
class LayerCosts:
    """What one attention layer of a model costs, in the terms that the whole-model counts add up.

    Weight matrices only: no biases, norms (QK-norm, latent attention's RMSNorms) or sinks. For latent
    attention, decoding runs in the absorbed form (the cache holds the
    latents; ``W_UK`` is folded into the query and ``W_UV`` applied after the weighted sum), and a forward
    pass over a sequence in the explicit one (keys and values up-projected for every token).
    """

    params: int  # weights of the layer's projections; also the multiply-adds per token of a forward pass
    token_macs: int  # multiply-adds per new token when decoding that do not depend on the context
    key_macs: int  # multiply-adds per new token for each cached token it attends to
    pair_macs: int  # multiply-adds per (query, key) pair of a forward pass over a sequence
    cache_width: int  # values cached per token: 2 h_kv d_k, or d_c + d_r for latent attention
    rebuild_macs: int = 0  # latent attention decoding without absorbing: per cached token, rebuilding every
    # head's key and value from the latent (2 h d_k d_c), on top of pair_macs; 0 for other attention


def layer_costs(config: ModelConfig) -> LayerCosts:
    """The :class:`LayerCosts` of one attention layer of ``config``.

    Multi-, grouped- and multi-query attention (``d`` = d_model): ``params = 2 d h d_k + 2 d h_kv d_k``
    (:func:`attention_params`), each weight used once per new token; ``2 h d_k`` multiply-adds per cached
    key (``q k^T`` and weights times ``v``). Latent attention with query latent ``d_q``: ``W_DQ`` (d x d_q),
    ``W_UQ`` (d_q x h (d_k + d_r)), ``W_DKV`` (d x (d_c + d_r)), ``W_UK`` and ``W_UV`` (d_c x h d_k each),
    ``W_O`` (h d_k x d); decoding costs ``h (2 d_c + d_r)`` per cached latent and ``2 h d_k d_c`` to absorb
    ``W_UK`` and apply ``W_UV``, while a forward pass costs ``h (2 d_k + d_r)`` per (query, key) pair.
    Decoding without absorbing would pay ``rebuild_macs = 2 h d_k d_c`` per cached latent to rebuild the
    heads' keys and values, plus ``pair_macs``. Where a head's value width ``d_v`` differs from ``d_k``
    (``v_head_dim``, GLM-5), ``2 d_k`` reads ``d_k + d_v``.

    Raises:
        ValueError: a model with layers of other kinds or shapes (:func:`uncounted_layers` says which).
    """
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
    if reason := uncounted_layers(config):
        raise ValueError(f"{config.name}: layer_costs counts models of one kind of attention layer; {reason}")
    d, h, d_k = config.d_model, config.h, config.d_k
    if config.kv_latent is None:
        params = attention_params(d, h, config.n_kv_heads, bias=False, head_dim=d_k)
        params -= d * config.n_kv_heads * d_k if config.k_eq_v else 0  # no W_v: the keys are the values
        params += d * h * d_k if config.gate else 0  # the output gate's W_g
        return LayerCosts(params, params, 2 * h * d_k, 2 * h * d_k, config.cache_width)
    d_c, d_r, d_q = config.kv_latent, config.rope_dim or 0, config.q_latent
    d_v = config.v_head_dim or d_k
    query = d * h * (d_k + d_r) if d_q is None else d * d_q + d_q * h * (d_k + d_r)
    down, up, out = d * (d_c + d_r), d_c * h * (d_k + d_v), h * d_v * d
    return LayerCosts(
        params=query + down + up + out,
        token_macs=query + down + up + out,  # absorbing W_UK and applying W_UV: d_c h (d_k + d_v), up's size
        key_macs=h * (2 * d_c + d_r),
        pair_macs=h * (d_k + d_r + d_v),
        cache_width=config.cache_width,
        rebuild_macs=d_c * h * (d_k + d_v),
    )


def uncounted_layers(config: ModelConfig) -> str:
    """Why :func:`layer_costs` cannot count ``config``'s weights and multiply-adds, or ``""`` if it can.

    It counts models whose layers are all one kind of attention of one shape: full, sliding or chunked
    (Q, K, V, O, and the gate's weights), or latent attention without an indexer. Linear, compressed and
    indexed layers, and layers of two shapes (Gemma 4), have weights of their own (convolutions, gates,
    compressors, indexers) that this book does not count.
    """
    kinds = set(config.layer_kinds)
    reasons = [f"{kind} layers" for kind in ("linear", "compressed") if kind in kinds]
    reasons += ["an indexer"] if config.indexer is not None else []
    reasons += ["two shapes of layer"] if config.local_kv_heads or config.local_head_dim else []
    mixed = "latent" in kinds and len(kinds) > 1
    reasons += ["latent attention beside layers of another kind"] if mixed else []
    return f"not counted: {', '.join(reasons)}" if reasons else ""


@dataclass(frozen=True)
class ModelCosts:
    """Attention costs of a whole model (all its attention layers), weight matrices only (no biases, norms
    or sinks): every number of the cost calculator (:func:`mha.costs.cost_rows`), computed once. The weights
    and multiply-adds are ``None`` for a model whose layers :func:`layer_costs` does not count (linear,
    compressed or indexed layers, two shapes of layer: :func:`uncounted_layers`)."""

    params: int | None  # attention weights W_q, W_k, W_v, W_o over all attention layers
    macs_per_token: int | None  # multiply-adds in attention layers to decode one token at the given context
    macs_per_sequence: int | None  # multiply-adds in attention layers for a forward pass over context tokens
    kv_cache_bytes: int  # key/value cache (and states) for batch sequences of context tokens, layer by layer
    kv_cache_bytes_all_global: int  # the same with no window or compression (Layer.global_elements)
    kv_cache_bytes_as_mha: int  # with a key and a value per query head (plain MHA), every layer full


def model_costs(
    config: ModelConfig, context: int, *, batch: int = 1, dtype: torch.dtype = torch.bfloat16
) -> ModelCosts:
    """Attention parameters, multiply-adds and KV-cache size of a decoder-only model.

    A new token attends to the keys its layer caches: ``min(context, w)`` in a local layer. A forward pass
    over a sequence computes every (query, key) pair, as the explicit path does, local layers too.

    Args:
        config: a decoder-only model (``config.kind == "decoder"``): only those decode with a KV cache.
        context: tokens per sequence (the KV cache holds this many; a new token attends to this many).
        batch: sequences processed at once (scales the multiply-adds per sequence and the cache).
        dtype: element type of the cache.

    Returns:
        A :class:`ModelCosts`; ``macs_per_token`` is for one token of one sequence, ``macs_per_sequence``
        for the whole batch. The caches: counted layer by layer (:func:`model_kv_cache_bytes`), the same
        with no window and no compression, and plain MHA's (:attr:`ModelConfig.mha_cache_width` per token
        and layer, in every layer).
    """
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
    if config.kind != "decoder":
        raise ValueError(f"{config.name} is an {config.kind} model; costs here are for decoder-only models")
    context, batch = check_positive_int("context", context), check_positive_int("batch", batch)
    cache, L = batch * _element_size(dtype), config.n_layers  # bytes per cached value, over the batch
    caches = {
        "kv_cache_bytes": cache * sum(layer.cache_elements(context) for layer in config.layers),
        "kv_cache_bytes_all_global": cache * sum(layer.global_elements(context) for layer in config.layers),
        "kv_cache_bytes_as_mha": cache * config.mha_cache_width * L * context,
    }
    if uncounted_layers(config):
        return ModelCosts(params=None, macs_per_token=None, macs_per_sequence=None, **caches)
    layer = layer_costs(config)
    keys = _cached_tokens(config, context)  # what a new token attends to, over all layers
    return ModelCosts(
        params=L * layer.params,
        macs_per_token=L * layer.token_macs + layer.key_macs * keys,
        macs_per_sequence=batch * L * (layer.params * context + layer.pair_macs * context * context),
        **caches,
    )
