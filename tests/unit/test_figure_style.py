"""book.figures._style: no figure of the book draws text smaller than TEXT_PT.

The lecture decks' test (tests/browser/test_slides.py) measures a figure's text on a slide as TEXT_PT points
at the picture's dpi, scaled as the picture is shown; this keeps that measure honest. Every figure function is
drawn on small inputs, and every text it draws (ticks, labels, titles, legends, notes, values in cells) is
read back after drawing. There is no exception: plot_head_grid, whose 72 panels leave no room for a label per
token, names only the first and last token, at TEXT_PT.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from matplotlib.text import Text

from book.chapters.training import load_results
from book.chapters.training_plots import plot_accuracy_by_heads, plot_learning_curves
from book.compute.since_2017 import layer_masks, receptive_fields
from book.decoder.induction import phase_change, training_curves
from book.decoder.induction_plots import plot_copy_probabilities, plot_decoder_heads, plot_training_log
from book.figures import (
    plot_attention_macs,
    plot_head_layout,
    plot_head_widths,
    plot_heads,
    plot_kv_cache,
    plot_multihead_block,
)
from book.figures._style import TEXT_PT
from book.figures.pretrained import (
    LABELS,
    plot_attention_head,
    plot_census_by_layer,
    plot_head_grid,
    plot_head_patterns,
    plot_head_values,
    plot_pruning_curve,
)
from book.figures.since_2017 import plot_layer_stack


def _weights(*shape, mask=None):
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(*shape, generator=g)
    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=-1)


CAUSAL = torch.ones(6, 6).tril().bool()
CONTEXTS = [2**k for k in range(6, 18)]
TOKENS = [f"t{i}" for i in range(8)]
PATTERNS = [[LABELS[(i + j) % len(LABELS)] for j in range(12)] for i in range(6)]  # (L, h)


def _census():
    g = torch.Generator().manual_seed(0)
    names = ("cls", "sep", "previous", "next", "self", "entropy_normalised")
    return plot_census_by_layer({m: torch.rand(6, 12, generator=g) for m in names})


FIGURES = {
    "plot_heads": lambda: plot_heads(
        _weights(4, 6, 6, mask=CAUSAL), query_tokens=list("abcdef"), mask=CAUSAL, average=True,
        d_k=4, title="a title",
    ),
    "plot_multihead_block": lambda: plot_multihead_block(16, 4, 5, shown=4),
    "plot_head_layout": lambda: plot_head_layout(3, 4),
    "plot_head_widths": lambda: plot_head_widths(),
    "plot_attention_macs": lambda: plot_attention_macs(["GPT-2 small", "Llama 3.1 8B"], CONTEXTS),
    "plot_kv_cache": lambda: plot_kv_cache(["Llama 2 7B", "Mistral 7B"], CONTEXTS),
    "plot_attention_head": lambda: plot_attention_head(_weights(8, 8), TOKENS, layer=0, head=2),
    "plot_head_grid": lambda: plot_head_grid(_weights(6, 12, 8, 8), TOKENS, title="a sentence"),
    "plot_head_patterns": lambda: plot_head_patterns(PATTERNS, title="t"),
    "plot_census_by_layer": _census,
    "plot_head_values": lambda: plot_head_values(torch.rand(6, 12), label="mean cosine", title="t"),
    "plot_pruning_curve": lambda: plot_pruning_curve([1.0, 0.9, 0.8], [1.0, 1.0, 0.5], checked={1: 0.9}),
    "plot_layer_stack": lambda: plot_layer_stack(
        layer_masks(8, window=3, layers=3, global_period=3),
        receptive_fields(layer_masks(8, window=3, layers=3, global_period=3)),
        kinds=["local, window 3", "local, window 3", "global"],
    ),
    "plot_learning_curves": lambda: plot_learning_curves(load_results()),
    "plot_accuracy_by_heads": lambda: plot_accuracy_by_heads(load_results()),
    "plot_decoder_heads": lambda: plot_decoder_heads(
        _weights(2, 4, 8, 8, mask=torch.ones(8, 8).tril().bool()), list("ab cab c"), split=4,
        notes={(0, 1): "previous token"}, title="a title",
    ),
    "plot_decoder_heads (copies marked)": lambda: plot_decoder_heads(
        _weights(2, 4, 40, 40, mask=torch.ones(40, 40).tril().bool()), split=20,
    ),
    "plot_copy_probabilities": lambda: plot_copy_probabilities(
        {"all heads on": torch.rand(39), "heads off": torch.rand(39)}, split=20
    ),
    "plot_training_log": lambda: plot_training_log(
        training_curves(), induction_heads=[(1, 0)], previous_heads=[(0, 1)], phase=phase_change(),
        repeat_first=400,
    ),
}  # fmt: skip


def _texts(fig):
    """Every text the figure shows once drawn (tick labels exist only after a draw)."""
    fig.canvas.draw()
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and t.get_figure()]


@pytest.mark.parametrize("name", FIGURES)
def test_no_text_below_text_pt(name):
    import matplotlib.pyplot as plt

    fig = FIGURES[name]()
    texts = _texts(fig)
    small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < TEXT_PT - 1e-9]
    plt.close(fig)
    assert not small, f"{name} draws text below {TEXT_PT} pt: {small[:5]}"
