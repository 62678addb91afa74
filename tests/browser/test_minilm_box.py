"""The MiniLM box in Chromium, on a page of its own (its Python: tests/unit/book/minilm/test_page.py).

The live widget's ES module on a stand-in Jupyter model shows what Python computes; a page without the
weights' script beside the box's says so and shows the box's picture; a box with stored weights ("What trained
heads do") draws them at once, without the model, and sends a sentence of the reader's own to the model.
"""

from __future__ import annotations

import numpy as np
import torch

from book.minilm import page as minilm_page
from book.minilm.page import WEIGHTS_FILE, MiniLMWidget, minilm_box
from book.minilm.stored import dequantise, stored_attention
from book.widgets.frontend import STYLESHEET, WIDGET_SCRIPTS, copy_static
from mha.pretrained import attend
from tests.browser.figure_checks import render_live
from tests.minilm_cases import LABELS, STORED_TOKENS


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


def _page_of(browser, directory, box: str):
    """A page from disk with the box's scripts and ``box``, but no weights beside them; its errors and the
    files it asked for."""
    copy_static(directory, (*WIDGET_SCRIPTS["mountMiniLM"], STYLESHEET))
    scripts = "".join(f'<script src="{name}"></script>' for name in WIDGET_SCRIPTS["mountMiniLM"])
    (directory / "index.html").write_text(
        f'<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="mha.css">{scripts}'
        f"</head><body>{box}</body></html>"
    )
    page = browser.new_page()
    errors, requests = [], []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto((directory / "index.html").as_uri())
    return page, errors, requests


def test_where_the_weights_are_missing_the_box_says_so_and_shows_its_picture(browser, tmp_path, minilm):
    """A page without minilm-weights.js beside minilm.js (a slide deck, say): a message, then the picture."""
    page, errors, _ = _page_of(browser, tmp_path, minilm_box(LABELS, encoder=minilm).html)
    assert not page.locator(".mm-print").is_visible()
    assert page.locator("input[name=sentence]").input_value() == minilm_page.DEFAULT_SENTENCE
    page.locator("button[name=run]").click()
    status = page.locator(".mha-status.mha-error")
    status.wait_for()
    assert WEIGHTS_FILE in status.text_content() and page.locator(".mm-print").is_visible()
    page.close()
    assert not errors, errors


def test_stored_weights_are_drawn_at_once_and_a_sentence_of_ones_own_goes_to_the_model(browser, tmp_path):
    """One case of the stored box (the sweeps: tests/unit/book/minilm/test_page.py): no model is asked for
    while the sentence is a stored one; picking another draws it at once; one's own sentence, or a stored one
    with a head off, and Run asks for the model (whose weights are missing here)."""
    texts = list(STORED_TOKENS)
    generator = torch.Generator().manual_seed(0)
    attentions = [
        torch.rand(6, 12, len(t), len(t), generator=generator).softmax(-1) for t in STORED_TOKENS.values()
    ]
    stored = stored_attention(texts, list(STORED_TOKENS.values()), attentions)
    box = minilm_box(LABELS, sentence=texts[0], other="", stored=stored).html
    page, errors, requests = _page_of(browser, tmp_path, box)
    api = "document.querySelector('.mha-minilm').mha"
    page.evaluate(f"() => {api}.ready")
    drawn = page.evaluate(f"() => {api}.drawn")
    assert drawn == {"sentence": texts[0], "tokens": STORED_TOKENS[texts[0]], "layers": 6, "stored": True}
    assert page.locator(".mha-status").text_content().startswith("Sentence 1 of the 2 stored with this page")
    assert page.locator("datalist option").evaluate_all("os => os.map(o => o.value)") == texts
    got = page.evaluate(f"s => {api}.stored(s)", texts[1])
    np.testing.assert_allclose(np.array(got["attention"]), dequantise(stored)[1], atol=1e-7, rtol=0)
    page.locator("input[name=sentence]").fill(texts[1])  # as a reader picks a suggestion: no Run
    page.wait_for_function(f"s => {api}.drawn.sentence === s", arg=texts[1])
    assert (
        page.locator(".mha-minilm .mha-figure").is_visible()
        and page.locator(".mm-readout").text_content() == ""
    )
    assert not any(WEIGHTS_FILE in r for r in requests)
    status = page.locator(".mha-status.mha-error")
    page.locator("input[name=sentence]").fill("A sentence of my own.")
    page.locator("button[name=run]").click()
    status.wait_for()
    assert WEIGHTS_FILE in status.text_content() and sum(WEIGHTS_FILE in r for r in requests) == 1
    page.locator("input[name=sentence]").fill(texts[0])  # the load failed: no model in the page
    page.wait_for_function(f"s => {api}.drawn.sentence === s && {api}.drawn.stored", arg=texts[0])
    page.locator("button[name=toggle]").click()  # the head shown large, switched off
    page.locator("button[name=run]").click()
    status.wait_for()
    assert sum(WEIGHTS_FILE in r for r in requests) == 2
    page.close()
    assert not errors, errors
