"""The window explorer on the built chapter "Multi-head attention since 2017", as a reader meets it offline.

Reads the built book (tests/built_site.py). From disk (file://), the page's layer
masks and receptive fields equal book.compute.since_2017's for several settings, the cached-token count equals
the sum over layers, and the controls redraw it: the figure's one browser check of its numbers (its port on
the same cases, in the unit lane: tests/unit/book/compute/test_since_2017.py).
"""

from __future__ import annotations

import pytest
import torch

from book.compute.since_2017 import layer_masks, receptive_fields
from book.widgets.windows import PERIODS
from tests.built_site import open_page
from tests.port_cases import WINDOW_SWEEP

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PAGE = "chapters/attention_since_2017"


def test_the_window_explorer_computes_what_python_computes(browser):
    tab, errors = open_page(browser, PAGE)
    assert tab.locator(".mha-windows").count() == 1
    update = "all => all.map(s => document.querySelector('.mha-windows').mha.update(s))"
    got = tab.evaluate(update, WINDOW_SWEEP)
    for s, drawn in zip(WINDOW_SWEEP, got, strict=True):
        assert s["global_period"] in PERIODS
        masks = layer_masks(
            s["n"], window=s["window"], layers=s["layers"], global_period=s["global_period"] or None
        )
        assert torch.equal(torch.tensor(drawn["masks"]), masks), s
        assert torch.equal(torch.tensor(drawn["seen"]), receptive_fields(masks)), s
        kept = [s["n"] if m[-1].all() else min(s["n"], s["window"]) for m in masks]  # a global row sees all
        assert drawn["cached"] == sum(kept) and drawn["full"] == s["n"] * s["layers"], s
    root = tab.locator(".mha-windows")
    before = root.locator(".mha-status").text_content()
    root.locator("select[name=layer]").select_option("1")
    assert root.locator(".mha-status").text_content() != before
    assert tab.evaluate("() => document.querySelector('.mha-windows').mha.settings.layer") == 1
    tab.close()
    assert not errors, errors
