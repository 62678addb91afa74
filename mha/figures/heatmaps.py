"""Per-head attention heatmaps: one panel per head, queries on rows, keys on columns.

Two entry points share one drawing code:

- :func:`plot_heads` draws the weights once and returns a ``matplotlib`` figure, for chapters.
- :class:`HeadPlot` keeps a figure for one layout (``h``, ``n_q``, ``n_k``) and changes it in place, for the
  interactive explorer. Drawing a figure of eight panels from scratch takes matplotlib a tenth of a second
  or more, mostly for its text; so the plot caches bitmaps of the frame and of the text, and an update
  draws only the ``h`` heatmaps on top of them (matplotlib's "blitting"), several times faster.

Every panel shares one colour scale, 0 to 1, so heads can be compared by eye. A masked cell (a key the
query may not attend to) is light grey with dark diagonal hatching, unlike any colour of the scale, so
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

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import Bbox, offset_copy
from PIL import Image

from mha._checks import check_positive_int
from mha.figures import _pyplot

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


# ---------------------------------------------------------------------------------------------------------
# The figure
# ---------------------------------------------------------------------------------------------------------


def _label_inches(labels: Sequence[str], fontsize: float, at_least: int) -> float:
    """Room for the longest label, at least ``at_least`` characters, rounded up to 4 characters.

    An average glyph is about 0.6 em wide. The rounding keeps the figure's size, and the cached drawing of
    its frame, when new labels are about as long as the old ones.
    """
    longest = max(at_least, *(len(s) for s in labels))
    return 0.6 * fontsize / 72 * 4 * math.ceil(longest / 4)


class HeadPlot:
    """A figure of per-head heatmaps that updates in place.

    Build it once for a layout (``h``, ``n_q``, ``n_k``, ``average``); then :meth:`update` shows new
    weights and masks, :meth:`set_labels` new tokens and titles, and :meth:`render` or :meth:`to_png` draws
    the result. Drawing is cached in two layers: the frame (panel borders, colour bar) once per figure
    size, and the text (titles, token labels) once per set of labels; an update restores the cached
    bitmap and draws only the heatmaps on top of it. A full ``figure.savefig`` draws the same picture
    without the caches.

    Args:
        h: number of heads.
        n_q: number of queries (rows of each panel).
        n_k: number of keys (columns of each panel).
        query_tokens: ``n_q`` row labels; ``None`` labels rows by position.
        key_tokens: ``n_k`` column labels; ``None`` labels columns by position.
        average: add a panel with the mean over heads.
        d_k: width of each head, shown in the panel titles when given.
        title: figure title.
        fig: a figure to draw into (it is cleared and resized); ``None`` creates one outside ``pyplot``,
            which is never shown unless you show it.
        dpi: resolution of a new figure.
        label_chars: room to keep for labels of at least this many characters, so that relabelling with
            tokens up to that long keeps the figure's size (and its cached frame).

    Attributes:
        figure: the ``matplotlib.figure.Figure``.
        axes: the ``h`` (or ``h + 1`` with ``average``) panels, head 0 first, the mean last.
        images: the heatmap of each panel, an ``AxesImage`` of shape ``(n_q, n_k)``.
        overlays: the hatching of each panel's masked cells, an RGBA ``AxesImage``.
        weights: the weights shown, shape ``(h, n_q, n_k)``, or ``None`` before the first update.
        mask: the mask shown, broadcast to ``(h, n_q, n_k)``, or ``None``.

    Example:
        >>> plot = HeadPlot(h=2, n_q=3, n_k=3)
        >>> plot.update(torch.full((2, 3, 3), 1 / 3))
        >>> png = plot.to_png()  # bytes of the rendered figure
    """

    TICK_SIZE = 8.0  # points, token labels and colour bar ticks
    TITLE_SIZE = 9.0  # points, panel titles and axis names

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
        label_chars: int = 1,
    ) -> None:
        for name, value in (("h", h), ("n_q", n_q), ("n_k", n_k), ("label_chars", label_chars)):
            check_positive_int(name, value)
        if not isinstance(average, bool):
            raise TypeError(f"average must be a bool, got {type(average).__name__}")
        if fig is not None and not isinstance(fig, Figure):
            raise TypeError(f"fig must be a matplotlib.figure.Figure or None, got {type(fig).__name__}")
        self.h, self.n_q, self.n_k, self.average = h, n_q, n_k, average
        self._label_chars = label_chars
        self.figure = Figure(dpi=dpi) if fig is None else fig
        if not isinstance(self.figure.canvas, FigureCanvasAgg):
            FigureCanvasAgg(self.figure)  # attaches itself as figure.canvas
        self.figure.clear()
        self.axes: list[Axes] = []
        self.images: list[AxesImage] = []
        self.overlays: list[AxesImage] = []
        self.weights: np.ndarray | None = None  # (h, n_q, n_k)
        self.mask: np.ndarray | None = None  # (h, n_q, n_k)
        self._labels: tuple = ()  # (query labels, key labels, d_k, title) as last set
        # Cached drawings, each with the key it was drawn for: the frame as a bitmap of the whole figure,
        # the two kinds of text as bitmaps of the (disjoint) regions they cover.
        self._frame_cache = None  # (geometry, bitmap): panel areas, colour bar; no text
        self._label_cache = None  # ((geometry, tokens), regions): token labels, axis names
        self._title_cache = None  # ((geometry, d_k, title), regions): panel and figure titles
        self._build()
        self.set_labels(query_tokens=query_tokens, key_tokens=key_tokens, d_k=d_k, title=title)

    @property
    def n_panels(self) -> int:
        return self.h + int(self.average)

    @property
    def grid(self) -> tuple[int, int]:
        """``(rows, columns)`` of panels: at most four columns, rows as even as possible."""
        rows = math.ceil(self.n_panels / _MAX_PANEL_COLUMNS)
        return rows, math.ceil(self.n_panels / rows)

    # -- building: artists once per layout, positions whenever the labels need more room ------------------

    def _build(self) -> None:
        fig, cols = self.figure, self.grid[1]
        norm = Normalize(vmin=0.0, vmax=1.0)
        extent = (-0.5, self.n_k - 0.5, self.n_q - 0.5, -0.5)  # (left, right, bottom, top): row 0 on top
        transparent = np.zeros(
            (self.n_q * _HATCH_CELL, self.n_k * _HATCH_CELL, 4), np.uint8
        )  # (n_q s, n_k s, 4)
        self._row_labels: list[list[Text]] = []  # per panel in the first column, one Text per query
        self._col_labels: list[list[Text]] = []  # per panel with no panel below, one Text per key
        for p in range(self.n_panels):
            ax = fig.add_axes((0, 0, 1, 1), xticks=[], yticks=[])  # placed by _place
            image = ax.imshow(np.zeros((self.n_q, self.n_k)), cmap=CMAP, norm=norm, interpolation="nearest")
            overlay = ax.imshow(transparent, interpolation="nearest", extent=extent)
            ax.set(aspect="auto", xlim=(-0.5, self.n_k - 0.5), ylim=(self.n_q - 0.5, -0.5))
            ax.title.set_fontsize(self.TITLE_SIZE)
            # Labels are plain texts, not tick labels: matplotlib's ticks cost more than the rest together.
            if p % cols == 0:  # first column: a label left of each row
                left = offset_copy(ax.transData, fig=fig, x=-3, units="points")
                rows = [(-0.5, i) for i in range(self.n_q)]
                self._row_labels.append(self._texts(ax, rows, left, ha="right", va="center"))
            if p + cols >= self.n_panels:  # no panel below: a label under each column
                below = offset_copy(ax.transData, fig=fig, y=-3, units="points")
                columns = [(j, self.n_q - 0.5) for j in range(self.n_k)]
                self._col_labels.append(self._texts(ax, columns, below, ha="center", va="top", rotation=90))
            self.axes.append(ax)
            self.images.append(image)
            self.overlays.append(overlay)
        self._cax = fig.add_axes((0, 0, 1, 1))
        bar = fig.colorbar(self.images[0], cax=self._cax, ticks=[0, 0.25, 0.5, 0.75, 1])
        bar.ax.tick_params(labelsize=self.TICK_SIZE, length=2)
        bar.set_label("attention weight", fontsize=self.TITLE_SIZE, labelpad=3)
        self._query_name = fig.text(
            0, 0, "query", rotation=90, ha="left", va="center", fontsize=self.TITLE_SIZE
        )
        self._key_name = fig.text(0, 0, "key", ha="center", va="bottom", fontsize=self.TITLE_SIZE)
        self._suptitle = fig.text(0, 0, "", ha="center", va="top", fontsize=10)
        self._swatch = Rectangle(
            (0, 0), 1, 1, transform=fig.transFigure, facecolor=_MASK_BASE, edgecolor=_MASK_LINE,
            hatch="////", linewidth=0.6, visible=False,
        )  # fmt: skip
        fig.add_artist(self._swatch)
        self._swatch_text = fig.text(0, 0, "masked", fontsize=self.TICK_SIZE, va="center", visible=False)
        self._hatch = _hatch_texture(self.n_q, self.n_k)  # (n_q * s, n_k * s, 4), opaque

    def _texts(self, ax: Axes, positions: Sequence[tuple[float, float]], transform, **style) -> list[Text]:
        """Empty label texts at ``positions`` (data coordinates of ``ax``, shifted by ``transform``)."""
        return [
            ax.text(x, y, "", transform=transform, fontsize=self.TICK_SIZE, **style) for x, y in positions
        ]

    def _label_texts(self) -> list[Text]:
        """The texts that change with the tokens: the labels of rows and columns, and the axis names."""
        labels = [t for group in (*self._row_labels, *self._col_labels) for t in group]
        return [*labels, self._query_name, self._key_name]

    def _title_texts(self) -> list[Text]:
        """The texts that change with ``d_k`` and the title."""
        return [*(ax.title for ax in self.axes), self._suptitle]

    def _place(self) -> tuple[float, ...]:
        """Size the figure and place the panels, in inches, to fit the current labels; return the geometry."""
        (rows, cols), (q_labels, k_labels, _, title) = self.grid, self._labels
        panel_w = min(max(0.2 * self.n_k, 1.3), 3.0)  # cells about 0.2 in, panels 1.3 to 3 in
        panel_h = min(max(0.2 * self.n_q, 1.3), 3.0)
        left = 0.4 + _label_inches(q_labels, self.TICK_SIZE, self._label_chars)
        bottom = 0.35 + _label_inches(k_labels, self.TICK_SIZE, self._label_chars)
        top = 0.3 + (0.3 if title else 0.0)
        right = 1.2  # colour bar and the key for masked cells
        gap_w, gap_h = 0.25, 0.35
        if self.n_panels % cols:  # a short last row: the panels above its gap carry key labels
            gap_h += _label_inches(k_labels, self.TICK_SIZE, self._label_chars) + 0.2
        # Whole pixels, so that panels lie a whole number of pixels apart (see _draw_labels).
        dpi = self.figure.dpi
        panel_w, panel_h, left, bottom, top, right, gap_w, gap_h = (
            round(inches * dpi) / dpi for inches in (panel_w, panel_h, left, bottom, top, right, gap_w, gap_h)
        )
        width = left + cols * panel_w + (cols - 1) * gap_w + right
        height = bottom + rows * panel_h + (rows - 1) * gap_h + top
        geometry = (width, height, left, bottom)
        if self._frame_cache is not None and self._frame_cache[0] == geometry:
            return geometry
        fig = self.figure
        fig.set_size_inches(width, height)

        def rect(x0: float, y0: float, w: float, h: float) -> tuple[float, float, float, float]:
            return (x0 / width, y0 / height, w / width, h / height)

        for p, ax in enumerate(self.axes):
            r, c = divmod(p, cols)
            ax.set_position(
                rect(
                    left + c * (panel_w + gap_w),
                    bottom + (rows - 1 - r) * (panel_h + gap_h),
                    panel_w,
                    panel_h,
                )
            )
        grid_top = bottom + rows * panel_h + (rows - 1) * gap_h
        bar_x = left + cols * panel_w + (cols - 1) * gap_w + 0.25
        bar_h = min(grid_top - bottom, 3.0)
        self._cax.set_position(rect(bar_x, grid_top - bar_h, 0.14, bar_h))
        key_y = grid_top - bar_h - 0.55
        self._swatch.set_bounds(*rect(bar_x, key_y, 0.22, 0.22))
        self._swatch_text.set_position(((bar_x + 0.3) / width, (key_y + 0.11) / height))
        self._suptitle.set_position((0.5, 1 - 0.1 / height))
        self._grid_box = (left, bottom, width - right, grid_top, width, height)
        return geometry

    def _place_axis_names(self) -> None:
        """Put "query" and "key" just beyond the labels actually shown (the room kept may be wider)."""
        left, bottom, right, top, width, height = self._grid_box
        q_labels, k_labels = self._labels[:2]
        q_room = _label_inches(q_labels, self.TICK_SIZE, 1)
        k_room = _label_inches(k_labels, self.TICK_SIZE, 1)
        self._query_name.set_position((max(left - q_room - 0.3, 0.05) / width, (bottom + top) / 2 / height))
        self._key_name.set_position(((left + right) / 2 / width, max(bottom - k_room - 0.3, 0.05) / height))

    def set_labels(
        self,
        *,
        query_tokens: Sequence[str] | None = None,
        key_tokens: Sequence[str] | None = None,
        d_k: int | None = None,
        title: str | None = None,
    ) -> None:
        """Replace the token labels, the ``d_k`` in the panel titles and the figure title.

        Args:
            query_tokens: ``n_q`` row labels; ``None`` labels rows by position.
            key_tokens: ``n_k`` column labels; ``None`` labels columns by position.
            d_k: width of each head, shown in the panel titles when given.
            title: figure title, or ``None`` for none.
        """
        q = _check_tokens("query_tokens", query_tokens, self.n_q, "query")
        k = _check_tokens("key_tokens", key_tokens, self.n_k, "key")
        d_k = None if d_k is None else check_positive_int("d_k", d_k)
        if title is not None and not isinstance(title, str):
            raise TypeError(f"title must be a str or None, got {type(title).__name__}")
        q = q or tuple(str(i) for i in range(self.n_q))
        k = k or tuple(str(j) for j in range(self.n_k))
        labels = (q, k, d_k, title)
        if labels == self._labels:
            return
        self._labels = labels
        for group in self._row_labels:
            for text, label in zip(group, q, strict=True):
                text.set_text(label)
        for group in self._col_labels:
            for text, label in zip(group, k, strict=True):
                text.set_text(label)
        for p, ax in enumerate(self.axes):
            if p < self.h:
                ax.set_title(
                    f"head {p + 1}" + (f" (d_k={d_k})" if d_k else ""), fontsize=self.TITLE_SIZE, pad=3, y=1.0
                )
            else:
                ax.set_title(f"mean of {self.h} heads", fontsize=self.TITLE_SIZE, pad=3, y=1.0)
        self._suptitle.set_text(title or "")
        self._place()
        self._place_axis_names()

    # -- updating ------------------------------------------------------------------------------------------

    def update(self, weights: object, mask: object | None = None) -> None:
        """Show new weights (and mask) in the existing panels.

        Args:
            weights: shape ``(h, n_q, n_k)`` of this plot (or ``(n_q, n_k)`` when ``h == 1``), values in
                ``[0, 1]``; a tensor or an array.
            mask: optional boolean mask, ``True`` = may attend, broadcastable to ``(h, n_q, n_k)``. Masked
                cells are drawn hatched; the weights must be 0 there.

        Raises:
            TypeError, ValueError: as for :func:`plot_heads`, or weights of another shape than this plot's.
        """
        w = as_head_weights(weights)  # (h, n_q, n_k)
        if w.shape != (self.h, self.n_q, self.n_k):
            raise ValueError(
                f"weights of shape {w.shape} do not fit this plot's (h, n_q, n_k) = "
                f"{(self.h, self.n_q, self.n_k)}; build a new HeadPlot for another layout"
            )
        m = None if mask is None else as_head_mask(mask, w.shape)  # (h, n_q, n_k)
        if m is not None:
            leak = np.where(m, 0.0, w).max()
            if leak > _ATOL:
                raise ValueError(
                    f"weights are nonzero (up to {leak:.3g}) where the mask is False; "
                    "pass the mask the weights were computed with"
                )
        panels, masks = list(w), [None] * self.h if m is None else list(m)
        if self.average:
            panels.append(w.mean(axis=0))  # (n_q, n_k)
            masks.append(None if m is None else m.any(axis=0))  # hatched where no head may attend
        for image, overlay, panel, panel_mask in zip(self.images, self.overlays, panels, masks, strict=True):
            image.set_data(panel)
            overlay.set_data(self._overlay(panel_mask))
            overlay.set_visible(panel_mask is not None and not panel_mask.all())  # skip drawing it if empty
        show_key = m is not None and not m.all()
        self._swatch.set_visible(show_key)
        self._swatch_text.set_visible(show_key)
        self.weights, self.mask = w, None if m is None else np.array(m)

    def _overlay(self, panel_mask: np.ndarray | None) -> np.ndarray:
        """The hatching texture, opaque on the cells where ``panel_mask`` is False, transparent elsewhere."""
        texture = self._hatch.copy()  # (n_q * s, n_k * s, 4), uint8
        if panel_mask is None:
            texture[..., 3] = 0
        else:
            hidden = (~panel_mask).repeat(_HATCH_CELL, axis=0).repeat(_HATCH_CELL, axis=1)  # (n_q s, n_k s)
            texture[..., 3] = 255 * hidden  # opaque exactly on the masked cells
        return texture

    # -- rendering -----------------------------------------------------------------------------------------

    def render(self) -> np.ndarray:
        """Draw the current state and return its pixels, shape ``(height, width, 4)``, dtype uint8.

        The frame and the text come from the caches: the frame is drawn again only when the figure's size
        changes, the token labels when the tokens change, the titles when ``d_k`` or the title change. The
        heatmaps, the panel borders on top of them and the key for masked cells are drawn every time.
        """
        if self.weights is None:
            raise RuntimeError("nothing to render yet: call update(weights) first")
        fig, canvas = self.figure, self.figure.canvas
        geometry = self._place()
        dynamic = [*self.images, *self.overlays, self._swatch, self._swatch_text]
        if self._frame_cache is None or self._frame_cache[0] != geometry:
            spines = [spine for ax in self.axes for spine in ax.spines.values()]  # drawn over the images
            hidden = [*dynamic, *spines, *self._label_texts(), *self._title_texts()]
            visible = [a.get_visible() for a in hidden]
            for artist in hidden:
                artist.set_visible(False)
            canvas.draw()
            self._frame_cache = (geometry, canvas.copy_from_bbox(fig.bbox))
            for artist, was_visible in zip(hidden, visible, strict=True):
                artist.set_visible(was_visible)
        label_key, title_key = (geometry, *self._labels[:2]), (geometry, *self._labels[2:])
        if self._label_cache is None or self._label_cache[0] != label_key:
            canvas.restore_region(self._frame_cache[1])
            self._label_cache = (label_key, self._copy(self._draw_labels()))
        if self._title_cache is None or self._title_cache[0] != title_key:
            canvas.restore_region(self._frame_cache[1])
            self._title_cache = (title_key, self._copy(self._draw_titles()))
        canvas.restore_region(self._frame_cache[1])
        for region in (*self._label_cache[1], *self._title_cache[1]):
            canvas.restore_region(region)
        for ax, image, overlay in zip(self.axes, self.images, self.overlays, strict=True):
            ax.draw_artist(image)
            ax.draw_artist(overlay)
            for spine in ax.spines.values():  # the border sits on top of the image, as in a full draw
                ax.draw_artist(spine)
        if self._swatch.get_visible():
            fig.draw_artist(self._swatch)
            fig.draw_artist(self._swatch_text)
        return np.asarray(canvas.buffer_rgba())

    def _draw_labels(self) -> list[Bbox]:
        """Draw the token labels and axis names on the canvas; return the boxes they cover (pixels).

        One panel's labels are drawn and copied as a bitmap to the other panels of its column (row): each
        carries the same labels at the same place relative to the panel, and panels sit a whole number of
        pixels apart (see ``_place``), so the copy is exactly what drawing the labels again would give, at
        a fraction of the cost of matplotlib's text rendering.
        """
        canvas = self.figure.canvas
        boxes = []
        for groups in (self._row_labels, self._col_labels):
            first = groups[0]
            for text in first:
                text.axes.draw_artist(text)
            box = self._extent(first)
            if box is None:  # the labels lie outside the figure: nothing to copy
                continue
            strip = canvas.copy_from_bbox(box)
            x1, y1, _, _ = strip.get_extents()  # pixels, y downwards
            origin = first[0].axes.bbox
            for group in groups:
                panel = group[0].axes.bbox
                dx, dy = round(panel.x0 - origin.x0), round(panel.y0 - origin.y0)
                if group is not first:
                    canvas.restore_region(strip, xy=(x1 + dx, y1 - dy))
                boxes.append(box.translated(dx, dy))
        for name in (self._query_name, self._key_name):
            self.figure.draw_artist(name)
            boxes.append(self._extent([name]))
        return boxes

    def _draw_titles(self) -> list[Bbox]:
        """Draw the panel titles and the figure title on the canvas; return the boxes they cover."""
        boxes = []
        for text in self._title_texts():
            (text.axes or self.figure).draw_artist(text)
            boxes.append(self._extent([text]))
        return boxes

    def _extent(self, texts: Sequence[Text]) -> Bbox | None:
        """The pixels ``texts`` cover on the canvas, with a margin for antialiasing; ``None`` if off it."""
        renderer = self.figure.canvas.get_renderer()
        box = Bbox.union([text.get_window_extent(renderer) for text in texts]).padded(2)
        return Bbox.intersection(box, self.figure.bbox)

    def _copy(self, boxes: Sequence[Bbox | None]) -> list:
        """Copy the canvas inside each box, to be pasted back with ``restore_region``."""
        return [self.figure.canvas.copy_from_bbox(box) for box in boxes if box is not None]

    def to_png(self, *, compress_level: int = 1) -> bytes:
        """Render the current state as PNG bytes; the default fast compression suits live updates."""
        pixels = self.render()  # (height, width, 4)
        buffer = io.BytesIO()
        Image.fromarray(pixels[..., :3]).save(buffer, format="png", compress_level=compress_level)
        return buffer.getvalue()


def _hatch_texture(n_q: int, n_k: int) -> np.ndarray:
    """Opaque uint8 RGBA texture of grey cells with dark diagonal lines, ``_HATCH_CELL`` pixels per cell."""
    rows = np.arange(n_q * _HATCH_CELL)[:, None]  # (n_q * s, 1)
    cols = np.arange(n_k * _HATCH_CELL)[None, :]  # (1, n_k * s)
    line = (rows + cols) % _HATCH_PERIOD == 0  # (n_q * s, n_k * s)
    texture = np.empty((*line.shape, 4), dtype=np.uint8)  # (n_q * s, n_k * s, 4)
    texture[..., :3] = np.round(255 * np.where(line[..., None], _MASK_LINE, _MASK_BASE))
    texture[..., 3] = 255
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
            notebook shows it at the end of the cell like any pyplot figure: write
            ``fig = plot_heads(...)``, since a figure left as the cell's last expression is shown twice.
        d_k: width of each head, shown in each panel's title when given.

    Returns:
        The ``matplotlib.figure.Figure``; this function never calls ``plt.show``.

    Raises:
        TypeError: weights or mask of the wrong type or dtype, tokens that are not strings.
        ValueError: weights of the wrong shape, outside ``[0, 1]`` or non-finite; a mask that does not
            broadcast or hides nonzero weights; the wrong number of tokens.

    Example:
        >>> import mha
        >>> attn = mha.MultiHeadAttention(d_model=16, h=4)
        >>> _, weights = attn(torch.randn(1, 5, 16), mask=mha.causal_mask(5))  # (1, 4, 5, 5)
        >>> fig = mha.plot_heads(weights[0], mask=mha.causal_mask(5), d_k=attn.d_k)
        >>> len(fig.axes)  # four panels and a colour bar
        5
    """
    w = as_head_weights(weights)  # (h, n_q, n_k)
    h, n_q, n_k = w.shape
    if key_tokens is None and query_tokens is not None and n_q == n_k:
        key_tokens = query_tokens
    if fig is None:
        fig = _pyplot.figure()
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
