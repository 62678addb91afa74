"""The cost calculator's numbers for real models: a model, a context length, a batch and a dtype give the
attention parameters, multiply-adds and key/value-cache memory.

:func:`cost_report` computes them (text or HTML) and is what a chapter prints deterministically;
:class:`mha.widgets.calculator.CostCalculator` puts the same report behind controls. :func:`kv_cache_rows`
compares the key/value caches of several models, one row each.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import torch

from mha.costs.configs import ModelConfig, get_config
from mha.costs.counts import format_bytes, format_count, kv_cache_bytes, model_costs

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float8_e4m3fn": torch.float8_e4m3fn,
}


def _macs(n: int) -> str:
    return f"{format_count(n)} = {format_count(2 * n)}FLOP (attention layers only)"


def cost_rows(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16"
) -> list[tuple[str, str]]:
    """The calculator's numbers as ``(label, value)`` rows.

    Args:
        model: a name in :data:`mha.costs.MODEL_CONFIGS` (decoder-only) or a ``ModelConfig``.
        context: tokens per sequence.
        batch: sequences at once.
        dtype: a key of :data:`DTYPES`, the element type of the key/value cache.
    """
    config = get_config(model, decoder_only=True)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    costs = model_costs(config, context, batch=batch, dtype=DTYPES[dtype])
    as_mha = kv_cache_bytes(config.n_layers, config.h, config.d_k, context, batch=batch, dtype=DTYPES[dtype])
    shape = f"d_model={config.d_model}, h={config.h}, n_kv_heads={config.n_kv_heads}, d_k={config.d_k}"
    rows = [
        ("model", f"{config.name} ({config.attention}: {shape}, {config.n_layers} layers)"),
        ("attention parameters, all layers", f"{format_count(costs.params)} parameters ({costs.params:,})"),
        ("multiply-adds per new token", _macs(costs.macs_per_token)),
        ("multiply-adds, forward over the batch", _macs(costs.macs_per_sequence)),
        ("KV cache", f"{format_bytes(costs.kv_cache_bytes)} ({costs.kv_cache_bytes:,} bytes, {dtype})"),
    ]
    if config.n_kv_heads != config.h:
        rows.append(
            (
                "KV cache if every head kept its own K, V",
                f"{format_bytes(as_mha)} ({as_mha // costs.kv_cache_bytes}x)",
            )
        )
    if config.context is not None and context > config.context:
        rows.append(
            ("note", f"{context} tokens is longer than the {config.context} the model was trained for")
        )
    return rows


def kv_cache_rows(
    models: Iterable[str | ModelConfig],
    *,
    context: int | None = None,
    batch: int = 1,
    dtype: str = "bfloat16",
) -> list[dict[str, str | int]]:
    """The key/value caches of decoder-only models as table rows, one dict per model, ready for
    ``pandas.DataFrame(kv_cache_rows(...)).set_index("model")``.

    Args:
        models: names in :data:`mha.costs.MODEL_CONFIGS` (decoder-only) or ``ModelConfig`` objects.
        context: tokens per sequence; ``None`` means each model's trained context.
        batch: sequences at once.
        dtype: a key of :data:`DTYPES`, the element type of the cache.

    Returns:
        Rows with the keys ``model``, ``attention``, ``n_kv_heads``, ``per token`` (the cache of one token
        of one sequence, all layers), ``context``, ``KV cache`` (for ``batch`` sequences of ``context``
        tokens) and ``as MHA`` (how many times larger the cache would be with a key/value head per query
        head, ``h / h_kv``, e.g. ``"4x"``). Sizes are formatted with :func:`format_bytes`.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    rows = []
    for model in models:
        c = get_config(model, decoder_only=True)
        n = c.context if context is None else context
        per_token = kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, 1, dtype=DTYPES[dtype])
        cache = kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, n, batch=batch, dtype=DTYPES[dtype])
        rows.append(
            {
                "model": c.name,
                "attention": c.attention,
                "n_kv_heads": c.n_kv_heads,
                "per token": format_bytes(per_token),
                "context": n,
                "KV cache": format_bytes(cache),
                "as MHA": f"{c.h // c.n_kv_heads}x",
            }
        )
    if not rows:
        raise ValueError("no models to compare")
    return rows


def cost_report(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16", fmt: str = "text"
) -> str:
    """:func:`cost_rows` as aligned text lines (``fmt="text"``) or an HTML table (``fmt="html"``)."""
    rows = cost_rows(model, context, batch=batch, dtype=dtype)
    rows.insert(1, ("context x batch", f"{context} tokens x {batch} sequence{'s' if batch != 1 else ''}"))
    if fmt == "html":
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table class='mha-cost-report'>{body}</table>"
    if fmt != "text":
        raise ValueError(f"fmt must be 'text' or 'html', got {fmt!r}")
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)
