"""The cost calculator's numbers for real models: a model, a context length, a batch and a dtype give the
attention parameters, multiply-adds and key/value-cache memory.

:func:`cost_rows` gives them as the report's rows, from one set of counts (:func:`mha.costs.model_costs`);
:func:`cost_report` formats those rows (text or HTML), what a chapter prints deterministically, and
:class:`book.widgets.calculator.CostCalculator` shows the same rows behind controls. :func:`kv_cache_rows`
compares the key/value caches of several models, one row each. The formatters (:func:`format_bytes`,
:func:`format_count`, :func:`format_ratio`) are the one way the book writes these numbers.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterable

import torch

from mha.costs.configs import MODEL_CONFIGS, ModelConfig, get_config
from mha.costs.counts import LayerCosts, ModelCosts, layer_costs, model_costs, uncounted_layers
from mha.costs.layers import Layer

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float8_e4m3fn": torch.float8_e4m3fn,
}


_MACS = "{count} = {flops}FLOP (attention layers only)"
_RATIO = "{size} ({ratio})"
# The rows of the cost report, by key: the label and the template of the value, whose {fields} are filled
# with str.format here and, on a static page, by the calculator (book/widgets/static/calculator.js, with
# the same fields formatted as format_count, format_bytes and format_ratio do).
ROWS: dict[str, tuple[str, str]] = {
    "model": ("model", "{description}"),
    "context": ("context x batch", "{context} token{plural} x {batch} sequence{s}"),
    "layers": ("layers", "{pattern}: a local layer caches the last {window} tokens"),
    "kinds": ("layers", "{pattern}"),
    "params": ("attention weight matrices, all layers", "{count} weights ({exact}; no biases or norms)"),
    "uncounted": ("weights and multiply-adds", "{reason} (the caches below are)"),
    "macs_per_token": ("multiply-adds per new token", _MACS),
    "macs_per_sequence": ("multiply-adds, forward over the batch", _MACS),
    "kv_cache": ("KV cache", "{size} ({exact} bytes, {dtype})"),
    "group": ("KV cache of {count} layer{s}: {layer}", "{size}"),
    "all_global": ("KV cache if every layer were global", _RATIO),
    "as_mha": ("KV cache if every layer were full MHA (K, V per head)", _RATIO),
    "note": ("note", "{context} tokens is longer than the {trained} the model was trained on"),
}


BYTE_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB")  # 1024 ** 1 .. 1024 ** 8 bytes
COUNT_UNITS = ("k", "M", "G", "T", "P", "E", "Z", "Y")  # 1000 ** 1 .. 1000 ** 8


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units up to YiB, digits grouped: ``format_bytes(3 * 2**30) == "3.00 GiB"``,
    ``format_bytes(576 * 2**50) == "576.00 PiB"``, ``format_bytes(2**90) == "1,024.00 YiB"``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if n < 1024:
        return f"{n} B"
    power = min(len(BYTE_UNITS), (n.bit_length() - 1) // 10)  # the largest with 1024 ** power <= n
    return f"{n / 1024**power:,.2f} {BYTE_UNITS[power - 1]}"


def format_count(n: int) -> str:
    """A large count with an SI prefix up to Y (10**24), digits grouped: ``format_count(1_500_000_000) ==
    "1.50 G"``, ``format_count(2_724_067_590_852_840 * 10**9) == "2.72 Y"``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative int, got {n!r}")
    if n < 1000:
        return str(n)
    power = min(len(COUNT_UNITS), (len(str(n)) - 1) // 3)  # the largest with 1000 ** power <= n
    return f"{n / 1000**power:,.2f} {COUNT_UNITS[power - 1]}"


def format_ratio(a: int, b: int) -> str:
    """How many times ``b`` goes into ``a``, with one decimal and an ``x``: ``format_ratio(16, 3) == "5.3x"``,
    ``format_ratio(8, 1) == "8.0x"``; a non-zero ratio that one decimal would print as zero gets the decimals
    it needs to show its first digit: ``format_ratio(1, 41) == "0.02x"``, never ``"0.0x"``.
    The one rule for every ratio the book prints (the calculator's page
    ports it: ``formatRatio`` in ``book/widgets/static/ports/costs.js``); the quotient is Python's correctly
    rounded ``a / b``, and ``:.1f`` rounds it half to even."""
    for name, value in (("a", a), ("b", b)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    if b == 0:
        raise ValueError("b must be positive, got 0")
    x, decimals = a / b, 1
    while a and float(f"{x:.{decimals}f}") == 0:
        decimals += 1
    return f"{x:.{decimals}f}x"


def _row(key: str, **fields: object) -> tuple[str, str]:
    label, template = ROWS[key]
    return label, template.format(**fields)


def _macs(key: str, n: int) -> tuple[str, str]:
    return _row(key, count=format_count(n), flops=format_count(2 * n))


def _layers(c: ModelConfig) -> str | None:
    """The layers row's value: the kinds of layer and the window, where a model has local layers or
    several kinds; ``None`` for a model of global layers of one kind."""
    if c.window is not None:
        return _row("layers", pattern=c.pattern, window=c.window)[1]
    return _row("kinds", pattern=c.pattern)[1] if len(set(c.layer_kinds)) > 1 else None


def cache_groups(model: str | ModelConfig) -> list[tuple[Layer, int]]:
    """The layers of a model (a name in :data:`mha.costs.MODEL_CONFIGS` or a ``ModelConfig``) whose caches
    grow alike (the same :attr:`mha.costs.layers.Layer.label`), each once with how many there are, in the
    order they first appear."""
    c = get_config(model)
    groups: dict[str, list] = {}
    for layer in c.layers:
        groups.setdefault(layer.label, [layer, 0])[1] += 1
    return [(layer, count) for layer, count in groups.values()]


def _description(c: ModelConfig) -> str:
    """The model row: name, attention kind and the shapes that set its costs."""
    if c.kv_latent is not None:
        shape = (
            f"d_model={c.d_model}, h={c.h}, d_k={c.d_k}, latent {c.kv_latent} + {c.rope_dim or 0} per token"
        )
    else:
        shape = f"d_model={c.d_model}, h={c.h}, n_kv_heads={c.n_kv_heads}, d_k={c.d_k}"
    return f"{c.name} ({c.attention}: {shape}, {c.n_layers} layers)"


def costs_and_rows(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16"
) -> tuple[ModelCosts, list[tuple[str, str]]]:
    """The calculator's numbers and the report's rows made from them: ``(costs, rows)``.

    The model is looked up once, its costs counted once (:func:`mha.costs.model_costs`), and every row is
    written from those numbers; :func:`cost_rows`, :func:`cost_report` and the calculator widget show these
    rows, and the page's port (``book/widgets/static/ports/costs.js``, ``costs()``) makes the same.

    Args:
        model: a name in :data:`mha.costs.MODEL_CONFIGS` (decoder-only) or a ``ModelConfig``.
        context: tokens per sequence.
        batch: sequences at once.
        dtype: a key of :data:`DTYPES`, the element type of the key/value cache.

    Returns:
        The :class:`mha.costs.ModelCosts`, and ``(label, value)`` rows: the model and its shapes; the context
        and batch; its kinds of layer, if it has local layers or several kinds; the weights of the attention
        layers' matrices (no biases, norms or sinks, as :func:`mha.costs.layer_costs` counts) and the
        multiply-adds per new token and for a forward pass, or why they are not counted
        (:func:`mha.costs.uncounted_layers`); the KV cache counted layer by layer
        (:func:`mha.costs.model_kv_cache_bytes`), and for a model with several kinds of layer the cache of
        each kind (:func:`cache_groups`); for a model with local layers, the cache if every layer were
        global; the cache if every layer were full MHA (a key and a value per head in every layer, every
        token cached) where it differs, each with how many times the counted cache it is
        (:func:`format_ratio`, one decimal); and a note where ``context`` exceeds the model's
        :attr:`~mha.costs.ModelConfig.trained_context`.
    """
    config = get_config(model, decoder_only=True)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    costs = model_costs(config, context, batch=batch, dtype=DTYPES[dtype])
    kv, every, as_mha = costs.kv_cache_bytes, costs.kv_cache_bytes_all_global, costs.kv_cache_bytes_as_mha
    rows = [
        _row("model", description=_description(config)),
        _row(
            "context",
            context=f"{context:,}",
            batch=f"{batch:,}",
            plural="s" if context != 1 else "",
            s="s" if batch != 1 else "",
        ),
    ]
    if (layers := _layers(config)) is not None:
        rows.append(("layers", layers))
    if costs.params is None:
        rows.append(_row("uncounted", reason=uncounted_layers(config)))
    else:
        rows += [
            _row("params", count=format_count(costs.params), exact=f"{costs.params:,}"),
            _macs("macs_per_token", costs.macs_per_token),
            _macs("macs_per_sequence", costs.macs_per_sequence),
        ]
    rows.append(_row("kv_cache", size=format_bytes(kv), exact=f"{kv:,}", dtype=dtype))
    groups = cache_groups(config)
    for layer, count in groups if len(groups) > 1 else ():
        size = format_bytes(batch * DTYPES[dtype].itemsize * count * layer.cache_elements(context))
        label, template = ROWS["group"]
        label = label.format(count=count, s="s" if count != 1 else "", layer=layer.label)
        rows.append((label, template.format(size=size)))
    if config.window is not None:
        rows.append(_row("all_global", size=format_bytes(every), ratio=format_ratio(every, kv)))
    if as_mha != kv:
        rows.append(_row("as_mha", size=format_bytes(as_mha), ratio=format_ratio(as_mha, kv)))
    if config.trained_context is not None and context > config.trained_context:
        rows.append(_row("note", context=f"{context:,}", trained=f"{config.trained_context:,}"))
    return costs, rows


def cost_rows(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16"
) -> list[tuple[str, str]]:
    """The calculator's numbers as the report's ``(label, value)`` rows (:func:`costs_and_rows`)."""
    return costs_and_rows(model, context, batch=batch, dtype=dtype)[1]


def calculator_data() -> list[dict]:
    """What the calculator's page needs to recompute :func:`cost_rows` without Python, one dict per
    decoder-only model of :data:`mha.costs.MODEL_CONFIGS`.

    ``trained_context`` (:attr:`ModelConfig.trained_context`) decides the note. The page evaluates only sums
    and products of these numbers (big integers as decimal strings), and their ratios (``formatRatio``):
    ``keys = sum(count * min(context, window or context) for count, window in windows)``;
    ``macs_per_token = token_macs + key_macs * keys``; ``macs_per_sequence = batch * (sequence_macs * n +
    pair_macs * n * n)`` (``None`` where :func:`mha.costs.uncounted_layers` gives the reason, ``uncounted``);
    the cache ``batch * element * sum(count * cache_elements(context))`` over ``groups``, each a
    :class:`mha.costs.layers.Layer` as a dict with its ``count`` and ``label``
    (:meth:`~mha.costs.layers.Layer.cache_elements`, ported); with no window or compression the same with
    ``global_elements``; as MHA ``batch * element * mha_width * n_layers * context``. The texts
    (``description``, ``layers``) are the rows of :func:`cost_rows`.
    """
    out = []
    for c in MODEL_CONFIGS.values():
        if c.kind != "decoder":
            continue
        L, reason = c.n_layers, uncounted_layers(c)
        layer = None if reason else layer_costs(c)
        windows = {w: c.layer_windows.count(w) for w in dict.fromkeys(c.layer_windows)}

        out.append(
            {
                "name": c.name,
                "kind": c.kind,
                "trained_context": c.trained_context,
                "description": _description(c),
                "layers": _layers(c),
                "window": c.window,
                "n_layers": L,
                "uncounted": reason or None,
                **_counts(layer, L),
                "windows": [[count, w] for w, count in windows.items()],
                "groups": [
                    {**dataclasses.asdict(g), "count": count, "label": g.label}
                    for g, count in cache_groups(c)
                ],
                "mha_width": c.mha_cache_width,
            }
        )
    return out


def _counts(layer: LayerCosts | None, L: int) -> dict[str, str | None]:
    """The page's counts of a model of ``L`` layers like ``layer``, as decimal strings; ``None`` each where
    the layers are not counted."""
    counts = {"params": 0, "token_macs": 0, "key_macs": 0, "sequence_macs": 0, "pair_macs": 0}
    if layer is None:
        return dict.fromkeys(counts)
    counts.update(
        params=L * layer.params, token_macs=L * layer.token_macs, key_macs=layer.key_macs,
        sequence_macs=L * layer.params, pair_macs=L * layer.pair_macs,
    )  # fmt: skip
    return {name: str(n) for name, n in counts.items()}


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
        context: tokens per sequence; ``None`` means each model's :attr:`ModelConfig.trained_context`.
        batch: sequences at once.
        dtype: a key of :data:`DTYPES`, the element type of the cache.

    Returns:
        Rows with the keys ``model``, ``attention`` (MHA, GQA, MQA or MLA), ``n_kv_heads`` (``"—"`` for latent
        attention), ``layers`` (:attr:`ModelConfig.pattern`), ``per token`` (the cache of one token of one
        sequence, all layers), ``context``, ``KV cache`` (for ``batch`` sequences of ``context`` tokens,
        counted layer by layer: :func:`mha.costs.model_kv_cache_bytes`), ``all global`` (the same if every
        layer cached every token) and ``as MHA`` (how many times larger the cache would be with a key and a
        value per query head in every layer, every token cached: ``h / h_kv`` for a model of global layers,
        e.g. ``"4.0x"``, :func:`format_ratio`). Sizes are formatted with :func:`format_bytes`.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    rows = []
    for model in models:
        c = get_config(model, decoder_only=True)
        n, dt = c.trained_context if context is None else context, DTYPES[dtype]
        if n is None:
            raise ValueError(f"{c.name} states no trained context: give context")
        per_token = model_costs(c, 1, dtype=dt).kv_cache_bytes
        costs = model_costs(c, n, batch=batch, dtype=dt)
        cache, as_mha = costs.kv_cache_bytes, costs.kv_cache_bytes_as_mha
        rows.append(
            {
                "model": c.name,
                "attention": c.attention,
                "n_kv_heads": "—" if c.n_kv_heads is None else c.n_kv_heads,
                "layers": c.pattern,
                "per token": format_bytes(per_token),
                "context": n,
                "KV cache": format_bytes(cache),
                "all global": format_bytes(costs.kv_cache_bytes_all_global),
                "as MHA": format_ratio(as_mha, cache),
            }
        )
    if not rows:
        raise ValueError("no models to compare")
    return rows


def cost_report(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16", fmt: str = "text"
) -> str:
    """:func:`cost_rows` as aligned text lines (``fmt="text"``) or an HTML table (``fmt="html"``)."""
    return format_rows(cost_rows(model, context, batch=batch, dtype=dtype), fmt=fmt)


def format_rows(rows: list[tuple[str, str]], *, fmt: str = "text") -> str:
    """``(label, value)`` rows as :func:`cost_report` writes them: each label padded to the widest, then two
    spaces and its value (``fmt="text"``), or an HTML table (``fmt="html"``)."""
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
