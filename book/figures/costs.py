"""Figures of real models' attention shapes and costs, drawn from :data:`mha.costs.MODEL_CONFIGS`.

Each function returns a ``matplotlib`` figure created with ``pyplot`` (so a notebook shows it once at the
end of the cell) and never calls ``plt.show``. The plotted numbers come from :mod:`mha.costs`; the tests
read them back from the figure's lines.
"""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Iterable, Sequence

import torch
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from book.figures._pyplot import subplots
from book.figures._style import TEXT_PT
from book.figures._text import kept, tr
from mha._checks import check_positive_int
from mha.costs.configs import MODEL_CONFIGS, MODELS_2025_2026, ModelConfig, get_config
from mha.costs.counts import attention_macs_parts, model_kv_cache_bytes
from mha.costs.report import format_bytes

_STYLE = {
    "MHA": ("o", "tab:blue"),
    "GQA": ("s", "tab:orange"),
    "MQA": ("^", "tab:green"),
    "MLA": ("D", "tab:red"),
}


def _configs(models: Iterable[str | ModelConfig] | None, *, decoder_only: bool = False) -> list[ModelConfig]:
    if models is None:
        return list(MODEL_CONFIGS.values())
    out = [get_config(m, decoder_only=decoder_only) for m in models]
    if not out:
        raise ValueError("no models to plot")
    return out


def _powers_of_two_axis(axis, lo: float, hi: float) -> None:
    """Ticks at the powers of two in ``[lo, hi]``, labelled as plain integers."""
    ticks = [2**k for k in range(64) if lo <= 2**k <= hi]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v)}"))


def _contexts(contexts: Sequence[int]) -> list[int]:
    values = [check_positive_int("contexts", n) for n in contexts]
    if not values:
        raise ValueError("contexts must be a non-empty sequence of positive ints, got none")
    return sorted(values)


# Markers of different attention kinds at one (h d_k, h) are spread along the line of constant d_k by this
# factor (in both d_model and h), so that none hides another: about 10 points apart on these axes.
_KIND_SPREAD = 2**0.15
_LABEL_BOX = {"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}


def _wrap(names: Sequence[str], width: int) -> str:
    """Names joined by commas, a new line before a name that would make a line longer than ``width``."""
    lines = [names[0]]
    for name in names[1:]:
        if len(lines[-1]) + 2 + len(name) <= width:
            lines[-1] += f", {name}"
        else:
            lines[-1] += ","
            lines.append(name)
    return "\n".join(lines)


def _names_by_kind(configs: Sequence[ModelConfig]) -> dict[str, dict[tuple[int, int], list[str]]]:
    """``{kind: {(h d_k, h): [names]}}``: models of one kind at one ``(h d_k, h)`` share a marker. A model
    whose ``d_model`` differs from ``h d_k`` is named with its ``d_model``."""
    points: dict[str, dict[tuple[int, int], list[str]]] = {kind: defaultdict(list) for kind in _STYLE}
    for c in configs:
        width = c.h * c.d_k
        name = c.name if width == c.d_model else f"{c.name} (d_model {c.d_model})"
        points[c.attention][(width, c.h)].append(name)
    return {kind: dict(at) for kind, at in points.items() if at}


def plot_head_widths(models: Iterable[str | ModelConfig] | None = None) -> Figure:
    """Scatter of heads ``h`` against the width of all heads together, ``h d_k`` (log scales), with lines
    of constant ``d_k``.

    ``h d_k`` is ``d_model`` for most models; where a model sets its head width apart (Gemma 2 and 3,
    gpt-oss, DeepSeek-V3), its label gives its ``d_model`` too. Points are marked by attention kind (MHA,
    GQA, MQA, MLA); models of one kind at the same ``(h d_k, h)`` share a marker and a label. Where kinds
    meet at one point (LLaMA 7B, MHA, and Llama 3.1 8B, GQA, both have 32 heads of 128), their markers are
    spread along the line of constant ``d_k``, MHA lowest, and each label, in its kind's colour, names the
    kind, so that no model seems to use another's attention.

    Args:
        models: names or configs; ``None``: every model of :data:`mha.costs.MODEL_CONFIGS` but those of
            :data:`mha.costs.MODELS_2025_2026`, whose layers often have two head widths (Gemma 4's 256 and
            512) or one key that is also the value (DeepSeek-V4), which one point per model cannot show.
    """
    if models is None:  # one point per model: the models whose layers have one head width
        models = [name for name in MODEL_CONFIGS if name not in MODELS_2025_2026]
    configs = _configs(models)
    fig, ax = subplots(figsize=(9.2, 5.4), layout="constrained")
    xs = [c.h * c.d_k for c in configs]
    lo, hi = min(xs) / 4, max(xs) * 1.5
    for d_k, style in ((64, ":"), (128, "--"), (256, "-.")):
        ax.plot([lo, hi], [lo / d_k, hi / d_k], style, color="grey", lw=1, label=kept(f"d_k = {d_k}"))
    points = _names_by_kind(configs)
    kinds_at: dict[tuple[int, int], list[str]] = defaultdict(list)  # the kinds at each point, MHA first
    for kind, at in points.items():
        for point in at:
            kinds_at[point].append(kind)
    for kind, at in points.items():
        marker, colour = _STYLE[kind]
        xy = []
        for (d_model, h), names in at.items():
            kinds = kinds_at[(d_model, h)]
            shift = _KIND_SPREAD ** (kinds.index(kind) - (len(kinds) - 1) / 2)  # 1 where one kind
            xy.append((d_model * shift, h * shift))
            # a label goes left of its marker where another marker sits just right of it and not below
            crowded = any(1 < x / d_model <= 1.3 and 1 <= y / h <= 1.3 for x, y in kinds_at)
            if len(kinds) == 1:  # the small models crowd together: one line each, on the left
                left, text, colour_of_text, va = d_model <= 1024 or crowded, names, "black", "center"
                offset = (-7 if left else 7, 0)
            else:  # beside the markers, in colour: the first kind's label below right, the others' above
                left, text, colour_of_text = False, [*names[:-1], f"{names[-1]} ({kind})"], colour
                va, offset = ("top", (5, -3)) if kind == kinds[0] else ("bottom", (5, 3))
                if kind != kinds[0] and crowded:
                    left, offset = True, (-5, 3)
            ax.annotate(kept(_wrap(text, 30 if len(kinds) == 1 else 42)), xy[-1], xytext=offset,
                        textcoords="offset points", fontsize=TEXT_PT, color=colour_of_text, va=va,
                        ha="right" if left else "left", bbox=_LABEL_BOX)  # fmt: skip
        ax.scatter(*zip(*xy, strict=True), marker=marker, color=colour, s=45, label=kept(kind), zorder=3)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlim(lo, hi * 2.5)  # room for the labels on the right
    _powers_of_two_axis(ax.xaxis, lo, hi * 2.5)
    heads = [c.h for c in configs]
    ax.set_ylim(min(heads) / 1.5, max(heads) * 1.5)  # the d_k lines run on below; the labels need the room
    _powers_of_two_axis(ax.yaxis, *ax.get_ylim())
    ax.set_xlabel(tr("h d_k, the width of all heads together (d_model for most models)"))
    ax.set_ylabel(tr("h (query heads)"))
    ax.set_title(tr("Heads grow with the width; the head width d_k mostly stays at 64 or 128"))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="lower right", fontsize=TEXT_PT)  # under the lines of constant d_k, where no model is
    return fig


def plot_attention_macs(models: Iterable[str | ModelConfig], contexts: Sequence[int]) -> Figure:
    """Multiply-adds of one attention layer over one sequence against its length, one panel per model.

    Each panel has two lines: the projections (linear in the length) and the scores (quadratic), with a
    vertical dashed line at the length ``n* = d_model + h_kv d_k`` where the two are equal (if it lies in
    the plotted range); beyond it the scores cost more.
    """
    configs = _configs(models)
    ns = _contexts(contexts)
    fig, axes = subplots(1, len(configs), figsize=(3.1 * len(configs), 3.6), layout="constrained",
                             squeeze=False)  # fmt: skip
    for c in configs:
        if c.kv_latent is not None:
            raise ValueError(f"{c.name} uses latent attention; this figure draws MHA, GQA and MQA layers")
    for ax, c in zip(axes[0], configs, strict=True):
        parts = [attention_macs_parts(c.d_model, c.h, n, n_kv_heads=c.n_kv_heads, head_dim=c.d_k) for n in ns]
        ax.plot(ns, [p for p, _ in parts], "-", color="tab:blue", label=tr("projections W_q, W_k, W_v, W_o"))
        ax.plot(ns, [s for _, s in parts], "-", color="tab:red", label=tr("scores q k^T and weights v"))
        # n*: 2 n d_model d_k (h + h_kv) = 2 h n^2 d_k, so n* = d_model (h + h_kv) / h (d_model + h_kv d_k
        # where d_model = h d_k)
        crossing = c.d_model * (c.h + c.n_kv_heads)
        crossing = crossing // c.h if crossing % c.h == 0 else crossing / c.h
        if ns[0] <= crossing <= ns[-1]:
            ax.axvline(crossing, color="grey", lw=1, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(NullLocator())  # a dozen decades: minor ticks would only slow drawing down
        _powers_of_two_axis(ax.xaxis, ns[0], ns[-1])
        ax.tick_params(axis="x", labelrotation=90)
        ax.set_xlabel(tr("sequence length n"))
        ax.set_title(kept(f"{c.name} (d_model={c.d_model}, {c.attention})"), fontsize=TEXT_PT)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel(tr("multiply-adds per layer"))
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=TEXT_PT)
    return fig


def _layers(c: ModelConfig) -> str:
    """Local and global layers in a few characters, for a legend: ``", 52 local (w 1024) + 10 global"``; the
    kinds of layer where a model mixes others (:attr:`~mha.costs.ModelConfig.pattern`)."""
    if set(c.layer_kinds) - {"full", "sliding", "chunked", "latent"} or c.kv_shared_from is not None:
        return f", {pattern_words(c.pattern)}"
    local = sum(w is not None for w in c.layer_windows)
    if not local:
        return ""
    text = ", " + tr("{local} local (w {window})", local=local, window=c.window)
    return text if local == c.n_layers else f"{text} + {tr('{n} global', n=c.n_layers - local)}"


def _layer_words(label: str) -> str:
    """A layer's :attr:`~mha.costs.layers.Layer.label` in the figure's language."""
    shared = ", reads an earlier layer's cache"
    if label.endswith(shared):
        return f"{tr(label.removesuffix(shared))}, {tr(shared.removeprefix(', '))}"
    return tr(label)


def pattern_words(pattern: str) -> str:
    """A model's :attr:`~mha.costs.ModelConfig.pattern` in the figure's language, kind by kind."""
    kinds, _, shared = pattern.partition("; ")
    text = " + ".join(tr(kind) for kind in kinds.split(" + "))
    return f"{text}; {tr(shared)}" if shared else text


def plot_kv_cache(
    models: Iterable[str | ModelConfig],
    contexts: Sequence[int],
    *,
    batch: int = 1,
    dtype: torch.dtype = torch.bfloat16,
) -> Figure:
    """Key/value-cache size against context length for decoder-only models (log-log), one line each.

    The cache is counted layer by layer (:func:`mha.costs.model_kv_cache_bytes`): a model whose layers are
    all local stops growing at its window, one with local and global layers grows more slowly. A dot marks
    each model's :attr:`~mha.costs.ModelConfig.trained_context` (the longest sequences it was trained on,
    context extension included), where it lies in the plotted range. Line styles follow the attention kind
    (MHA, GQA, MQA, MLA); the legend, below the axes so that it hides no line, names each model with its
    kind, its latent widths and its local layers.
    """
    configs = _configs(models, decoder_only=True)
    ns = _contexts(contexts)
    fig, ax = subplots(figsize=(8.5, 5.4), layout="constrained")  # within a slide's 9.5 x 5.5 inches
    for c in configs:
        gib = [model_kv_cache_bytes(c, n, batch=batch, dtype=dtype) / 2**30 for n in ns]
        marker, _ = _STYLE[c.attention]
        style = {"MHA": "-", "GQA": "--", "MQA": ":", "MLA": "-."}[c.attention]
        latent = (
            ", " + tr("latent {kv}+{rope}", kv=c.kv_latent, rope=c.rope_dim or 0)
            if c.kv_latent is not None
            else ""
        )
        if c.kv_latent is not None and c.indexer is not None and c.indexer.ratio is None:
            latent += ", " + tr("indexer {dim}", dim=c.indexer.dim)
        label = textwrap.fill(
            f"{kept(c.name)}: {kept(c.attention)}{latent}{_layers(c)}", 48, subsequent_indent="  "
        )
        (line,) = ax.plot(ns, gib, style, lw=1.8, label=label)  # long kinds of layer wrapped: a slide's width
        trained = c.trained_context
        if trained is not None and ns[0] <= trained <= ns[-1]:
            at = model_kv_cache_bytes(c, trained, batch=batch, dtype=dtype) / 2**30
            ax.plot([trained], [at], marker, color=line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    _powers_of_two_axis(ax.xaxis, ns[0], ns[-1])
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _: format_bytes(round(v * 2**30)).replace(".00", ""))
    )
    ax.set_xlabel(tr("context length (tokens)"))
    ax.set_ylabel(
        tr("KV cache, batch {batch}, {dtype}", batch=batch, dtype=str(dtype).removeprefix("torch."))
    )
    if any(c.window for c in configs):
        ax.set_title(
            tr("Key/value cache: linear in the context for global layers; local layers stop at their window")
        )
    else:  # no local layer: nothing stops
        ax.set_title(tr("Key/value cache: linear in the context"))
    ax.grid(True, which="major", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=TEXT_PT)
    return fig


def plot_layer_caches(
    layers: Sequence[tuple[str | ModelConfig, int]],
    *,
    max_context: int = 2**20,
    dtype: torch.dtype = torch.bfloat16,
) -> Figure:
    """What one layer keeps for one sequence against the context, for layers of different kinds.

    Left, on log-log axes from 1 token to ``max_context``: each layer's cache or state
    (:meth:`mha.costs.layers.Layer.cache_elements` at ``dtype``'s size). A full or latent layer grows in
    proportion to the context; a sliding layer stops at its window; a linear layer's state is flat from the
    first token; a compressed layer holds its window, then grows by one entry every ``m`` tokens. Right, token
    by token over the first 1024: how many compressed entries the compressed layers among ``layers`` hold,
    a staircase with a step every ``m`` tokens, on a log scale (no panel without a compressed layer). A layer
    that reads another layer's cache keeps nothing and draws no line on the log scale.

    Args:
        layers: ``(model, i)`` pairs, layer ``i`` (0-based) of a decoder-only model (a name in
            :data:`mha.costs.MODEL_CONFIGS` or a ``ModelConfig``).
        max_context: the longest context on the left.
        dtype: the element type of the caches.
    """
    picked = []
    for model, i in layers:
        c = get_config(model, decoder_only=True)
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < c.n_layers:
            raise ValueError(f"layer index must be an int in 0..{c.n_layers - 1} for {c.name}, got {i!r}")
        picked.append((c, i, c.layers[i]))
    if not picked:
        raise ValueError("no layers to plot")
    top = check_positive_int("max_context", max_context)
    compressed = [(c, i, layer) for c, i, layer in picked if layer.kind == "compressed"]
    fig, axes = subplots(1, 2 if compressed else 1, figsize=(9.3, 4.5), layout="constrained", squeeze=False,
                         width_ratios=[3, 2] if compressed else None)  # fmt: skip
    # (with the legend below: within a slide's 9.5 x 5.5 inches, its text at 18 px in the deck)
    ax = axes[0][0]
    ns = sorted({round(2 ** (k / 8)) for k in range(8 * top.bit_length() + 1) if round(2 ** (k / 8)) <= top})
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {type(dtype).__name__}")
    size = dtype.itemsize
    for c, i, layer in picked:
        ax.plot(
            ns,
            [layer.cache_elements(n) * size for n in ns],
            lw=1.8,
            label=textwrap.fill(
                tr("{name}, layer {i}: {label}", name=kept(c.name), i=i, label=_layer_words(layer.label)),
                44,
                subsequent_indent="  ",
            ),
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    _powers_of_two_axis(ax.xaxis, ns[0], ns[-1])
    ax.tick_params(axis="x", labelrotation=90)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(round(v)).replace(".00", "")))
    ax.set_xlabel(tr("context length (tokens)"))
    ax.set_ylabel(
        tr("one layer's cache or state, one sequence, {dtype}", dtype=str(dtype).removeprefix("torch."))
    )
    ax.set_title(
        tr("Per layer: full grows, sliding stops, linear is flat, compressed grows slowly"), fontsize=TEXT_PT
    )
    ax.grid(True, which="major", alpha=0.3)
    if compressed:
        right = axes[0][1]
        for c, i, layer in compressed:  # the entries held jump at every multiple of m: draw those corners
            first = [1, *range(layer.ratio, 1024, layer.ratio), 1024]
            right.plot(first, [n // layer.ratio for n in first], drawstyle="steps-post", lw=1.8,
                       label=tr("{name}, layer {i}: 1 per {ratio}", name=kept(c.name), i=i,
                                ratio=layer.ratio))  # fmt: skip
        right.set_yscale("log", base=2)  # 1 to 256 entries: the staircase of m = 128 stays visible
        right.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        right.set_xlabel(tr("context length (tokens)"))
        right.set_ylabel(tr("compressed entries held"))
        right.set_title(tr("Compressed layers: a step every m tokens"), fontsize=TEXT_PT)
        right.grid(True, alpha=0.3)
        right.legend(loc="lower right", fontsize=TEXT_PT)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=TEXT_PT)
    return fig
