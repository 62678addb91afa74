"""Figures of a pretrained encoder's heads: one head, all heads, the census, ablations and pruning.

Every function draws numbers it is given (attention weights from :func:`mha.pretrained.attend`, a census
from :func:`mha.pretrained.head_census`, labels from :func:`mha.pretrained.classify_heads`, ablation and
pruning results from :mod:`mha.pretrained.heads` or their shipped copy); none computes model maths.

Layers and heads are passed as Python indices (0-based) and shown 1-based, as the book numbers them:
``layer=0, head=2`` is titled "layer 1, head 3". Attention weights share one colour scale, 0 to 1, in every
figure, so heads can be compared by eye. Token labels are drawn literally (a ``$`` is not mathtext).

Shape legend:
    L  number of layers
    h  heads per layer
    n  number of tokens (queries and keys: self-attention)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from book.figures import _pyplot
from book.figures._style import TEXT_PT, TITLE_PT
from book.figures._text import tr
from book.figures.heatmaps import CMAP, draw_heatmap, literal
from mha.pretrained.heads import PATTERNS

# What each label of classify_heads means, in the words of the book (and the legend's order).
PATTERN_NAMES = {
    "cls": "[CLS]",
    "sep": "[SEP]",
    "previous": "previous token",
    "next": "next token",
    "self": "itself",
    "same_token": "same word elsewhere",
    "broad": "broad (no pattern, high entropy)",
    "mixed": "mixed (focused, no single pattern)",
}
LABELS = (*PATTERNS, "broad", "mixed")  # every label classify_heads can give
# One colour per label (colour-blind-safe Okabe-Ito hues; broad light grey, mixed dark grey).
PATTERN_COLOURS = {
    "cls": "#0072B2",
    "sep": "#56B4E9",
    "previous": "#D55E00",
    "next": "#E69F00",
    "self": "#CC79A7",
    "same_token": "#009E73",
    "broad": "#D9D9D9",
    "mixed": "#7F7F7F",
}
# The census measures, as the figures name them.
MEASURE_NAMES = {
    "cls": "weight on [CLS]",
    "sep": "weight on [SEP]",
    "previous": "weight on the previous token",
    "next": "weight on the next token",
    "self": "weight on itself",
    "same_token": "weight on the same word elsewhere",
    "entropy": "entropy (nats)",
    "entropy_normalised": "entropy / log(n)",
}
FONT = TEXT_PT  # points: tick labels, legends, values in cells
TITLE = TITLE_PT  # points: titles and axis names


def _array(name: str, values: object, ndim: int) -> np.ndarray:
    """``values`` (tensor, array or nested lists) as a finite float64 array with ``ndim`` dimensions."""
    if hasattr(values, "detach"):  # a torch.Tensor
        values = values.detach().cpu().double().numpy()
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers (tensor, array, nested lists), got {values!r:.60}") from None
    if array.ndim != ndim or 0 in array.shape:
        raise ValueError(f"{name} must have {ndim} non-empty dimensions, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite")
    return array


def _weights(name: str, values: object, ndim: int) -> np.ndarray:
    array = _array(name, values, ndim)
    if array.min() < -1e-6 or array.max() > 1 + 1e-6:
        low, high = array.min(), array.max()
        raise ValueError(f"{name} are attention weights and must lie in [0, 1], got [{low:.3g}, {high:.3g}]")
    if array.shape[-1] != array.shape[-2]:
        raise ValueError(f"{name} must be square in its last two dimensions (n, n), got {array.shape}")
    return np.clip(array, 0.0, 1.0)


def _tokens(tokens: Sequence[str], n: int) -> list[str]:
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise TypeError("tokens must be a sequence of strings")
    if len(tokens) != n:
        raise ValueError(f"there are {len(tokens)} tokens but the weights have n = {n}")
    return list(tokens)


def _weight_text(w: float) -> str:
    """A weight as written in its cell: ``.42``, blank below 0.005."""
    return f"{w:.2f}".lstrip("0") if w >= 0.005 else ""


def _index(name: str, value: object, size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value < size:
        raise ValueError(f"{name} must be a 0-based index in 0..{size - 1}, got {value!r}")
    return int(value)


def plot_attention_head(
    weights: object, tokens: Sequence[str], *, layer: int, head: int, n_layers: int = 6, n_heads: int = 12
) -> Figure:
    """One head's weights on one sentence, large, with every token labelled and each weight written in.

    Args:
        weights: ``(n, n)``; row ``i`` is where query token ``i`` looks, and sums to 1.
        tokens: the ``n`` tokens.
        layer, head: 0-based indices of the head, shown 1-based in the title.
        n_layers, n_heads: the model's sizes, to check the indices.
    """
    w = _weights("weights", weights, 2)  # (n, n)
    labels = _tokens(tokens, w.shape[0])
    layer, head = _index("layer", layer, n_layers), _index("head", head, n_heads)
    n = w.shape[0]
    size = min(0.4 * n + 1.4, 5.2)  # inches: a slide shows it with its text at 18 px
    fig = _pyplot.figure(figsize=(size + 1.0, size), layout="constrained")
    ax = fig.subplots()
    norm = Normalize(0.0, 1.0)
    image = draw_heatmap(ax, w, norm=norm, row_labels=labels, col_labels=labels, fmt=_weight_text)
    ax.set_xlabel(tr("key (the token looked at)"), fontsize=TITLE)
    ax.set_ylabel(tr("query (the token looking)"), fontsize=TITLE)
    ax.set_title(tr("layer {layer}, head {head}", layer=layer + 1, head=head + 1), fontsize=TITLE)
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label(tr("attention weight"), fontsize=TITLE)
    bar.ax.tick_params(labelsize=FONT)
    return fig


def plot_head_grid(attentions: object, tokens: Sequence[str], *, title: str | None = None) -> Figure:
    """Every head of every layer on one sentence: ``L`` rows (layers) by ``h`` columns (heads) of heatmaps.

    All panels share the 0-1 colour scale. Each panel has queries on rows and keys on columns, in the
    order of ``tokens``. A panel is too small for a readable label per token (0.58 inches for all of them),
    so the bottom-left panel names only its first and last columns, at the book's smallest text size; a
    caption says what the other columns are.

    Args:
        attentions: ``(L, h, n, n)``, e.g. the weights of :func:`mha.pretrained.attend`.
        tokens: the ``n`` tokens.
        title: the figure's title.
    """
    a = _weights("attentions", attentions, 4)  # (L, h, n, n)
    L, h, n, _ = a.shape
    labels = _tokens(tokens, n)
    panel, gap = 0.58, 0.08  # inches: a panel's side, the space between panels
    ends = sorted({0, n - 1})  # the first and the last key: one label each, upright, beneath the corner panel
    longest = max(len(labels[j]) for j in ends)  # characters; at FONT points each takes under 0.085 inches
    left, right, top, bottom = 0.55, 1.0, 0.75 if title else 0.45, 0.25 + 0.085 * longest
    width, height = left + h * panel + (h - 1) * gap + right, top + L * panel + (L - 1) * gap + bottom
    fig = _pyplot.figure(figsize=(width, height))  # placed by hand: a layout engine is slow for 72 panels
    norm = Normalize(0.0, 1.0)
    axes = np.empty((L, h), dtype=object)
    for layer in range(L):
        for head in range(h):
            x0 = left + head * (panel + gap)
            y0 = height - top - (layer + 1) * panel - layer * gap
            ax = fig.add_axes((x0 / width, y0 / height, panel / width, panel / height))
            image = ax.imshow(a[layer, head], cmap=CMAP, norm=norm, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
            if layer == 0:
                ax.set_title(tr("head {head}", head=head + 1), fontsize=FONT, pad=3)
            if head == 0:
                ax.set_ylabel(tr("layer {layer}", layer=layer + 1), fontsize=FONT)
            axes[layer, head] = ax
    corner = axes[L - 1, 0]
    corner.set_xticks(ends, [literal(labels[j]) for j in ends], rotation=90, fontsize=FONT)
    corner.tick_params(axis="x", length=2, pad=2)
    bar_ax = fig.add_axes(
        (
            (width - right + 0.25) / width,
            (bottom + L * panel / 4) / height,
            0.15 / width,
            (L * panel / 2) / height,
        )
    )
    bar = fig.colorbar(image, cax=bar_ax)
    bar.set_label(tr("attention weight"), fontsize=TITLE)
    bar.ax.tick_params(labelsize=FONT)
    if title:
        fig.suptitle(literal(title), fontsize=TITLE)
    return fig


def plot_head_patterns(labels: Sequence[Sequence[str]], *, title: str | None = None) -> Figure:
    """The label of every head (:func:`mha.pretrained.classify_heads`) as an ``L`` x ``h`` grid of colours.

    Args:
        labels: ``labels[layer][head]``, each one of :data:`LABELS`.
        title: the figure's title.
    """
    rows = [list(row) for row in labels]
    if not rows or not rows[0] or any(len(row) != len(rows[0]) for row in rows):
        raise ValueError("labels must be a non-empty L x h nested list")
    unknown = sorted({x for row in rows for x in row} - set(LABELS))
    if unknown:
        raise ValueError(f"unknown labels {unknown}; expected some of {LABELS}")
    L, h = len(rows), len(rows[0])
    codes = np.array([[LABELS.index(x) for x in row] for row in rows])  # (L, h)
    cmap = ListedColormap([PATTERN_COLOURS[x] for x in LABELS])
    fig = _pyplot.figure(figsize=(0.45 * h + 3.6, 0.45 * L + 1.3), layout="constrained")
    ax = fig.subplots()
    ax.imshow(codes, cmap=cmap, vmin=-0.5, vmax=len(LABELS) - 0.5, interpolation="nearest")
    ax.set_xticks(range(h), [str(j + 1) for j in range(h)], fontsize=FONT)
    ax.set_yticks(range(L), [str(i + 1) for i in range(L)], fontsize=FONT)
    ax.set_xticks(np.arange(h + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(L + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="both", length=0)
    ax.set_xlabel(tr("head"), fontsize=TITLE)
    ax.set_ylabel(tr("layer"), fontsize=TITLE)
    counts = Counter(x for row in rows for x in row)
    handles = [
        Patch(facecolor=PATTERN_COLOURS[x], edgecolor="0.4", label=f"{tr(PATTERN_NAMES[x])}: {counts[x]}")
        for x in LABELS
        if counts[x]
    ]
    ax.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize=FONT,
        frameon=False,
        title=tr("dominant pattern: heads"),
        title_fontsize=FONT,
    )
    if title:
        ax.set_title(tr(title), fontsize=TITLE)
    return fig


def plot_census_by_layer(
    census: Mapping[str, object],
    *,
    measures: Sequence[str] = ("cls", "sep", "previous", "next", "self", "entropy_normalised"),
) -> Figure:
    """Each census measure against the layer: one dot per head, the layer's mean as a line.

    Args:
        census: :func:`mha.pretrained.head_census`'s result (or its shipped copy), ``{name: (L, h)}``.
        measures: the names to draw, one panel each.
    """
    missing = [m for m in measures if m not in census]
    if missing:
        raise ValueError(f"census lacks {missing}")
    if not measures:
        raise ValueError("measures must name at least one census measure")
    values = {m: _array(m, census[m], 2) for m in measures}  # each (L, h)
    L, h = next(iter(values.values())).shape
    cols = min(3, len(measures))
    rows = -(-len(measures) // cols)
    fig = _pyplot.figure(figsize=(2.9 * cols + 0.4, 2.3 * rows + 0.3), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    layers = np.arange(1, L + 1)
    jitter = np.linspace(-0.18, 0.18, h)  # (h,): heads side by side within a layer
    for ax, m in zip(axes, measures, strict=False):
        v = values[m]
        if v.shape != (L, h):
            raise ValueError(f"census[{m!r}] has shape {v.shape}, the others {(L, h)}")
        ax.scatter((layers[:, None] + jitter[None, :]).ravel(), v.ravel(), s=9, alpha=0.7, color="#0072B2")
        ax.plot(layers, v.mean(axis=1), color="black", linewidth=1.2, label=tr("mean over heads"))
        ax.set_title(tr(MEASURE_NAMES.get(m, m)), fontsize=TITLE)
        ax.set_xticks(layers)
        ax.tick_params(labelsize=FONT)
        if m != "entropy":
            ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel(tr("layer"), fontsize=FONT)
        ax.grid(alpha=0.3)
    for ax in axes[len(measures) :]:
        ax.remove()
    axes[0].legend(fontsize=FONT, frameon=False, loc="upper right")
    return fig


def plot_head_values(
    values: object,
    *,
    label: str,
    fmt: str = "{:.3f}",
    vmin: float | None = None,
    vmax: float | None = None,
    title: str | None = None,
) -> Figure:
    """One number per head as an ``L`` x ``h`` heatmap with the number written in each cell.

    Args:
        values: ``(L, h)``, e.g. the mean cosine with each head switched off.
        label: what the numbers are (the colour bar's label).
        fmt: how each number is written.
        vmin, vmax: the colour scale; ``None`` uses the smallest and largest value.
        title: the figure's title.
    """
    v = _array("values", values, 2)  # (L, h)
    L, h = v.shape
    norm = Normalize(v.min() if vmin is None else vmin, v.max() if vmax is None else vmax)
    fig = _pyplot.figure(figsize=(0.56 * h + 2.2, 0.45 * L + 1.2), layout="constrained")
    ax = fig.subplots()
    heads, layers = [str(j + 1) for j in range(h)], [str(i + 1) for i in range(L)]
    image = draw_heatmap(ax, v, norm=norm, row_labels=layers, col_labels=heads, fmt=fmt, fontsize=FONT)
    ax.tick_params(axis="x", labelrotation=0)
    ax.set_xlabel(tr("head"), fontsize=TITLE)
    ax.set_ylabel(tr("layer"), fontsize=TITLE)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label(tr(label), fontsize=TITLE)
    bar.ax.tick_params(labelsize=FONT)
    if title:
        ax.set_title(tr(title), fontsize=TITLE)
    return fig


def plot_pruning_curve(
    cosine: Sequence[float],
    paraphrase_accuracy: Sequence[float],
    *,
    checked: Mapping[int, float] | None = None,
) -> Figure:
    """Greedy pruning: the metric and the paraphrase accuracy against the number of heads removed.

    Args:
        cosine: ``k + 1`` values, the mean cosine to the intact embeddings after removing 0, 1, ..., k heads.
        paraphrase_accuracy: ``k + 1`` values, the share of sentences whose nearest neighbour is their
            paraphrase, at the same steps.
        checked: ``{heads removed: cosine}`` recomputed live, drawn as rings over the curve.
    """
    c = _array("cosine", cosine, 1)
    a = _array("paraphrase_accuracy", paraphrase_accuracy, 1)
    if c.shape != a.shape:
        raise ValueError(f"cosine and paraphrase_accuracy must be as long, got {c.size} and {a.size}")
    removed = np.arange(c.size)
    fig = _pyplot.figure(figsize=(7.0, 4.2), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
    top.plot(removed, c, color="#0072B2", linewidth=1.6, label=tr("stored curve"))
    if checked:
        xs = np.array(list(checked), dtype=int)
        if xs.min() < 0 or xs.max() >= c.size:
            raise ValueError(f"checked steps must lie in 0..{c.size - 1}, got {sorted(checked)}")
        top.scatter(
            xs,
            list(checked.values()),
            s=60,
            facecolors="none",
            edgecolors="#D55E00",
            linewidths=1.5,
            label=tr("recomputed live"),
            zorder=3,
        )
    top.set_ylabel(tr("mean cosine to\nthe intact embedding"), fontsize=TITLE)
    top.grid(alpha=0.3)
    top.legend(fontsize=FONT, frameon=False, loc="lower left")
    top.tick_params(labelsize=FONT)
    bottom.plot(removed, a, color="#009E73", linewidth=1.6, drawstyle="steps-post")
    bottom.set_ylim(-0.05, 1.05)
    bottom.set_ylabel(tr("paraphrase\nretrieval"), fontsize=TITLE)
    bottom.set_xlabel(tr("heads removed (least important first)"), fontsize=TITLE)
    bottom.grid(alpha=0.3)
    bottom.tick_params(labelsize=FONT)
    bottom.set_xlim(0, c.size - 1)
    return fig
