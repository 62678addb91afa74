"""The figures of the chapter "Multi-head attention since 2017": local and global layers with what they see.

:func:`plot_layer_stack` draws, for each layer of a stack, its mask (top row) and the inputs each position
has seen after it (bottom row), from :func:`book.compute.since_2017.layer_masks` and
:func:`book.compute.since_2017.receptive_fields`. They compute nothing themselves.

Shape legend:
    L    number of layers
    n    number of tokens (queries on rows, keys or input tokens on columns)
"""

from __future__ import annotations

import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from book.figures import _pyplot
from book.figures._text import tr
from book.figures.heatmaps import TICK_SIZE, TITLE_SIZE

_COLOURS = ListedColormap([(0.93, 0.93, 0.93), (0.16, 0.38, 0.62)])  # False light grey, True dark blue


def plot_layer_stack(masks: torch.Tensor, seen: torch.Tensor, *, kinds: list[str]) -> Figure:
    """Each layer's mask above what each position has seen after it, layers left to right.

    Args:
        masks: boolean masks, shape ``(L, n, n)``, ``True`` where a query may attend to a key.
        seen: booleans, shape ``(L, n, n)``: ``[l, i, j]`` output ``i`` of layer ``l + 1`` depends on input
            ``j`` (:func:`book.compute.since_2017.receptive_fields`).
        kinds: a short name per layer, e.g. ``"local, window 3"`` or ``"global"``; layers are numbered from 1.

    Returns:
        The figure: 2 rows of ``L`` panels.
    """
    for name, t in (("masks", masks), ("seen", seen)):
        if not isinstance(t, torch.Tensor) or t.dtype != torch.bool:
            raise TypeError(f"{name} must be a boolean torch.Tensor, got {type(t).__name__}")
        if t.dim() != 3 or t.size(1) != t.size(2):
            raise ValueError(f"{name} must have shape (L, n, n), got {tuple(t.shape)}")
    if seen.shape != masks.shape:
        raise ValueError(f"seen must have the shape of masks {tuple(masks.shape)}, got {tuple(seen.shape)}")
    L, n, _ = masks.shape
    if not isinstance(kinds, list) or len(kinds) != L:
        raise ValueError(f"kinds must be a list of L={L} names, got {kinds!r}")
    fig, axes = _pyplot.subplots(2, L, figsize=(1.45 * L + 0.6, 4.3), squeeze=False, layout="constrained")
    for layer in range(L):
        for row, (grid, what) in enumerate(
            ((masks, tr("token (may attend)")), (seen, tr("token (has seen)")))
        ):
            ax = axes[row][layer]
            ax.imshow(grid[layer].to(torch.uint8).numpy(), cmap=_COLOURS, vmin=0, vmax=1)
            ax.set_xticks([0, n - 1], ["1", str(n)], fontsize=TICK_SIZE)
            ax.set_yticks([0, n - 1], ["1", str(n)], fontsize=TICK_SIZE)
            if row == 0:
                ax.set_title(
                    f"{tr('layer {layer}', layer=layer + 1)}\n{tr(kinds[layer])}", fontsize=TITLE_SIZE
                )
            if layer == 0:
                ax.set_ylabel(what, fontsize=TITLE_SIZE)
            ax.set_xlabel(tr("key") if row == 0 else tr("input token"), fontsize=TITLE_SIZE)
    fig.suptitle(
        tr("Top: the layer's mask. Bottom: the inputs each position has seen after it"), fontsize=TITLE_SIZE
    )
    return fig
