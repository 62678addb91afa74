"""Step through the stages of multi-head attention: one figure per stage, and a control to move between them.

:func:`plot_stage` draws one stage of :func:`mha.attention_stages` as small annotated heatmaps (one per
head for per-head tensors) beside the list of all stages, the current one highlighted.
:func:`stage_stepper` puts a slider and previous/next buttons in front of those figures.

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure

from mha.stages import STAGES

_BY_KEY = {stage.key: stage for stage in STAGES}
# Stages whose columns are the h heads side by side, d_k each.
_HEADS_SIDE_BY_SIDE = ("q", "k", "v", "concat")
_AXIS_NAMES = {"n": "token", "d_model": "dimension", "d_k": "dimension in the head"}


def _value_format(t: torch.Tensor, key: str) -> str:
    if key == "weights":
        return "{:.2f}"
    biggest = float(t.abs().max()) if t.numel() else 0.0
    return "{:.0f}" if biggest >= 100 else "{:.1f}" if biggest >= 10 else "{:.2f}"


def stage_caption(stages: Mapping[str, torch.Tensor], key: str) -> str:
    """One line naming a stage, its formula and its shape.

    Example: ``"queries: $Q = X W^Q$, shape (4, 8) = (n, d_model)"``.
    """
    stage = _check_key(stages, key)
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
    stage = _check_key(stages, key)
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
        style = {"fontsize": 8, "transform": menu.transAxes, "va": "center"}
        if i == current:
            box = {"boxstyle": "round,pad=0.2", "facecolor": "#ffd54f", "edgecolor": "none"}
            menu.text(0.0, y, f"{i + 1}. {s.title}", fontweight="bold", bbox=box, **style)
        else:
            menu.text(0.0, y, f"{i + 1}. {s.title}", color="black" if i < current else "0.6", **style)

    # Right: one heatmap per panel, on a shared scale.
    lo, hi = (0.0, 1.0) if key == "weights" else (float(panels.min()), float(panels.max()))
    if lo == hi:
        lo, hi = lo - 1.0, hi + 1.0
    fmt = _value_format(t, key)
    for p, panel in enumerate(panels):
        ax = fig.add_subplot(grid[0, p + 1])
        image = ax.imshow(panel.numpy(), cmap="viridis", vmin=lo, vmax=hi)
        rows, cols = panel.shape
        ax.set_yticks(range(rows), labels if names[0] == "n" else [str(i + 1) for i in range(rows)])
        ax.set_xticks(range(cols), labels if names[1] == "n" else [str(j + 1) for j in range(cols)])
        ax.tick_params(labelsize=7)
        if p == 0:
            ax.set_ylabel("query" if names == ["n", "n"] else _AXIS_NAMES[names[0]], fontsize=8)
        ax.set_xlabel("key" if names == ["n", "n"] else _AXIS_NAMES[names[1]], fontsize=8)
        if len(panels) > 1:
            ax.set_title(f"head {p + 1}", fontsize=9)
        h = stages["q_heads"].size(0)
        if key in _HEADS_SIDE_BY_SIDE and h > 1:  # mark where each head's d_k columns begin and end
            d_k = cols // h
            for i in range(1, h):
                ax.axvline(i * d_k - 0.5, color="white", linewidth=2.5)
            for i in range(h):
                ax.text((i + 0.5) * d_k - 0.5, -0.6, f"head {i + 1}", ha="center", va="bottom", fontsize=8)
        if annotate and rows * cols <= 100:
            for i in range(rows):
                for j in range(cols):
                    value = float(panel[i, j])
                    light = image.norm(value) < 0.5
                    ax.text(
                        j,
                        i,
                        fmt.format(value),
                        ha="center",
                        va="center",
                        fontsize=6.5,
                        color="white" if light else "black",
                    )
    fig.colorbar(image, ax=fig.axes[1:], shrink=0.8).ax.tick_params(labelsize=7)
    fig.suptitle(stage_caption(stages, key), fontsize=10)
    return fig


def _check_key(stages: Mapping[str, torch.Tensor], key: str):
    if key not in _BY_KEY:
        raise KeyError(f"unknown stage {key!r}; the stages are {[s.key for s in STAGES]}")
    missing = [s.key for s in STAGES if s.key not in stages]
    if missing:
        raise ValueError(f"stages lacks {missing}; pass the mapping returned by mha.attention_stages")
    return _BY_KEY[key]


def figure_png(fig: Figure, *, dpi: int = 100) -> bytes:
    """The figure as PNG bytes (no pyplot, no global state)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


class StageStepper(widgets.VBox):
    """A slider and previous/next buttons over the stages, showing :func:`plot_stage` of the current one.

    The picture is an ``ipywidgets.Image`` holding PNG bytes, so it needs no kernel once drawn: saved widget
    state shows it in a static page, and the display bundle also carries it as a plain ``image/png``.

    Args:
        stages: the mapping returned by :func:`mha.attention_stages`.
        tokens: optional labels for the ``n`` tokens.
        start: the stage shown first; the last stage (the output) by default.

    Attributes:
        slider: ``ipywidgets.SelectionSlider`` whose value is the current stage's key.
        previous, next: ``ipywidgets.Button`` moving one stage back or forward.
        caption: ``ipywidgets.Label`` naming the stage and its shape.
        image: ``ipywidgets.Image`` with the current figure as PNG.
    """

    def __init__(
        self, stages: Mapping[str, torch.Tensor], *, tokens: Sequence[str] | None = None, start: str = "out"
    ) -> None:
        _check_key(stages, start)
        self._stages = dict(stages)
        self._tokens = None if tokens is None else list(tokens)
        self._keys = [s.key for s in STAGES]
        options = [(f"{i + 1}. {s.title}", s.key) for i, s in enumerate(STAGES)]
        self.slider = widgets.SelectionSlider(
            options=options,
            value=start,
            description="stage",
            continuous_update=False,
            layout=widgets.Layout(width="520px"),
        )
        self.previous = widgets.Button(description="◀ previous", layout=widgets.Layout(width="110px"))
        self.next = widgets.Button(description="next ▶", layout=widgets.Layout(width="110px"))
        self.caption = widgets.Label()
        self.image = widgets.Image(format="png")
        self.previous.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))
        self.slider.observe(lambda change: self._draw(change["new"]), names="value")
        super().__init__([widgets.HBox([self.previous, self.slider, self.next]), self.caption, self.image])
        self._draw(start)

    def _move(self, step: int) -> None:
        i = min(max(self._keys.index(self.slider.value) + step, 0), len(self._keys) - 1)
        self.slider.value = self._keys[i]  # triggers _draw through the observer

    def _draw(self, key: str) -> None:
        stage = _BY_KEY[key]
        i = self._keys.index(key)
        shape = tuple(self._stages[key].shape)
        self.caption.value = (
            f"stage {i + 1} of {len(self._keys)}: {stage.title}, shape {shape} = {stage.shape}"
        )
        self.previous.disabled, self.next.disabled = i == 0, i == len(self._keys) - 1
        self.image.value = figure_png(plot_stage(self._stages, key, tokens=self._tokens))

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        # The picture, base64 as in a notebook file, for viewers that cannot show widgets, and a short
        # text instead of ipywidgets' repr (which would spell out the PNG's bytes).
        png = base64.b64encode(bytes(self.image.value)).decode("ascii")
        return {**bundle, "image/png": png, "text/plain": f"StageStepper: {self.caption.value}"}


def stage_stepper(
    stages: Mapping[str, torch.Tensor], *, tokens: Sequence[str] | None = None, start: str = "out"
) -> StageStepper:
    """Return a :class:`StageStepper` over ``stages``, showing ``start`` (the output) first."""
    return StageStepper(stages, tokens=tokens, start=start)
