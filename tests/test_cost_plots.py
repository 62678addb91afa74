"""mha.figures.costs: the plotted numbers are the cost functions' numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from mha.costs.configs import MODEL_CONFIGS
from mha.costs.counts import attention_macs_parts, kv_cache_bytes
from mha.figures.costs import plot_attention_macs, plot_head_widths, plot_kv_cache


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_head_widths_plots_every_model_once():
    fig = plot_head_widths()
    ax = fig.axes[0]
    points = {tuple(p) for coll in ax.collections for p in coll.get_offsets().tolist()}
    assert points == {(c.d_model, c.h) for c in MODEL_CONFIGS.values()}
    labels = "\n".join(t.get_text() for t in ax.texts)
    for name in MODEL_CONFIGS:
        assert name in labels


def test_attention_macs_lines_are_the_two_parts():
    ns = [64, 256, 1024, 4096]
    fig = plot_attention_macs(["GPT-2 small", "Falcon-7B"], ns)
    assert len(fig.axes) == 2
    for ax, name in zip(fig.axes, ["GPT-2 small", "Falcon-7B"], strict=True):
        c = MODEL_CONFIGS[name]
        parts = [attention_macs_parts(c.d_model, c.h, n, n_kv_heads=c.n_kv_heads) for n in ns]
        projections, scores = ax.lines[0], ax.lines[1]
        assert list(projections.get_xdata()) == ns
        assert list(projections.get_ydata()) == [p for p, _ in parts]
        assert list(scores.get_ydata()) == [s for _, s in parts]


@pytest.mark.parametrize("name", ["GPT-2 small", "Llama 3.1 8B", "Falcon-7B"])
def test_crossing_marks_the_length_where_scores_equal_projections(name):
    ns = [2**k for k in range(6, 14)]
    fig = plot_attention_macs([name], ns)
    crossing = fig.axes[0].lines[2].get_xdata()[0]
    c = MODEL_CONFIGS[name]
    projections, scores = attention_macs_parts(c.d_model, c.h, crossing, n_kv_heads=c.n_kv_heads)
    assert projections == scores
    below = attention_macs_parts(c.d_model, c.h, crossing - 1, n_kv_heads=c.n_kv_heads)
    assert below[1] < below[0]


def test_no_crossing_line_outside_the_plotted_lengths():
    fig = plot_attention_macs(["GPT-3 175B"], [64, 128, 256])  # n* = 24576
    assert len(fig.axes[0].lines) == 2


def test_kv_cache_lines_are_in_gib():
    ns = [256, 4096]
    fig = plot_kv_cache(["Llama 2 70B", "Falcon-7B"], ns, batch=2, dtype=torch.float16)
    ax = fig.axes[0]
    for name in ("Llama 2 70B", "Falcon-7B"):
        c = MODEL_CONFIGS[name]
        line = next(line for line in ax.lines if line.get_label().startswith(name))
        expected = [
            kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, n, batch=2, dtype=torch.float16) / 2**30
            for n in ns
        ]
        assert list(line.get_ydata()) == expected


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: plot_kv_cache(["BERT-base"], [8]), ValueError),
        (lambda: plot_kv_cache(["GPT-5"], [8]), KeyError),
        (lambda: plot_attention_macs(["GPT-2 small"], []), ValueError),
        (lambda: plot_attention_macs([], [8]), ValueError),
    ],
)
def test_bad_arguments(call, error):
    with pytest.raises(error):
        call()
