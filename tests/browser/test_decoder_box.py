"""The decoder box as a live widget in Chromium, on a page of its own (its Python:
tests/unit/book/decoder/test_box.py).

The widget's ES module on a stand-in Jupyter model draws at once what Python computes, switches heads off
through Python, and shows Python's messages for bad input; a page without the weights script beside the box
says so and shows the box's picture.
"""

from __future__ import annotations

import numpy as np

from book.decoder.box import DecoderWidget, box_html, box_spec, picture
from book.decoder.model import MESSAGES, predict
from book.widgets.frontend import STYLESHEET, WIDGET_SCRIPTS, copy_static
from tests.browser.figure_checks import render_live

API = "document.querySelector('.mha-decoder').mha"


def test_the_live_widget_draws_at_once_what_python_computes(browser):
    widget = DecoderWidget({(0, 1): "previous token", (1, 0): "induction"}, shown_head=(1, 0))
    asked = []
    page, errors = render_live(browser, widget, asked)
    text = widget.spec["defaults"]["text"]
    page.locator(".md-token").nth(len(text) - 1).wait_for()  # drawn at once, with no Run
    assert asked[0]["text"] == text and asked[0]["off"] == []
    got = page.evaluate(f"([t, off]) => {API}.predict(t, {{off}})", ["abc abc", [[1, 0]]])
    expected = predict("abc abc", off=[(1, 0)])
    assert got["tokens"] == expected["tokens"]
    # the widget computes on one thread, this process on several: float32 round-off apart
    top = [[list(pair) for pair in row] for row in expected["top"]]
    assert [[t for t, _ in row] for row in got["top"]] == [[t for t, _ in row] for row in top]
    np.testing.assert_allclose(
        [[p for _, p in row] for row in got["top"]], [[p for _, p in row] for row in top], atol=1e-5
    )
    np.testing.assert_allclose(np.array(got["attention"]), expected["attention"].numpy(), atol=1e-5, rtol=0)
    page.locator("input[name=off_1_0]").check()
    page.locator(".md-heads-off").filter(has_text="1 of 8 heads off: L2H1 (induction).").wait_for()
    assert asked[-1]["off"] == [[1, 0]]
    kind, message = page.evaluate(
        f"() => {API}.predict('').then(() => [], (e) => [e.constructor.name, e.message])"
    )
    assert (kind, message) == ("Error", MESSAGES["empty"])
    page.locator("input[name=text]").fill("")
    page.locator(".mha-status").filter(has_text=MESSAGES["empty"]).wait_for()
    assert not errors, errors
    page.close()


def test_a_page_without_the_weights_script_says_so_and_shows_the_picture(browser, tmp_path):
    spec = box_spec()
    copy_static(tmp_path, (*WIDGET_SCRIPTS["mountDecoder"], STYLESHEET))  # no decoder-weights.js beside
    scripts = "".join(f'<script src="{name}"></script>' for name in WIDGET_SCRIPTS["mountDecoder"])
    (tmp_path / "index.html").write_text(
        f'<!doctype html><html lang="en"><head><link rel="stylesheet" href="{STYLESHEET}">{scripts}</head>'
        f"<body>{box_html(spec, picture=picture(spec))}</body></html>",
        encoding="utf-8",
    )
    page = browser.new_page()
    page.goto((tmp_path / "index.html").as_uri())
    status = page.locator(".mha-decoder .mha-status")
    status.filter(has_text="could not load decoder-weights.js").wait_for()
    assert "mha-error" in status.get_attribute("class")
    assert page.locator(".mha-decoder img.md-print").is_visible()
    assert not page.locator(".mha-decoder .md-tokens").is_visible()
    page.close()
