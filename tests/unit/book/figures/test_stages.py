"""book.figures.stages: every stage renders, captions are right (the live stepper: its own tests)."""

import io

import pytest
import torch

import mha
from book.chapters.worked_example import worked_example
from book.compute import STAGES, attention_stages
from book.figures import plot_stage
from book.figures.stages import stage_caption
from book.widgets import stage_stepper

KEYS = [s.key for s in STAGES]
PNG = b"\x89PNG\r\n\x1a\n"


def rendered_png(fig) -> bytes:
    """Draw the figure to PNG bytes: matplotlib lays out and rasterises every artist."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def stages():
    ex = worked_example()
    return attention_stages(ex.module(), ex.x)


@pytest.mark.parametrize("key", KEYS)
def test_every_stage_plots_with_one_panel_per_head(stages, key):
    fig = plot_stage(stages, key, tokens=["a", "b", "c", "d"])
    panels = stages[key].size(0) if stages[key].dim() == 3 else 1
    # the stage list, one axes per panel, and the colour bar
    assert len(fig.axes) == 1 + panels + 1
    assert f"shape {tuple(stages[key].shape)}" in fig._suptitle.get_text()
    assert rendered_png(fig).startswith(PNG)


def test_weights_use_the_fixed_scale_and_tokens_label_both_axes(stages):
    fig = plot_stage(stages, "weights", tokens=["a", "b", "c", "d"])
    image = fig.axes[1].images[0]
    assert image.get_clim() == (0.0, 1.0)
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["a", "b", "c", "d"]
    assert fig.axes[1].get_xlabel() == "key" and fig.axes[1].get_ylabel() == "query"


def test_caption_names_formula_and_shape(stages):
    assert stage_caption(stages, "q") == "queries: $Q = X W^Q$, shape (4, 8) = (n, d_model)"


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda s: plot_stage(s, "nope"), KeyError, "unknown stage"),
        (lambda s: plot_stage({"x": s["x"]}, "x"), ValueError, "lacks"),
        (lambda s: plot_stage(s, "x", tokens=["a"]), ValueError, "tokens"),
        (lambda s: stage_stepper(s, start="nope"), ValueError, 'stage must be one of x, q, .*, got "nope"'),
    ],
)
def test_bad_arguments_raise_clear_errors(stages, call, error, words):
    with pytest.raises(error, match=words):
        call(stages)


def test_plot_stage_handles_a_constant_tensor():
    attn = mha.MultiHeadAttention(4, 2).double()
    stages = attention_stages(attn, torch.zeros(3, 4, dtype=torch.float64))
    assert rendered_png(plot_stage(stages, "x")).startswith(PNG)


@pytest.mark.parametrize(("key", "lines"), [("x", 0), ("q", 1), ("concat", 1), ("out", 0), ("weights", 0)])
def test_head_boundaries_are_marked_where_heads_sit_side_by_side(stages, key, lines):
    fig = plot_stage(stages, key)
    assert len(fig.axes[1].lines) == lines
