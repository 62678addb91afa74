"""The Transformer block around multi-head attention: today's pre-norm decoder block beside the 2017 layer.

Left, the block of today's decoders (Llama, Qwen3, gpt-oss, DeepSeek-V3 and most others):

    h = x + MultiHead(RMSNorm(x))
    y = h + MLP(RMSNorm(h))

each sublayer reading a normalised copy of the residual stream and adding its result back to it. Right, the
post-norm layer of the 2017 Transformer and BERT (all-MiniLM-L6-v2 too, ``mha.pretrained.EncoderLayer``),
which normalises the stream itself after each addition. :data:`PRE_NORM_BLOCK` lists the pre-norm block's
sublayers in the order they run, with the names transformers gives them in ``LlamaDecoderLayer``;
tests/unit/book/figures/test_block.py checks that order against transformers' layer, and the two equations
above against its output. :func:`transformer_block_alt` describes the figure in words.

Shape legend:
    n        number of tokens
    d_model  model width: the width of the residual stream
"""

from __future__ import annotations

from itertools import pairwise
from typing import NamedTuple

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from book.figures import _pyplot
from book.figures._style import TEXT_PT, TITLE_PT
from book.figures._text import kept, tr
from mha._checks import check_positive_int

_STREAM, _NORM, _ATTENTION, _MLP = "#e3ecf7", "#fde9c9", "#dff0d8", "#ead9f2"  # fills, light


class Sublayer(NamedTuple):
    """One step of the block: its label in the figure and its module's name in transformers' decoder layer."""

    label: str
    module: str


PRE_NORM_BLOCK = (
    Sublayer("RMSNorm", "input_layernorm"),
    Sublayer("multi-head attention", "self_attn"),
    Sublayer("RMSNorm", "post_attention_layernorm"),
    Sublayer("MLP", "mlp"),
)
POST_NORM_LAYER = ("multi-head attention", "LayerNorm", "MLP", "LayerNorm")  # 2017, BERT, MiniLM
_NOTES = {"multi-head attention": "causal: mixes tokens", "MLP": "each token alone"}
_NAMES = {"RMSNorm", "LayerNorm", "MLP"}  # module names, shown as they are


def _box(ax, x: float, y: float, w: float, h: float, text: str, colour: str) -> None:
    """A rounded box of width ``w`` and height ``h`` centred on ``(x, y)``."""
    style = "round,pad=0.02,rounding_size=0.12"
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle=style, fc=colour, ec="0.3", lw=1))
    ax.text(x, y, text, ha="center", va="center", fontsize=TEXT_PT)


def _label(text: str) -> str:
    """A box's label in the figure's language: a module's name stays as it is."""
    return kept(text) if text in _NAMES else tr(text)


def _arrow(ax, points: list[tuple[float, float]]) -> None:
    """Straight segments through ``points``, with an arrow head on the last one."""
    for start, end in pairwise(points[:-1]):
        ax.plot(*zip(start, end, strict=True), color="0.3", lw=1.2)
    head = FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>", mutation_scale=11, lw=1.2, color="0.3")
    ax.add_patch(head)


def _plus(ax, x: float, y: float) -> None:
    """The addition onto the stream: a circle 16 points across (0.22 units high, 0.125 wide, both panels)."""
    ax.plot([x], [y], marker="o", markersize=16, markerfacecolor="white", markeredgecolor="0.3", lw=0)
    ax.text(x, y, "+", ha="center", va="center", fontsize=TITLE_PT)


def plot_transformer_block(n: int = 6, d_model: int = 16) -> Figure:
    """The pre-norm decoder block of today's models (left) beside the post-norm layer of 2017 (right).

    Args:
        n: number of tokens, shown in the shapes of the input and the output.
        d_model: model width, the same for the input, every sublayer's output and the block's output.

    Returns:
        The figure; :func:`transformer_block_alt` describes it in words.
    """
    check_positive_int("n", n)
    check_positive_int("d_model", d_model)
    fig = _pyplot.figure(figsize=(9.0, 5.4))
    left = fig.add_axes((0.0, 0.0, 0.56, 1.0))
    right = fig.add_axes((0.56, 0.0, 0.44, 1.0))
    for ax, width in ((left, 5.6), (right, 4.4)):
        ax.set(xlim=(0, width), ylim=(0, 10.8))
        ax.axis("off")
    shape = f"({n}, {d_model})"

    # Left: the residual stream runs straight up; each sublayer branches off it and adds its result back.
    stream, branch = 1.1, 3.7
    ax = left
    ax.text(2.8, 10.45, tr("pre-norm block: today's decoders"), ha="center", va="center", fontsize=TITLE_PT)
    _box(ax, stream, 0.6, 2.0, 0.7, tr("x: tokens {shape}", shape=shape), _STREAM)
    _box(ax, stream, 9.6, 2.0, 0.7, tr("output {shape}", shape=shape), _STREAM)
    for bottom, (norm, sublayer), colour in zip(
        (1.6, 5.5), (PRE_NORM_BLOCK[:2], PRE_NORM_BLOCK[2:]), (_ATTENTION, _MLP), strict=True
    ):
        plus = bottom + 3.0
        _box(ax, branch, bottom + 0.5, 2.4, 0.6, _label(norm.label), _NORM)
        _box(
            ax,
            branch,
            bottom + 1.75,
            2.4,
            0.9,
            f"{_label(sublayer.label)}\n{tr(_NOTES[sublayer.label])}",
            colour,
        )
        _arrow(ax, [(stream, bottom + 0.5), (branch - 1.2, bottom + 0.5)])
        _arrow(ax, [(branch, bottom + 0.8), (branch, bottom + 1.3)])
        _arrow(ax, [(branch, bottom + 2.2), (branch, plus), (stream + 0.125, plus)])
        _plus(ax, stream, plus)
    _arrow(ax, [(stream, 0.95), (stream, 4.6 - 0.22)])
    _arrow(ax, [(stream, 4.6 + 0.22), (stream, 8.5 - 0.22)])
    _arrow(ax, [(stream, 8.5 + 0.22), (stream, 9.25)])
    ax.text(stream - 0.2, 6.6, tr("residual stream"), rotation=90, ha="right", va="center", fontsize=TEXT_PT)
    ax.text(5.45, 5.1, kept("× n_layers"), rotation=90, ha="center", va="center", fontsize=TEXT_PT)
    ax.plot([5.2, 5.3, 5.3, 5.2], [1.3, 1.3, 9.0, 9.0], color="0.5", lw=1)

    # Right: the 2017 layer adds first and normalises the sum, on the stream itself.
    ax, column, bypass = right, 1.6, 3.3
    ax.text(2.2, 10.45, tr("post-norm layer: 2017, BERT"), ha="center", va="center", fontsize=TITLE_PT)
    _box(ax, column, 0.6, 2.0, 0.7, tr("x: tokens {shape}", shape=shape), _STREAM)
    colours = {"multi-head attention": _ATTENTION, "LayerNorm": _NORM, "MLP": _MLP}
    for label, y in zip(POST_NORM_LAYER, (2.2, 4.4, 5.9, 8.1), strict=True):
        _box(ax, column, y, 2.4, 0.6 if label == "LayerNorm" else 0.9, _label(label), colours[label])
    _box(ax, column, 9.6, 2.0, 0.7, tr("output {shape}", shape=shape), _STREAM)
    for bottom, top in ((0.95, 1.75), (2.65, 3.28), (3.72, 4.1), (4.7, 5.45), (6.35, 6.98), (7.42, 7.8)):
        _arrow(ax, [(column, bottom), (column, top)])
    _arrow(ax, [(column, 8.4), (column, 9.25)])
    for start, plus in ((1.25, 3.5), (5.05, 7.2)):  # the residual connections, around each sublayer
        _arrow(ax, [(column, start), (bypass, start), (bypass, plus), (column + 0.125, plus)])
        _plus(ax, column, plus)
    return fig


def transformer_block_alt(n: int = 6, d_model: int = 16) -> str:
    """Alt text of :func:`plot_transformer_block` for the same sizes."""
    return (
        f"Two diagrams side by side. Left, the pre-norm block of today's decoders: the tokens x, shape "
        f"({n}, {d_model}), run straight up a residual stream; one branch takes an RMSNorm of the stream, "
        "runs causal multi-head attention, which mixes tokens, and adds the result back to the stream; "
        "a second branch takes another RMSNorm, runs an MLP on each token alone, and adds its result back; "
        f"the output has shape ({n}, {d_model}), and the block repeats n_layers times. Right, the post-norm "
        "layer of 2017 and BERT: multi-head attention, its input added back, then a LayerNorm of the sum; "
        "an MLP, its input added back, then another LayerNorm."
    )
