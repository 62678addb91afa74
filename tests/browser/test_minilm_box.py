"""Chapter 1's MiniLM box in Chromium, on a page of its own (its Python: tests/unit/test_minilm_page.py).

The live widget's ES module on a stand-in Jupyter model shows what Python computes; a page without the
weights' script beside the box's says so and shows the box's picture.
"""

from __future__ import annotations

import numpy as np

from book.minilm import page as minilm_page
from book.minilm.page import WEIGHTS_FILE, MiniLMWidget, minilm_box
from book.widgets.frontend import STYLESHEET, WIDGET_SCRIPTS, copy_static
from mha.pretrained import attend
from tests.browser.figure_checks import render_live
from tests.minilm_cases import LABELS


def test_the_live_widget_front_end_shows_what_python_computes(browser, minilm):
    widget = MiniLMWidget(LABELS, encoder=minilm)
    page, errors = render_live(browser, widget)
    assert page.locator(".mha-minilm .mm-grid canvas").count() == 72
    got = page.evaluate("s => document.querySelector('.mha-minilm').mha.attend(s)", "The cat sat.")
    tokens, expected = attend(minilm, "The cat sat.")
    assert got["tokens"] == tokens
    # the widget computes on one thread, this process on several: float32 round-off apart
    np.testing.assert_allclose(np.array(got["attention"]), expected.numpy(), atol=1e-5, rtol=0)
    page.locator("button[name=run]").click()
    page.locator(".mm-readout").filter(has_text="All 72 heads on").wait_for()
    page.locator("select[name=layer_off]").select_option("5")
    page.locator(".mm-readout").filter(has_text="12 of 72 heads off").wait_for()
    page.close()
    assert not errors, errors


def test_where_the_weights_are_missing_the_box_says_so_and_shows_its_picture(browser, tmp_path, minilm):
    """A page without minilm-weights.js beside minilm.js (a slide deck, say): a message, then the picture."""
    copy_static(tmp_path, (*WIDGET_SCRIPTS["mountMiniLM"], STYLESHEET))
    scripts = "".join(f'<script src="{name}"></script>' for name in WIDGET_SCRIPTS["mountMiniLM"])
    box = minilm_box(LABELS, encoder=minilm).html
    (tmp_path / "index.html").write_text(
        f'<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="mha.css">{scripts}'
        f"</head><body>{box}</body></html>"
    )
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((tmp_path / "index.html").as_uri())
    assert not page.locator(".mm-print").is_visible()
    assert page.locator("input[name=sentence]").input_value() == minilm_page.DEFAULT_SENTENCE
    page.locator("button[name=run]").click()
    status = page.locator(".mha-status.mha-error")
    status.wait_for()
    assert WEIGHTS_FILE in status.text_content() and page.locator(".mm-print").is_visible()
    page.close()
    assert not errors, errors
