"""tests/contrast.py, the WCAG contrast ratio the browser tests measure painted colours with, in V8."""

import json

import pytest

from tests.contrast import CONTRAST_JS, with_contrast


@pytest.fixture(scope="module")
def js():
    mini_racer = pytest.importorskip("py_mini_racer")
    ctx = mini_racer.MiniRacer()
    ctx.eval(CONTRAST_JS)
    yield ctx
    ctx.close()


@pytest.mark.parametrize(
    "ink, back, ratio",
    [
        ([0, 0, 0], [255, 255, 255], 21.0),  # WCAG's largest ratio
        ([255, 255, 255], [255, 255, 255], 1.0),  # its smallest
        ([118, 118, 118], [255, 255, 255], 4.54),  # #767676: the greyest grey that passes 4.5:1 on white
        ([119, 119, 119], [255, 255, 255], 4.48),  # #777777: just fails
        ([255, 0, 0], [255, 255, 255], 4.0),  # pure red on white
    ],
)
def test_contrast_is_wcag_s_ratio_either_way_round(js, ink, back, ratio):
    assert js.eval(f"contrast({ink}, {back})") == pytest.approx(ratio, abs=0.005)
    assert js.eval(f"contrast({back}, {ink})") == js.eval(f"contrast({ink}, {back})")


def test_rgb_reads_a_computed_colour_and_a_script_gets_both(js):
    script = with_contrast(
        'return JSON.stringify([rgb("rgba(12, 34, 56, 0.5)"), contrast([0, 0, 0], [255, 255, 255])]);'
    )
    assert json.loads(js.eval(f"({script})()")) == [[12, 34, 56, 0.5], 21]
