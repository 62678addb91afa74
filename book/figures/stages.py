"""The stages of multi-head attention as figures: one figure per stage.

:func:`plot_stage` draws one stage of :func:`book.compute.attention_stages` as small annotated heatmaps (one
per head for per-head tensors) beside the list of all stages, the current one highlighted.
:class:`book.widgets.stepper.StageStepper` puts controls in front of those figures.

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from book.compute.stages import AXIS_NAMES, STAGES, stage_decimals
from book.figures._style import TEXT_PT, TITLE_PT
from book.figures.heatmaps import draw_heatmap

_BY_KEY = {stage.key: stage for stage in STAGES}


def stage_caption(stages: Mapping[str, torch.Tensor], key: str) -> str:
    """One line naming a stage, its formula and its shape.

    Example: ``"queries: $Q = X W^Q$, shape (4, 8) = (n, d_model)"``.
    """
    stage = check_stage_key(stages, key)
    return f"{stage.title}: {stage.formula}, shape {tuple(stages[key].shape)} = {stage.shape}"


def plot_stage(
    stages: Mapping[str, torch.Tensor],
    key: str,
    *,
    tokens: Sequence[str] | None = None,
    annotate: bool = True,
    fig: Figure | None = None,
) -> Figure:
    """Draw one stage: the list of stages (this one highlighted) and the tensor as heatmaps.

    Args:
        stages: the mapping returned by :func:`mha.attention_stages`.
        key: which stage to draw, one of ``[s.key for s in mha.STAGES]``.
        tokens: optional labels for the ``n`` tokens (rows, and columns of ``(h, n, n)`` stages).
        annotate: write each entry's value in its cell.
        fig: a figure to draw into (cleared first); a new one is made if ``None``.

    Returns:
        The figure. Per-head tensors ``(h, ., .)`` get one panel per head on a shared colour scale;
        attention weights use the fixed scale 0 to 1.
    """
    stage = check_stage_key(stages, key)
    t = stages[key].detach().to("cpu", torch.float64)
    panels = t if t.dim() == 3 else t[None]  # (panels, rows, cols)
    names = [s.strip() for s in stage.shape.strip("()").split(",")][-2:]  # the row and column symbols
    n = stages["x"].size(0)
    if tokens is not None and len(tokens) != n:
        raise ValueError(f"tokens must have n={n} labels, got {len(tokens)}")
    labels = list(tokens) if tokens is not None else [str(i + 1) for i in range(n)]

    width = max(1.0, panels.size(-1) / 4)  # a panel's width relative to a square 4 x 4 one
    if fig is None:
        fig = Figure(figsize=(2.2 + 2.4 * width * len(panels) + 0.6, 3.0), layout="constrained")
    fig.clear()
    grid = fig.add_gridspec(1, len(panels) + 1, width_ratios=[2.2] + [2.4 * width] * len(panels))

    # Left: the stages in order, the current one highlighted.
    menu = fig.add_subplot(grid[0, 0])
    menu.axis("off")
    current = [s.key for s in STAGES].index(key)
    for i, s in enumerate(STAGES):
        y = 1 - (i + 0.5) / len(STAGES)
        style = {"fontsize": TEXT_PT, "transform": menu.transAxes, "va": "center"}
        if i == current:
            box = {"boxstyle": "round,pad=0.2", "facecolor": "#ffd54f", "edgecolor": "none"}
            menu.text(0.0, y, f"{i + 1}. {s.title}", fontweight="bold", bbox=box, **style)
        else:
            menu.text(0.0, y, f"{i + 1}. {s.title}", color="black" if i < current else "0.6", **style)

    # Right: one heatmap per panel, on a shared scale.
    lo, hi = (0.0, 1.0) if key == "weights" else (float(panels.min()), float(panels.max()))
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    norm = Normalize(vmin=lo, vmax=hi)
    small = panels.size(-2) * panels.size(-1) <= 100
    fmt = f"{{:.{stage_decimals(t, key)}f}}" if annotate and small else None
    for p, panel in enumerate(panels):
        ax = fig.add_subplot(grid[0, p + 1])
        rows, cols = panel.shape
        image = draw_heatmap(
            ax,
            panel.numpy(),
            norm=norm,
            row_labels=labels if names[0] == "n" else [str(i + 1) for i in range(rows)],
            col_labels=labels if names[1] == "n" else [str(j + 1) for j in range(cols)],
            fmt=fmt,
        )
        ax.tick_params(labelsize=TEXT_PT)
        if p == 0:
            ax.set_ylabel("query" if names == ["n", "n"] else AXIS_NAMES[names[0]], fontsize=TEXT_PT)
        ax.set_xlabel("key" if names == ["n", "n"] else AXIS_NAMES[names[1]], fontsize=TEXT_PT)
        if len(panels) > 1:
            ax.set_title(f"head {p + 1}", fontsize=TITLE_PT)
        h = stages["q_heads"].size(0)
        if _BY_KEY[key].side_by_side and h > 1:  # mark where each head's d_k columns begin and end
            d_k = cols // h
            for i in range(1, h):
                ax.axvline(i * d_k - 0.5, color="white", linewidth=2.5)
            for i in range(h):
                x = (i + 0.5) * d_k - 0.5
                ax.text(x, -0.6, f"head {i + 1}", ha="center", va="bottom", fontsize=TEXT_PT)
    fig.colorbar(image, ax=fig.axes[1:], shrink=0.8).ax.tick_params(labelsize=TEXT_PT)
    fig.suptitle(stage_caption(stages, key), fontsize=TITLE_PT)
    return fig


def check_stage_key(stages: Mapping[str, torch.Tensor], key: str):
    if key not in _BY_KEY:
        raise KeyError(f"unknown stage {key!r}; the stages are {[s.key for s in STAGES]}")
    missing = [s.key for s in STAGES if s.key not in stages]
    if missing:
        raise ValueError(f"stages lacks {missing}; pass the mapping returned by mha.attention_stages")
    return _BY_KEY[key]
