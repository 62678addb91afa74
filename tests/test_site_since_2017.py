"""The window explorer on the built chapter "Multi-head attention since 2017", as a reader meets it offline.

Reads _build/html (run `make book` first, as for tests/test_site.py). Over http and from disk (file://),
the page's layer masks and receptive fields equal mha.compute.since_2017's for several settings, the
cached-token count equals the sum over layers, and the controls redraw it.
"""

from __future__ import annotations

import pytest
import torch
from test_site import SCHEMES, SITE, _built_site, _page, server  # noqa: F401  (fixtures)

from mha.compute.since_2017 import layer_masks, receptive_fields
from mha.widgets.windows import PERIODS

pytestmark = pytest.mark.site  # reads the built book in _build/html

PAGE = "chapters/attention_since_2017"
SWEEP = [
    {"n": 16, "window": 4, "layers": 6, "global_period": 3},
    {"n": 9, "window": 1, "layers": 3, "global_period": 0},
    {"n": 32, "window": 5, "layers": 8, "global_period": 2},
    {"n": 12, "window": 3, "layers": 7, "global_period": 6},
    {"n": 7, "window": 32, "layers": 2, "global_period": 4},
]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_window_explorer_computes_what_python_computes(scheme, server, browser):  # noqa: F811
    tab, errors = _page(scheme, server, browser, PAGE)
    assert tab.locator(".mha-windows").count() == 1
    got = tab.evaluate("all => all.map(s => document.querySelector('.mha-windows').mha.update(s))", SWEEP)
    for s, drawn in zip(SWEEP, got, strict=True):
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
