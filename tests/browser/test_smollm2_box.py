"""The SmolLM2 figure's live widget in Chromium, on a page of its own (its Python:
tests/unit/book/smollm2/test_page.py): the ES module on a stand-in Jupyter model runs the reader's text
through Python (the model, :func:`mha.pretrained.smollm2.predict`) with the heads switched off, and draws
what comes back."""

from __future__ import annotations

from book.smollm2.census import load_results
from book.smollm2.page import SmolLM2Widget
from book.smollm2.stored import load_stored
from tests.browser.figure_checks import render_live

API = "document.querySelector('.mha-smollm2').mha"


def test_the_live_widget_runs_the_readers_text_with_heads_off(browser, smollm2):
    from mha.pretrained.smollm2 import predict

    widget = SmolLM2Widget(
        load_results(), load_stored(), text="The cat sat on the mat. The cat sat on the mat."
    )
    asked: list[dict] = []
    page, errors = render_live(browser, widget, asked)
    root = page.locator(".mha-smollm2")
    root.locator(".mha-status").filter(has_text="run by Python").wait_for()
    drawn = page.evaluate(f"() => {API}.drawn")
    expected = predict("The cat sat on the mat. The cat sat on the mat.")
    assert drawn["live"] and drawn["tokens"] == expected["tokens"]
    assert root.locator(".ms-scores td").nth(0).text_content() != "–"  # the text's own scores
    root.locator("input[name=text]").fill("Rain fell on the roofs of the old town.")
    root.locator("button[name=run]").click()
    root.locator(".mha-status").filter(has_text="10 tokens").wait_for()
    root.locator("button[name=toggle]").click()  # the head shown: layer 19, head 7
    root.locator(".mha-status").filter(has_text="1 head switched off").wait_for()
    assert asked[-1]["off"] == [[18, 6]] and page.evaluate(f"() => {API}.off") == [[18, 6]]
    assert root.locator(".ms-cell.mm-off").count() == 1
    root.locator("button[name=reset]").click()
    root.locator(".mha-status").filter(has_text="run by Python in this notebook's kernel.").wait_for()
    assert asked[-1]["off"] == []
    page.close()
    assert not errors, errors
