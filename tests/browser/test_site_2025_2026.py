"""The sparse-attention figure on the built chapter "Attention in 2025–2026", as a reader meets it offline.

Reads the built book (tests/built_site.py). From disk (file://), the page's kept keys equal
book.compute.attention_2026.index_selection's and its pair counts mha.costs.sparse.causal_pairs' for the
port's cases (the figure's one browser check of its numbers: the port on the same cases runs in the unit lane,
tests/unit/book/compute/test_attention_2026.py); the figure passes axe-core in both themes on a desktop and a
phone, and prints its picture.
"""

from __future__ import annotations

import pytest
import torch

from book.compute.attention_2026 import index_selection
from mha.costs.sparse import causal_pairs
from tests.browser.figure_checks import axe_findings
from tests.built_site import SITE, is_local, open_page
from tests.port_cases import SPARSE_SWEEP

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PAGE = "chapters/attention_2025_2026"
ROOT = ".mha-sparse"


def test_the_sparse_figure_keeps_the_keys_python_keeps(browser):
    tab, errors = open_page(browser, PAGE)
    assert tab.locator(ROOT).count() == 1
    got = tab.evaluate(f"all => all.map(s => document.querySelector('{ROOT}').mha.update(s))", SPARSE_SWEEP)
    for s, drawn in zip(SPARSE_SWEEP, got, strict=True):
        n = len(drawn["tokens"])
        k = n if s["top_k"] is None else min(s["top_k"], n)
        _, selected = index_selection(s["sentence"], k, seed=s["seed"])
        assert torch.equal(torch.tensor(drawn["selected"]), selected), s
        assert (drawn["kept"], drawn["pairs"]) == (causal_pairs(n, k), causal_pairs(n)), s
    tab.close()
    assert not errors, errors


# A width does not change colours, nor a theme widths: the two states cover both themes and both widths.
@pytest.mark.parametrize(("theme", "width"), [("light", 1280), ("dark", 390)])
def test_the_sparse_figure_passes_axe_core_in_both_themes_on_desktop_and_phone(browser, theme, width):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=theme)
    tab = context.new_page()
    tab.route(lambda url: not is_local(url), lambda route: route.abort())
    tab.goto((SITE / f"{PAGE}.html").as_uri(), wait_until="load")
    tab.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
    tab.locator(f"{ROOT} canvas").focus()  # a selected cell and its read-out, as a keyboard reader sees them
    tab.keyboard.press("ArrowDown")
    found = axe_findings(tab, ROOT)
    fits = tab.evaluate(f"() => document.querySelector('{ROOT} canvas').getBoundingClientRect().right")
    layout = tab.evaluate(f"() => document.querySelector('{ROOT}').mha.layout")
    context.close()
    assert not found, found
    assert fits <= width, f"the canvas ends at {fits} px on a {width} px screen"
    titles = [b["text"] for b in layout["boxes"] if b["kind"] == "title"]
    assert not any("\u2026" in t for t in titles), titles  # no title cut
    if width == 1280:  # the default 12 tokens: the two panels side by side, not stacked 900 px tall
        assert layout["perLine"] == 2 and layout["height"] < 400, (layout["perLine"], layout["height"])


def test_the_sparse_figure_prints_its_picture(browser):
    tab, errors = open_page(browser, PAGE)
    tab.emulate_media(media="print")
    box = tab.evaluate(f"""() => {{
        const c = document.querySelector('{ROOT} canvas'), r = c.getBoundingClientRect();
        return {{visible: getComputedStyle(c).display !== 'none' && r.width > 0 && r.height > 0,
                 drawn: c.width > 0 && c.height > 0}};
    }}""")
    tab.close()
    assert box == {"visible": True, "drawn": True}
    assert not errors, errors
