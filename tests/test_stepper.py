"""plot_stage and stage_stepper, driven programmatically: every stage renders, captions are right."""

import base64

import pytest
import torch

import mha
from mha.chapters.worked_example import worked_example
from mha.compute import STAGES, attention_stages
from mha.figures import plot_stage
from mha.figures.stages import figure_png, stage_caption
from mha.widgets import stage_stepper

KEYS = [s.key for s in STAGES]
PNG = b"\x89PNG\r\n\x1a\n"


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
    assert figure_png(fig).startswith(PNG)


def test_weights_use_the_fixed_scale_and_tokens_label_both_axes(stages):
    fig = plot_stage(stages, "weights", tokens=["a", "b", "c", "d"])
    image = fig.axes[1].images[0]
    assert image.get_clim() == (0.0, 1.0)
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["a", "b", "c", "d"]
    assert fig.axes[1].get_xlabel() == "key" and fig.axes[1].get_ylabel() == "query"


def test_caption_names_formula_and_shape(stages):
    assert stage_caption(stages, "q") == "queries: $Q = X W^Q$, shape (4, 8) = (n, d_model)"


def test_stepper_starts_at_the_output_and_walks_every_stage(stages):
    stepper = stage_stepper(stages)
    assert stepper.slider.value == "out" and stepper.next.disabled and not stepper.previous.disabled
    assert stepper.caption.value == "stage 13 of 13: output projection, shape (4, 8) = (n, d_model)"
    seen = {}
    for key in KEYS:
        stepper.slider.value = key
        assert bytes(stepper.image.value).startswith(PNG)
        i = KEYS.index(key)
        assert stepper.caption.value.startswith(f"stage {i + 1} of {len(KEYS)}: ")
        assert f"shape {tuple(stages[key].shape)} = " in stepper.caption.value
        seen[key] = bytes(stepper.image.value)
    assert len(set(seen.values())) == len(KEYS), "each stage draws a different picture"


def test_buttons_move_one_stage_and_stop_at_the_ends(stages):
    stepper = stage_stepper(stages, start="x")
    assert stepper.previous.disabled
    stepper.previous.click()
    assert stepper.slider.value == "x"
    stepper.next.click()
    stepper.next.click()
    assert stepper.slider.value == "k"
    for _ in range(20):
        stepper.next.click()
    assert stepper.slider.value == "out" and stepper.next.disabled


def test_display_bundle_carries_a_static_png(stages):
    stepper = stage_stepper(stages)
    bundle = stepper._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]) == bytes(stepper.image.value)
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == f"StageStepper: {stepper.caption.value}"


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda s: plot_stage(s, "nope"), KeyError, "unknown stage"),
        (lambda s: plot_stage({"x": s["x"]}, "x"), ValueError, "lacks"),
        (lambda s: plot_stage(s, "x", tokens=["a"]), ValueError, "tokens"),
        (lambda s: stage_stepper(s, start="nope"), KeyError, "unknown stage"),
    ],
)
def test_bad_arguments_raise_clear_errors(stages, call, error, words):
    with pytest.raises(error, match=words):
        call(stages)


def test_plot_stage_handles_a_constant_tensor():
    attn = mha.MultiHeadAttention(4, 2).double()
    stages = attention_stages(attn, torch.zeros(3, 4, dtype=torch.float64))
    assert figure_png(plot_stage(stages, "x")).startswith(PNG)


@pytest.mark.parametrize(("key", "lines"), [("x", 0), ("q", 1), ("concat", 1), ("out", 0), ("weights", 0)])
def test_head_boundaries_are_marked_where_heads_sit_side_by_side(stages, key, lines):
    fig = plot_stage(stages, key)
    assert len(fig.axes[1].lines) == lines
