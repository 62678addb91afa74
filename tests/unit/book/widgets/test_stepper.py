"""book.widgets.stepper: the live stage stepper sends every stage and carries its static front end."""

import json

import pytest
import torch

from _ext.figure_roots import figure_roots
from book.chapters.worked_example import worked_example
from book.compute.stages import STAGES, attention_stages
from book.widgets import StageStepper, stage_stepper
from book.widgets.frontend import stepper_config
from book.widgets.spec import stepper_spec

KEYS = [stage.key for stage in STAGES]


@pytest.fixture(scope="module")
def stages():
    ex = worked_example()
    return attention_stages(ex.module(), ex.x)


def test_stepper_sends_every_stage_once_and_walks_them(stages):
    stepper = stage_stepper(stages, tokens=["a", "b", "c", "d"])
    assert isinstance(stepper, StageStepper)
    config = stepper_config(stages, ["a", "b", "c", "d"], "out")  # the page draws from these
    assert stepper.config == {k: v for k, v in config.items() if k != "settings"}
    assert stepper.settings == {"stage": "out"}
    assert stepper.caption == "stage 13 of 13: output projection, shape (4, 8) = (n, d_model)"
    stepper.update(stage="x")
    for i, key in enumerate(KEYS):
        assert stepper.stage == key and stepper.index == i
        assert stepper.caption.startswith(f"stage {i + 1} of {len(KEYS)}: ")
        assert f"shape {tuple(stages[key].shape)} = " in stepper.caption
        assert torch.equal(stepper.values, stages[key])
        stepper.next()
    assert stepper.stage == "out"  # next stops at the end, previous at the start
    for _ in range(20):
        stepper.previous()
    assert stepper.stage == "x"
    stepper.settings = {"stage": "weights"}  # what the page sends
    assert stepper.caption.startswith("stage 10 of 13: attention weights")


def test_stepper_display_bundle_has_the_static_front_end(stages):
    stepper = stage_stepper(stages, start="q")
    bundle, _ = stepper._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == stepper.model_id
    page = bundle["text/html"]
    assert page.startswith('<div class="mha-stepper"><script type="application/json">')
    config = json.loads(figure_roots(page)[0].json)
    assert config["settings"] == {"stage": "q"} and [s["key"] for s in config["stages"]] == KEYS
    assert config["spec"] == stepper_spec()
    assert config["stages"][KEYS.index("q")]["values"] == stages["q"].tolist()
    assert bundle["text/plain"] == f"StageStepper({stepper.caption})"


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda s: stage_stepper(s, start="nope"), ValueError, "stage must be one of x, q, k, v, q_heads"),
        (lambda s: stage_stepper({"x": s["x"]}), ValueError, "lacks"),
        (lambda s: stage_stepper(s, tokens=["a"]), ValueError, "tokens must be 4 strings"),
        (lambda s: stage_stepper(s).update(stage="nope"), ValueError, 'got "nope"'),
        (lambda s: stage_stepper(s).update(stage=3), ValueError, "got 3"),
    ],
)
def test_stepper_rejects_bad_arguments(stages, call, error, match):
    with pytest.raises(error, match=match):
        call(stages)
