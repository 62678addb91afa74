"""Diagrams drawn by code: the multi-head attention block, and how heads are laid out in memory.

Both take the sizes they show as arguments, so a chapter draws them for its own example, and each comes with
an ``*_alt`` function giving the alt text that describes the same picture in words.

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from mha._checks import check_heads, check_positive_int
from mha.figures import _pyplot
from mha.figures._style import TEXT_PT, TITLE_PT

_INPUT, _PROJECTION, _HEAD, _OUTPUT = "#e3ecf7", "#fde9c9", "#dff0d8", "#ead9f2"  # fills, light
_HEAD_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c")


def _box(
    ax, x: float, y: float, w: float, h: float, text: str, colour: str, *, size: float = TEXT_PT
) -> None:
    ax.add_patch(
        FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.08", fc=colour, ec="0.3", lw=1)
    )
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size)


def _arrow(ax, start: tuple[float, float], end: tuple[float, float]) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, lw=1, color="0.3"))


def plot_multihead_block(d_model: int = 512, h: int = 8, n: int = 10, *, shown: int = 3) -> Figure:
    """The multi-head attention block with the shape of every tensor, for one sequence of ``n`` tokens.

    ``X`` goes through ``h`` query, key and value projections, ``h`` scaled dot-product attentions run side by
    side, their outputs are concatenated and ``W^O`` mixes them. Drawn left to right; with more than
    ``shown`` heads, the middle ones are elided.

    Args:
        d_model: model width; ``h`` must divide it.
        h: number of heads.
        n: number of tokens.
        shown: how many heads to draw (the first ``shown - 1`` and the last).

    Returns:
        The figure; :func:`multihead_block_alt` describes it in words.
    """
    _, _, d_k = check_heads(d_model, h)
    check_positive_int("n", n)
    check_positive_int("shown", shown)
    heads = list(range(h)) if h <= shown else [*range(shown - 1), h - 1]
    rows = len(heads) + (h > shown)
    fig = _pyplot.figure(figsize=(9.3, 1.1 + 1.0 * rows))  # 10.75 units across: 0.87 inch a unit
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set(xlim=(0, 10.75), ylim=(-0.2, rows + 0.6))
    ax.axis("off")
    mid = rows / 2
    _box(ax, 0.1, mid - 0.4, 1.3, 0.8, f"X\n({n}, {d_model})", _INPUT)
    for r, i in enumerate(heads if h <= shown else [*heads[:-1], None, heads[-1]]):
        y = rows - 1 - r + 0.1
        if i is None:
            ax.text(4.6, y + 0.35, "⋮", ha="center", va="center", fontsize=16)
            continue
        colour = _HEAD_COLOURS[i % len(_HEAD_COLOURS)]
        _arrow(ax, (1.4, mid), (2.0, y + 0.4))
        _box(
            ax,
            2.0,
            y,
            2.2,
            0.8,
            f"$XW_{{{i + 1}}}^Q,\\ XW_{{{i + 1}}}^K,\\ XW_{{{i + 1}}}^V$\n3 × ({n}, {d_k})",
            _PROJECTION,
        )
        _arrow(ax, (4.2, y + 0.4), (4.7, y + 0.4))
        _box(ax, 4.7, y, 2.3, 0.8, f"head {i + 1} = Attention(...)\n({n}, {d_k})", _HEAD)
        ax.add_patch(Rectangle((4.7, y), 0.08, 0.8, color=colour))
        _arrow(ax, (7.0, y + 0.4), (7.5, mid))
    _box(ax, 7.5, mid - 0.4, 1.55, 0.8, f"Concat\n({n}, {h}·{d_k} = {d_model})", _OUTPUT)
    _arrow(ax, (9.05, mid), (9.35, mid))
    _box(ax, 9.35, mid - 0.4, 1.3, 0.8, f"$\\cdot W^O$\n({n}, {d_model})", _OUTPUT)
    ax.text(5.375, rows + 0.35, f"multi-head attention: h = {h} heads of width d_k = {d_model} / {h} = {d_k}",
            ha="center", va="center", fontsize=TITLE_PT)  # fmt: skip
    return fig


def multihead_block_alt(d_model: int = 512, h: int = 8, n: int = 10) -> str:
    """Alt text of :func:`plot_multihead_block` for the same sizes."""
    _, _, d_k = check_heads(d_model, h)
    return (
        f"Diagram of multi-head attention: the input X of shape ({n}, {d_model}) is projected {h} times into "
        f"queries, keys and values of shape ({n}, {d_k}) each; {h} attention heads run side by side, each "
        f"giving an output of shape ({n}, {d_k}); the outputs are concatenated into shape ({n}, {d_model}) "
        f"and multiplied by W^O, giving the output of shape ({n}, {d_model})."
    )


def plot_head_layout(n: int = 3, h: int = 4) -> Figure:
    """How ``view`` and ``transpose`` split heads, drawn as memory: which (token, head) block lands where.

    Top: the projected tensor ``(n, h d_k)`` in memory, one block of ``d_k`` numbers per (token, head), token
    by token. Middle: ``view(n, h, d_k).transpose(0, 1)``, head ``i``'s ``n`` blocks together, one per token:
    right. Bottom: ``view(h, n, d_k)`` alone, which cuts memory into ``h`` runs of ``n`` blocks: "head 1"
    then holds pieces of several tokens' heads, so a row is no longer a token. Each block is labelled
    "t<token> h<head>" and coloured by its true head.

    Args:
        n: number of tokens.
        h: number of heads.
    """
    check_positive_int("n", n)
    check_positive_int("h", h)
    blocks = [(t, i) for t in range(n) for i in range(h)]  # memory order: token-major
    fig = _pyplot.figure(figsize=(max(5.1, 0.65 * n * h + 1.3), 1.1 + 0.47 * (1 + 2 * h)))
    ax = fig.add_axes((0, 0, 1, 1))
    width = n * h
    ax.set(xlim=(-2.6, width + 0.2), ylim=(-(2 * h + 2.4), 1.6))
    ax.axis("off")

    def block(x: float, y: float, t: int, i: int) -> None:
        ax.add_patch(
            Rectangle((x, y), 0.92, 0.8, fc=_HEAD_COLOURS[i % len(_HEAD_COLOURS)], ec="white", alpha=0.9)
        )
        label = f"t{t + 1} h{i + 1}"
        ax.text(x + 0.46, y + 0.4, label, ha="center", va="center", fontsize=TEXT_PT, color="white")

    ax.text(-2.5, 0.4, f"memory\n(n={n}, h·d_k)", va="center", fontsize=TEXT_PT)
    for x, (t, i) in enumerate(blocks):
        block(x, 0, t, i)
    ax.text(-2.5, -0.9, "view + transpose  ✓", va="center", fontsize=TEXT_PT, color="#2e7d32", weight="bold")
    ax.text(-2.5, -(h + 1.6), "view alone  ✗", va="center", fontsize=TEXT_PT, color="#c62828", weight="bold")
    for i in range(h):  # right: head i holds token 1..n's i-th block
        y = -(i + 2)
        ax.text(-0.3, y + 0.4, f"head {i + 1}", ha="right", va="center", fontsize=TEXT_PT)
        for t in range(n):
            block(t, y, t, i)
    for r in range(h):  # wrong: "head" r is the r-th run of n consecutive blocks
        y = -(h + r + 2.6)
        ax.text(-0.3, y + 0.4, f"head {r + 1}?", ha="right", va="center", fontsize=TEXT_PT)
        for j, (t, i) in enumerate(blocks[r * n : (r + 1) * n]):
            block(j, y, t, i)
    return fig
