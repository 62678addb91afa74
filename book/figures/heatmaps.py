"""Per-head attention heatmaps: one panel per head, queries on rows, keys on columns.

:func:`plot_heads` draws a figure for a chapter; :func:`draw_heatmap` draws one panel and is shared with the
other figures of heads (a pretrained model's, the decoder's). The interactive figures draw in the browser
instead (``book/widgets/static/``), so nothing here is on a hot path.

Every panel of :func:`plot_heads` shares one colour scale, 0 to 1, so heads can be compared by eye. A masked
cell (a key the query may not attend to) is light grey with dark diagonal hatching, unlike any colour of the
scale, so "not allowed to attend" never looks like "attended with weight 0". Token labels are drawn
literally: a ``$`` in a token is never read as matplotlib mathtext.

Shape legend:
    h    number of heads
    n_q  number of queries (rows of a panel)
    n_k  number of keys (columns of a panel)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.patches import Patch

from book.figures import _pyplot
from book.figures._style import TEXT_PT, TITLE_PT
from book.figures._text import kept, tr
from mha._checks import check_positive_int

CMAP = "viridis"  # perceptually uniform and readable in greyscale and by colour-blind readers
_MASK_BASE = (0.86, 0.86, 0.86)  # light grey under the hatching of a masked cell
_MASK_LINE = (0.35, 0.35, 0.35)  # dark grey hatching lines
_HATCH_CELL = 8  # texture pixels per cell side in the mask overlay
_HATCH_PERIOD = 4  # a hatching line every this many texture pixels, i.e. two per cell
_MAX_PANEL_COLUMNS = 4
_ATOL = 1e-6  # tolerance on "weights lie in [0, 1]" and "masked weights are 0"
TICK_SIZE = TEXT_PT  # points: token labels and colour bar ticks
TITLE_SIZE = TITLE_PT  # points: panel titles and axis names
_MAX_SIZE = (9.3, 5.4)  # inches: the largest figure a slide shows with its text at 18 px (figures/_style.py)
_TOKEN_PITCH = 0.2  # inches a token: the room its label is given in a panel


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


def literal(text: str) -> str:
    """``text`` as matplotlib shows it literally: a ``$`` would otherwise start mathtext."""
    return kept(text).replace("$", r"\$")


def draw_heatmap(
    ax: Axes,
    values: np.ndarray,
    *,
    norm: Normalize,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    mask: np.ndarray | None = None,
    fmt: str | Callable[[float], str] | None = None,
    fontsize: float = TEXT_PT,
) -> AxesImage:
    """Draw one panel: ``values`` ``(rows, cols)`` as a heatmap on ``norm``, row 0 on top.

    Args:
        ax: the axes to draw into.
        values: the numbers, shape ``(rows, cols)``.
        norm: the colour scale, shared by the panels of one figure.
        row_labels, col_labels: tick labels, drawn literally; ``None`` leaves that axis unlabelled.
        mask: optional boolean ``(rows, cols)``, ``True`` = may attend; the other cells are hatched grey.
        fmt: a format such as ``"{:.2f}"`` to write each value in its cell, or a function from the value to
            its text (an empty text leaves the cell blank).
        fontsize: points of the values written in the cells.

    Returns:
        The heatmap's ``AxesImage`` (for a colour bar).
    """
    rows, cols = values.shape
    image = ax.imshow(values, cmap=CMAP, norm=norm, interpolation="nearest", aspect="auto")
    if mask is not None and not mask.all():
        texture = _hatch_texture(rows, cols)  # (rows s, cols s, 4)
        texture[..., 3] = 255 * (~mask).repeat(_HATCH_CELL, axis=0).repeat(_HATCH_CELL, axis=1)
        ax.imshow(
            texture, interpolation="nearest", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5), aspect="auto"
        )
    ax.set_yticks(range(rows), [literal(t) for t in row_labels] if row_labels is not None else [])
    ax.set_xticks(
        range(cols), [literal(t) for t in col_labels] if col_labels is not None else [], rotation=90
    )
    ax.tick_params(labelsize=TICK_SIZE, length=0, pad=2)
    if fmt is not None:
        text = fmt.format if isinstance(fmt, str) else fmt
        for i in range(rows):
            for j in range(cols):
                color = "white" if norm(values[i, j]) < 0.5 else "black"
                ax.text(j, i, text(values[i, j]), ha="center", va="center", fontsize=fontsize, color=color)
    return image


def _hatch_texture(n_q: int, n_k: int) -> np.ndarray:
    """Opaque uint8 RGBA texture of grey cells with dark diagonal lines, ``_HATCH_CELL`` pixels per cell."""
    rows = np.arange(n_q * _HATCH_CELL)[:, None]  # (n_q * s, 1)
    cols = np.arange(n_k * _HATCH_CELL)[None, :]  # (1, n_k * s)
    line = (rows + cols) % _HATCH_PERIOD == 0  # (n_q * s, n_k * s)
    texture = np.empty((*line.shape, 4), dtype=np.uint8)  # (n_q * s, n_k * s, 4)
    texture[..., :3] = np.round(255 * np.where(line[..., None], _MASK_LINE, _MASK_BASE))
    texture[..., 3] = 255
    return texture


def _panel_grid(panels: int, n_q: int, n_k: int, label_room: float) -> tuple[int, int, float, float]:
    """Rows, columns and panel size (inches) for ``panels`` heatmaps of ``(n_q, n_k)`` cells.

    A panel gets ``_TOKEN_PITCH`` inches a token (1.3 to 3 inches a side), up to ``_MAX_PANEL_COLUMNS``
    side by side. Where that would make the figure larger than ``_MAX_SIZE``, the panels shrink, on the
    grid that shrinks them least (a long sequence goes on two rows rather than make its labels small on a
    slide).
    """
    want_w, want_h = min(max(_TOKEN_PITCH * n_k, 1.3), 3.0), min(max(_TOKEN_PITCH * n_q, 1.3), 3.0)
    best = (0.0, 1, panels)
    for rows in range(1, panels + 1):
        cols = math.ceil(panels / rows)
        if cols > _MAX_PANEL_COLUMNS:
            continue
        room_w = (_MAX_SIZE[0] - label_room - 1.6) / cols - 0.3
        room_h = (_MAX_SIZE[1] - label_room - 0.6) / rows - 0.45
        scale = min(1.0, room_w / want_w, room_h / want_h)
        if scale > best[0] + 1e-9:
            best = (scale, rows, cols)
    scale, rows, cols = best
    return rows, cols, want_w * scale, want_h * scale


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
        >>> fig = plot_heads(weights[0], mask=mha.causal_mask(5), d_k=attn.d_k)
        >>> len(fig.axes)  # four panels and a colour bar
        5
    """
    w = as_head_weights(weights)  # (h, n_q, n_k)
    h, n_q, n_k = w.shape
    if key_tokens is None and query_tokens is not None and n_q == n_k:
        key_tokens = query_tokens
    q = _check_tokens("query_tokens", query_tokens, n_q, "query") or tuple(str(i + 1) for i in range(n_q))
    k = _check_tokens("key_tokens", key_tokens, n_k, "key") or tuple(str(j + 1) for j in range(n_k))
    if not isinstance(average, bool):
        raise TypeError(f"average must be a bool, got {type(average).__name__}")
    d_k = None if d_k is None else check_positive_int("d_k", d_k)
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")
    if fig is not None and not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib.figure.Figure or None, got {type(fig).__name__}")
    m = None if mask is None else as_head_mask(mask, w.shape)  # (h, n_q, n_k)
    if m is not None:
        leak = np.where(m, 0.0, w).max()
        if leak > _ATOL:
            raise ValueError(
                f"weights are nonzero (up to {leak:.3g}) where the mask is False; "
                "pass the mask the weights were computed with"
            )
    panels = [
        (
            tr("head {head} (d_k={d_k})" if d_k else "head {head}", head=i + 1, d_k=d_k),
            w[i],
            None if m is None else m[i],
        )
        for i in range(h)
    ]
    if average:  # a cell is hatched in the mean where every head masks it
        panels.append((tr("mean of {h} heads", h=h), w.mean(axis=0), None if m is None else m.any(axis=0)))

    label_room = 0.08 * max(len(t) for t in (*q, *k))  # inches for the longest label
    rows, cols, panel_w, panel_h = _panel_grid(len(panels), n_q, n_k, label_room)
    size = (cols * (panel_w + 0.3) + label_room + 1.6, rows * (panel_h + 0.45) + label_room + 0.6)
    fig = _pyplot.figure() if fig is None else fig
    fig.clear()
    fig.set_size_inches(*size)
    fig.set_layout_engine("constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    norm = Normalize(vmin=0.0, vmax=1.0)
    for p, ax in enumerate(axes.flat):
        if p >= len(panels):
            ax.remove()
            continue
        name, values, panel_mask = panels[p]
        below = p + cols >= len(panels)  # no panel below: this one carries the key labels
        image = draw_heatmap(
            ax,
            values,
            norm=norm,
            row_labels=q if p % cols == 0 else None,
            col_labels=k if below else None,
            mask=panel_mask,
        )
        ax.set_title(name, fontsize=TITLE_SIZE, pad=3)
        if p % cols == 0:
            ax.set_ylabel(tr("query"), fontsize=TITLE_SIZE)
        if below:
            ax.set_xlabel(tr("key"), fontsize=TITLE_SIZE)
    shown = [ax for ax in axes.flat if ax.figure is fig]  # the grid's unused cells are removed
    bar = fig.colorbar(image, ax=shown, ticks=[0, 0.25, 0.5, 0.75, 1], shrink=min(1.0, 3.0 / size[1] + 0.3))
    bar.ax.tick_params(labelsize=TICK_SIZE, length=2)
    bar.set_label(tr("attention weight"), fontsize=TITLE_SIZE, labelpad=3)
    if m is not None and not m.all():
        swatch = Patch(
            facecolor=_MASK_BASE, edgecolor=_MASK_LINE, hatch="////", linewidth=0.6, label=tr("masked")
        )
        fig.legend(handles=[swatch], loc="lower right", fontsize=TICK_SIZE, frameon=False)
    if title:
        fig.suptitle(tr(title), fontsize=TITLE_PT)
    return fig
