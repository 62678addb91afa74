"""The figures of the chapter "Multi-head attention since 2017": rotary wavelengths, and local and global
layers with what they see.

:func:`plot_rotary_wavelengths` draws the wavelength of each rotary pair (from
:func:`book.compute.since_2017.rotary_frequencies`) against the lengths a model was trained at;
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
from book.figures._style import TEXT_PT
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
        for row, (grid, what) in enumerate(((masks, "may attend"), (seen, "has seen"))):
            ax = axes[row][layer]
            ax.imshow(grid[layer].to(torch.uint8).numpy(), cmap=_COLOURS, vmin=0, vmax=1)
            ax.set_xticks([0, n - 1], ["1", str(n)], fontsize=TICK_SIZE)
            ax.set_yticks([0, n - 1], ["1", str(n)], fontsize=TICK_SIZE)
            if row == 0:
                ax.set_title(f"layer {layer + 1}\n{kinds[layer]}", fontsize=TITLE_SIZE)
            if layer == 0:
                ax.set_ylabel(f"token ({what})", fontsize=TITLE_SIZE)
            ax.set_xlabel("key" if row == 0 else "input token", fontsize=TITLE_SIZE)
    fig.suptitle(
        "Top: the layer's mask. Bottom: the inputs each position has seen after it", fontsize=TITLE_SIZE
    )
    return fig


def plot_rotary_wavelengths(wavelengths: dict[str, torch.Tensor], *, lengths: dict[str, int]) -> Figure:
    """The wavelength of each rotary pair (tokens per full turn), one line per scaling, against lengths.

    A pair whose wavelength exceeds the length a model was trained at never completed a turn in training:
    beyond that length it reaches angles the model never saw. A scaling that divides a pair's angle by s
    multiplies its wavelength by s.

    Args:
        wavelengths: label to wavelengths, each a 1-D tensor of ``d_k / 2`` values, fastest pair first
            (``2 pi / rotary_frequencies(...)``); all of one length.
        lengths: label to a length in tokens, each drawn as a dashed horizontal line (e.g. the length trained
            at and the context reached).

    Returns:
        The figure: pairs (1 .. d_k/2) across, wavelength on a log scale up.
    """
    if not isinstance(wavelengths, dict) or not wavelengths:
        raise ValueError("wavelengths must be a non-empty dict of label to 1-D tensor")
    sizes = set()
    for label, w in wavelengths.items():
        if not isinstance(w, torch.Tensor) or w.dim() != 1 or not (w > 0).all():
            raise ValueError(f"wavelengths[{label!r}] must be a 1-D tensor of positive values")
        sizes.add(w.numel())
    if len(sizes) != 1:
        raise ValueError(f"every wavelengths tensor must have the same length, got {sorted(sizes)}")
    if not isinstance(lengths, dict) or any(
        isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in lengths.values()
    ):
        raise ValueError(f"lengths must be a dict of label to a positive int, got {lengths!r}")
    (pairs,) = sizes
    fig, ax = _pyplot.subplots(figsize=(8.6, 4.6), layout="constrained")
    x = list(range(1, pairs + 1))
    for (label, w), style in zip(wavelengths.items(), ("-", "--", "-.", ":"), strict=False):
        ax.plot(x, w.tolist(), style, lw=1.8, label=label)
    for (label, n), colour in zip(lengths.items(), ("0.35", "#c44e52", "#55a868"), strict=False):
        ax.axhline(n, color=colour, lw=1, ls="--")
        ax.annotate(f"{label}: {n:,}", (1, n), xytext=(2, 3), textcoords="offset points", fontsize=TEXT_PT,
                    color=colour, va="bottom")  # fmt: skip
    ax.set_yscale("log", base=2)
    ax.set_xlabel("rotary pair (1 = fastest)", fontsize=TITLE_SIZE)
    ax.set_ylabel("wavelength: tokens per full turn", fontsize=TITLE_SIZE)
    ax.tick_params(labelsize=TICK_SIZE)
    ax.grid(True, which="major", alpha=0.3)
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=len(wavelengths),
               fontsize=TEXT_PT)  # fmt: skip
    ax.set_title("Slow pairs turn less than once in the trained length; scaling stretches them",
                 fontsize=TITLE_SIZE)  # fmt: skip
    return fig
