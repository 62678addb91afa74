"""Per-head attention heatmaps: one panel per head, queries on rows, keys on columns.

Two entry points share one drawing code:

- :func:`plot_heads` draws the weights once and returns a ``matplotlib`` figure, for chapters.
- :class:`HeadPlot` holds a figure for a fixed layout (``h``, ``n_q``, ``n_k``, tokens) and redraws only the
  heatmaps when :meth:`HeadPlot.update` gets new weights, for the interactive explorer. Titles, tick labels
  and the colour bar are drawn once per layout and cached as a bitmap; an update restores that bitmap and
  draws the ``h`` images on top of it (matplotlib's "blitting"), which is about ten times faster than
  drawing a new figure.

Every panel shares one colour scale, 0 to 1, so heads can be compared by eye. A masked cell (a key the
query may not attend to) is drawn grey with dark diagonal hatching, which no weight colour looks like, so
"not allowed to attend" never looks like "attended with weight 0".

Shape legend:
    h    number of heads
    n_q  number of queries (rows of a panel)
    n_k  number of keys (columns of a panel)
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from PIL import Image

CMAP = "viridis"  # perceptually uniform and readable in greyscale and by colour-blind readers
_MASK_BASE = (0.86, 0.86, 0.86)  # light grey under the hatching of a masked cell
_MASK_LINE = (0.35, 0.35, 0.35)  # dark grey hatching lines
_HATCH_CELL = 8  # texture pixels per cell side in the mask overlay
_HATCH_PERIOD = 4  # a hatching line every this many texture pixels, i.e. two per cell
_MAX_PANEL_COLUMNS = 4
_ATOL = 1e-6  # tolerance on "weights lie in [0, 1]" and "masked weights are 0"


# ---------------------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------------------


def as_head_weights(weights: object) -> np.ndarray:
    """Return ``weights`` as a float64 array of shape ``(h, n_q, n_k)``, checked.

    Args:
        weights: a ``torch.Tensor`` or ``numpy`` array of shape ``(h, n_q, n_k)``, or ``(n_q, n_k)`` for
            one head, with values in ``[0, 1]``.

    Raises:
        TypeError: not a tensor or array, or not real-valued.
        ValueError: wrong number of dimensions, an empty axis, NaN/inf, or values outside ``[0, 1]``.
    """
    if isinstance(weights, torch.Tensor):
        if weights.is_complex() or weights.dtype == torch.bool:
            raise TypeError(f"weights must be a real-valued tensor, got dtype {weights.dtype}")
        array = weights.detach().to("cpu", torch.float64).numpy()
    elif isinstance(weights, np.ndarray):
        if weights.dtype == np.bool_ or not np.issubdtype(weights.dtype, np.number):
            raise TypeError(f"weights must be a real-valued array, got dtype {weights.dtype}")
        if np.iscomplexobj(weights):
            raise TypeError(f"weights must be a real-valued array, got dtype {weights.dtype}")
        array = weights.astype(np.float64)
    else:
        raise TypeError(f"weights must be a torch.Tensor or numpy.ndarray, got {type(weights).__name__}")
    if array.ndim == 2:
        array = array[None]  # (1, n_q, n_k)
    if array.ndim != 3:
        hint = "; for a batch (B, h, n_q, n_k) pass one example, weights[b]" if array.ndim == 4 else ""
        raise ValueError(f"weights must have shape (h, n_q, n_k) or (n_q, n_k), got {array.shape}{hint}")
    if 0 in array.shape:
        raise ValueError(f"weights must not have an empty axis, got shape (h, n_q, n_k) = {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("weights contain NaN or infinity; attention weights must be finite")
    low, high = array.min(), array.max()
    if low < -_ATOL or high > 1 + _ATOL:
        raise ValueError(
            "weights must lie in [0, 1] (they are attention probabilities), "
            f"got values in [{low:.3g}, {high:.3g}]"
        )
    return np.clip(array, 0.0, 1.0)


def as_head_mask(mask: object, shape: tuple[int, int, int]) -> np.ndarray:
    """Return ``mask`` broadcast to ``shape = (h, n_q, n_k)`` as a boolean array, checked.

    Args:
        mask: boolean ``torch.Tensor`` or ``numpy`` array, ``True`` where a query may attend to a key,
            broadcastable to ``(h, n_q, n_k)``. Leading dimensions of size 1 beyond three are dropped, so
            the ``(1, 1, 1, n_k)`` of ``mha.padding_mask([length], n_k)`` works as it is.
        shape: ``(h, n_q, n_k)``.

    Raises:
        TypeError: not a tensor or array, or not boolean.
        ValueError: cannot broadcast to ``(h, n_q, n_k)``.
    """
    if isinstance(mask, torch.Tensor):
        if mask.dtype != torch.bool:
            raise TypeError(
                f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
                "for a 0/1 mask use mask.bool()"
            )
        array = mask.detach().cpu().numpy()
    elif isinstance(mask, np.ndarray):
        if mask.dtype != np.bool_:
            raise TypeError(f"mask must have dtype bool (True = may attend), got {mask.dtype}")
        array = mask
    else:
        raise TypeError(f"mask must be a boolean torch.Tensor or numpy.ndarray, got {type(mask).__name__}")
    while array.ndim > 3 and array.shape[0] == 1:
        array = array[0]
    try:
        if array.ndim > 3:
            raise ValueError
        return np.broadcast_to(array, shape)  # (h, n_q, n_k)
    except ValueError:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} cannot broadcast to (h, n_q, n_k) = {shape}"
        ) from None


def _check_tokens(name: str, tokens: object, n: int, axis: str) -> tuple[str, ...] | None:
    if tokens is None:
        return None
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"{name} must be a sequence of strings (one per {axis}), got {type(tokens).__name__}")
    if not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{name} must contain only strings, got {[type(t).__name__ for t in tokens]}")
    if len(tokens) != n:
        raise ValueError(f"{name} has {len(tokens)} tokens but the weights have {axis} length {n}")
    return tuple(tokens)


def _check_optional_positive_int(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int or None, got {value!r}")
    return value


# ---------------------------------------------------------------------------------------------------------
# Layout: where each panel goes, in inches
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Everything that fixes the geometry and the static text of a :class:`HeadPlot`.

    Two calls with equal layouts can share one figure; anything else about a call (the weights, the mask)
    only changes pixels inside the panels.
    """

    h: int  # number of heads, one panel each
    n_q: int  # rows per panel
    n_k: int  # columns per panel
    query_tokens: tuple[str, ...] | None = None  # row labels, or None for indices
    key_tokens: tuple[str, ...] | None = None  # column labels, or None for indices
    average: bool = False  # one more panel with the mean over heads
    d_k: int | None = None  # shown in each panel's title when known
    title: str | None = None  # figure title

    @property
    def n_panels(self) -> int:
        return self.h + int(self.average)

    @property
    def grid(self) -> tuple[int, int]:
        """``(rows, columns)`` of panels: at most four columns, rows as even as possible."""
        rows = math.ceil(self.n_panels / _MAX_PANEL_COLUMNS)
        return rows, math.ceil(self.n_panels / rows)


def _label_inches(labels: Sequence[str], fontsize: float) -> float:
    """Rough width of the longest label: an average glyph is about 0.6 em wide."""
    longest = max((len(s) for s in labels), default=1)
    return 0.6 * fontsize / 72 * longest


# ---------------------------------------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------------------------------------


class HeadPlot:
    """A figure of per-head heatmaps that updates in place.

    Build it once for a layout, then call :meth:`update` with new weights and masks as often as you like;
    :meth:`to_png` renders the current state. Only the heatmaps are redrawn on an update; the titles,
    tick labels and colour bar are drawn once and kept as a bitmap.

    Args:
        h: number of heads.
        n_q: number of queries (rows).
        n_k: number of keys (columns).
        query_tokens: ``n_q`` row labels; ``None`` labels rows by index.
        key_tokens: ``n_k`` column labels; ``None`` labels columns by index.
        average: add a panel with the mean over heads.
        d_k: width of each head, shown in the panel titles when given.
        title: figure title.
        fig: a figure to draw into (it is cleared and resized); ``None`` creates a new one, outside
            ``pyplot``, so it is never shown unless you show it.
        dpi: resolution of the figure.

    Example:
        >>> plot = HeadPlot(h=2, n_q=3, n_k=3)
        >>> plot.update(torch.full((2, 3, 3), 1 / 3))
        >>> png = plot.to_png()  # bytes of the rendered figure
    """

    def __init__(
        self,
        h: int,
        n_q: int,
        n_k: int,
        *,
        query_tokens: Sequence[str] | None = None,
        key_tokens: Sequence[str] | None = None,
        average: bool = False,
        d_k: int | None = None,
        title: str | None = None,
        fig: Figure | None = None,
        dpi: float = 100,
    ) -> None:
        for name, value in (("h", h), ("n_q", n_q), ("n_k", n_k)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(average, bool):
            raise TypeError(f"average must be a bool, got {type(average).__name__}")
        if title is not None and not isinstance(title, str):
            raise TypeError(f"title must be a str or None, got {type(title).__name__}")
        if fig is not None and not isinstance(fig, Figure):
            raise TypeError(f"fig must be a matplotlib.figure.Figure or None, got {type(fig).__name__}")
        self.layout = Layout(
            h=h,
            n_q=n_q,
            n_k=n_k,
            query_tokens=_check_tokens("query_tokens", query_tokens, n_q, "query"),
            key_tokens=_check_tokens("key_tokens", key_tokens, n_k, "key"),
            average=average,
            d_k=_check_optional_positive_int("d_k", d_k),
            title=title,
        )
        self.figure = Figure(dpi=dpi) if fig is None else fig
        if self.figure.canvas is None or not isinstance(self.figure.canvas, FigureCanvasAgg):
            FigureCanvasAgg(self.figure)  # attaches itself as figure.canvas
        self.figure.clear()
        self.axes: list = []
        self.images: list[AxesImage] = []  # the heatmaps, one per panel
        self.overlays: list[AxesImage] = []  # the hatched masked cells, one per panel
        self._mask_key: list = []  # legend swatch and text for masked cells
        self._background = None  # cached bitmap of everything but the panels' contents
        self._background_key: tuple | None = None
        self.weights: np.ndarray | None = None  # (h, n_q, n_k), what is drawn now
        self.mask: np.ndarray | None = None  # (h, n_q, n_k) or None
        self._build()

    # -- building ------------------------------------------------------------------------------------------

    def _build(self) -> None:
        lay = self.layout
        rows, cols = lay.grid
        tick_size, title_size = 8.0, 9.0
        q_labels = lay.query_tokens or tuple(str(i) for i in range(lay.n_q))
        k_labels = lay.key_tokens or tuple(str(i) for i in range(lay.n_k))

        # Geometry in inches: cells about 0.2 in, panels between 1.3 and 3 in, margins fitted to labels.
        panel_w = min(max(0.2 * lay.n_k, 1.3), 3.0)
        panel_h = min(max(0.2 * lay.n_q, 1.3), 3.0)
        left = 0.45 + _label_inches(q_labels, tick_size)
        bottom = 0.4 + _label_inches(k_labels, tick_size)
        top = 0.35 + (0.3 if lay.title else 0.0)
        right = 1.25  # colour bar and the key for masked cells
        gap_w, gap_h = 0.25, 0.4
        if lay.n_panels % cols:  # a short last row: the panels above its gap carry key labels
            gap_h += _label_inches(k_labels, tick_size) + 0.2
        width = left + cols * panel_w + (cols - 1) * gap_w + right
        height = bottom + rows * panel_h + (rows - 1) * gap_h + top
        fig = self.figure
        fig.set_size_inches(width, height)

        def rect(x0: float, y0: float, w: float, h: float) -> list[float]:
            return [x0 / width, y0 / height, w / width, h / height]

        norm = Normalize(vmin=0.0, vmax=1.0)
        blank = np.zeros((lay.n_q, lay.n_k))  # (n_q, n_k)
        blank_overlay = np.zeros((lay.n_q * _HATCH_CELL, lay.n_k * _HATCH_CELL, 4))  # transparent texture
        extent = (-0.5, lay.n_k - 0.5, lay.n_q - 0.5, -0.5)  # (left, right, bottom, top): row 0 at the top
        for p in range(lay.n_panels):
            r, c = divmod(p, cols)
            x0 = left + c * (panel_w + gap_w)
            y0 = bottom + (rows - 1 - r) * (panel_h + gap_h)
            ax = fig.add_axes(rect(x0, y0, panel_w, panel_h))
            image = ax.imshow(blank, cmap=CMAP, norm=norm, interpolation="nearest", aspect="auto")
            overlay = ax.imshow(blank_overlay, interpolation="nearest", aspect="auto", extent=extent)
            ax.set_xlim(-0.5, lay.n_k - 0.5)
            ax.set_ylim(lay.n_q - 0.5, -0.5)
            if p < lay.h:
                head_title = f"head {p}" + (f" (d_k={lay.d_k})" if lay.d_k else "")
            else:
                head_title = f"mean of {lay.h} heads"
            ax.set_title(head_title, fontsize=title_size, pad=3)
            ax.set_xticks(range(lay.n_k))
            ax.set_yticks(range(lay.n_q))
            ax.tick_params(length=2, pad=1.5, labelsize=tick_size)
            if c == 0:
                ax.set_yticklabels(q_labels)
                ax.set_ylabel("query", fontsize=title_size, labelpad=2)
            else:
                ax.set_yticklabels([])
            if p + cols >= lay.n_panels:  # no panel below: label the keys here
                ax.set_xticklabels(k_labels, rotation=90)
                ax.set_xlabel("key", fontsize=title_size, labelpad=2)
            else:
                ax.set_xticklabels([])
            self.axes.append(ax)
            self.images.append(image)
            self.overlays.append(overlay)

        grid_top = bottom + rows * panel_h + (rows - 1) * gap_h
        bar_x = left + cols * panel_w + (cols - 1) * gap_w + 0.25
        bar_h = min(grid_top - bottom, 3.0)
        cax = fig.add_axes(rect(bar_x, grid_top - bar_h, 0.14, bar_h))
        bar = fig.colorbar(self.images[0], cax=cax, ticks=[0, 0.25, 0.5, 0.75, 1])
        bar.ax.tick_params(labelsize=tick_size, length=2)
        bar.set_label("attention weight", fontsize=title_size, labelpad=3)
        key_y = grid_top - bar_h - 0.55
        swatch = Rectangle(
            (bar_x / width, key_y / height),
            0.22 / width,
            0.22 / height,
            transform=fig.transFigure,
            facecolor=_MASK_BASE,
            edgecolor=_MASK_LINE,
            hatch="////",
            linewidth=0.6,
        )
        fig.add_artist(swatch)
        text = fig.text(
            (bar_x + 0.3) / width, (key_y + 0.11) / height, "masked", fontsize=tick_size, va="center"
        )
        self._mask_key = [swatch, text]
        if lay.title:
            fig.suptitle(lay.title, fontsize=10, y=1 - 0.12 / height, va="top")
        self._hatch = _hatch_texture(lay.n_q, lay.n_k)  # (n_q * s, n_k * s, 4), opaque

    # -- updating ------------------------------------------------------------------------------------------

    def update(self, weights: object, mask: object | None = None) -> None:
        """Show new weights (and mask) in the existing panels.

        Args:
            weights: shape ``(h, n_q, n_k)`` of this plot's layout (or ``(n_q, n_k)`` when ``h == 1``),
                values in ``[0, 1]``; a tensor or an array.
            mask: optional boolean mask, ``True`` = may attend, broadcastable to ``(h, n_q, n_k)``. Masked
                cells are drawn hatched; their weights must be 0.

        Raises:
            TypeError, ValueError: as :func:`plot_heads`, or weights whose shape is not this layout's.
        """
        lay = self.layout
        w = as_head_weights(weights)  # (h, n_q, n_k)
        if w.shape != (lay.h, lay.n_q, lay.n_k):
            raise ValueError(
                f"weights of shape {w.shape} do not fit this plot's layout (h, n_q, n_k) = "
                f"{(lay.h, lay.n_q, lay.n_k)}; build a new HeadPlot for a new layout"
            )
        m = None if mask is None else as_head_mask(mask, w.shape)  # (h, n_q, n_k)
        if m is not None:
            leak = np.abs(np.where(m, 0.0, w)).max()
            if leak > _ATOL:
                raise ValueError(
                    f"weights are nonzero (up to {leak:.3g}) where the mask is False; "
                    "pass the mask the weights were computed with"
                )
        panels = list(w)
        masks = [None] * lay.h if m is None else list(m)
        if lay.average:
            panels.append(w.mean(axis=0))  # (n_q, n_k)
            masks.append(None if m is None else m.any(axis=0))  # masked where no head may attend
        for image, overlay, panel, panel_mask in zip(self.images, self.overlays, panels, masks, strict=True):
            image.set_data(panel)
            overlay.set_data(self._overlay(panel_mask))
        for artist in self._mask_key:
            artist.set_visible(m is not None and not m.all())
        self.weights, self.mask = w, None if m is None else np.array(m)

    def _overlay(self, panel_mask: np.ndarray | None) -> np.ndarray:
        """Texture showing the hatching where ``panel_mask`` is False, transparent elsewhere."""
        texture = self._hatch.copy()  # (n_q * s, n_k * s, 4)
        if panel_mask is None:
            texture[..., 3] = 0.0
        else:
            hidden = np.repeat(np.repeat(~panel_mask, _HATCH_CELL, axis=0), _HATCH_CELL, axis=1)
            texture[..., 3] = hidden  # (n_q * s, n_k * s): opaque exactly on masked cells
        return texture

    # -- rendering -----------------------------------------------------------------------------------------

    def render(self) -> np.ndarray:
        """Draw the current state and return the pixels, shape ``(height, width, 4)``, dtype uint8.

        The first call for a layout draws everything and caches the static part (titles, labels, colour
        bar); later calls restore that cache and draw only the heatmaps on top of it.
        """
        if self.weights is None:
            raise RuntimeError("nothing to render yet: call update(weights) first")
        canvas = self.figure.canvas
        key = (self.figure.bbox.bounds, self._mask_key[0].get_visible())
        if self._background is None or self._background_key != key:
            dynamic = [*self.images, *self.overlays]
            for artist in dynamic:
                artist.set_visible(False)
            canvas.draw()
            self._background = canvas.copy_from_bbox(self.figure.bbox)
            self._background_key = key
            for artist in dynamic:
                artist.set_visible(True)
        canvas.restore_region(self._background)
        for ax, image, overlay in zip(self.axes, self.images, self.overlays, strict=True):
            ax.draw_artist(image)
            ax.draw_artist(overlay)
            for spine in ax.spines.values():  # the frame sits on top of the image, as in a full draw
                ax.draw_artist(spine)
        return np.asarray(canvas.buffer_rgba())

    def to_png(self, *, compress_level: int = 1) -> bytes:
        """Render the current state as PNG bytes (fast compression by default, for live updates)."""
        pixels = self.render()  # (height, width, 4)
        buffer = io.BytesIO()
        Image.fromarray(pixels[..., :3]).save(buffer, format="png", compress_level=compress_level)
        return buffer.getvalue()


def _hatch_texture(n_q: int, n_k: int) -> np.ndarray:
    """Opaque RGBA texture of grey cells with dark diagonal lines, ``_HATCH_CELL`` pixels per cell."""
    rows = np.arange(n_q * _HATCH_CELL)[:, None]  # (n_q * s, 1)
    cols = np.arange(n_k * _HATCH_CELL)[None, :]  # (1, n_k * s)
    line = (rows + cols) % _HATCH_PERIOD == 0  # (n_q * s, n_k * s)
    texture = np.empty((*line.shape, 4))  # (n_q * s, n_k * s, 4)
    texture[..., :3] = np.where(line[..., None], _MASK_LINE, _MASK_BASE)
    texture[..., 3] = 1.0
    return texture


def plot_heads(
    weights: object,
    *,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    mask: object | None = None,
    average: bool = False,
    title: str | None = None,
    fig: Figure | None = None,
    d_k: int | None = None,
) -> Figure:
    """Draw one heatmap per head on a shared 0–1 colour scale and return the figure.

    Rows are queries and columns keys, so row ``i`` of panel ``j`` shows where query ``i`` looks in head
    ``j``. Masked cells are hatched grey, never confused with a weight of 0.

    Args:
        weights: attention weights of shape ``(h, n_q, n_k)``, or ``(n_q, n_k)`` for one head, as a
            tensor or an array with values in ``[0, 1]``; e.g. ``weights[0]`` of
            ``out, weights = mha.MultiHeadAttention(...)(x)``.
        query_tokens: ``n_q`` strings labelling the rows; ``None`` labels them by position.
        key_tokens: ``n_k`` strings labelling the columns. ``None`` reuses ``query_tokens`` when
            ``n_q == n_k`` (self-attention), else labels by position.
        mask: optional boolean mask, ``True`` = may attend, broadcastable to ``(h, n_q, n_k)``, e.g.
            ``mha.causal_mask(n)`` of shape ``(n_q, n_k)``. The weights must be 0 where it is False.
        average: add a panel with the mean over heads (a cell is hatched there if every head masks it).
        title: figure title.
        fig: a figure to draw into; it is cleared and resized. ``None`` creates one with ``pyplot``, so a
            notebook shows it once at the end of the cell like any matplotlib figure.
        d_k: width of each head, shown in each panel's title when given.

    Returns:
        The ``matplotlib.figure.Figure``; this function never calls ``plt.show``.

    Raises:
        TypeError: weights or mask of the wrong type or dtype, tokens that are not strings.
        ValueError: weights of the wrong shape, outside ``[0, 1]`` or non-finite; a mask that does not
            broadcast or hides nonzero weights; the wrong number of tokens.

    Example:
        >>> attn = MultiHeadAttention(d_model=16, h=4)
        >>> _, weights = attn(torch.randn(1, 5, 16), mask=causal_mask(5))  # (1, 4, 5, 5)
        >>> fig = plot_heads(weights[0], mask=causal_mask(5), d_k=attn.d_k)
    """
    w = as_head_weights(weights)  # (h, n_q, n_k)
    h, n_q, n_k = w.shape
    if key_tokens is None and query_tokens is not None and n_q == n_k:
        key_tokens = query_tokens
    if fig is None:
        import matplotlib.pyplot as plt  # only here: pyplot picks a backend, which the explorer never needs

        fig = plt.figure()
    plot = HeadPlot(
        h,
        n_q,
        n_k,
        query_tokens=query_tokens,
        key_tokens=key_tokens,
        average=average,
        d_k=d_k,
        title=title,
        fig=fig,
    )
    plot.update(w, mask)
    return fig
