"""The real-heads explorer's front end in Chromium (its Python side: tests/unit/test_realheads.py).

The widget's ES module (:func:`book.widgets.frontend.widget_esm`) rendered on a stand-in anywidget model draws
the head Python sends and sends back what the reader chooses and types; the same file still mounts the static
viewer.
"""

from __future__ import annotations

import functools
import http.server
import threading

import numpy as np
import pytest
import torch

from book.minilm.realheads import SCALE, EncoderExplorer, dequantise, viewer_html
from book.widgets.frontend import STYLESHEET, WIDGET_SCRIPTS, copy_static, widget_esm
from tests.browser.widget_harness import RENDER_LIVE, live_payload
from tests.minilm_cases import CORPUS_TEXTS, LITERAL, TIRED, check_drawn, corpus, encoder

pytestmark = pytest.mark.usefixtures("minilm")  # every test runs all-MiniLM-L6-v2


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A page over http (a blob: module needs it) with the classic scripts and a static viewer on it."""
    directory = tmp_path_factory.mktemp("realheads")
    copy_static(directory, (*WIDGET_SCRIPTS["mountRealHeads"], STYLESHEET))
    scripts = "".join(f'<script src="{n}"></script>' for n in WIDGET_SCRIPTS["mountRealHeads"])
    root = viewer_html(corpus()).replace('class="mha-realheads"', 'class="mha-realheads" id="static"')
    (directory / "index.html").write_text(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>real heads</title>'
        f'<link rel="stylesheet" href="mha.css">{scripts}</head>'
        f'<body style="max-width: 980px">{root}</body></html>',
        encoding="utf-8",
    )
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(directory))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/index.html"
    server.shutdown()


@pytest.fixture
def page(site, browser):
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.route("**/*", lambda r: r.continue_() if "127.0.0.1" in r.request.url else r.abort())
    page.goto(site)
    yield page
    page.close()
    assert errors == [], errors


def picture(page) -> dict:
    return page.evaluate(
        "() => { const m = live.root.mha; "
        "return {weights: m.weights, tokens: m.tokens, settings: m.settings, message: m.message}; }"
    )


def test_the_live_explorer_draws_python_s_head_and_sends_the_typed_sentence(page):
    explorer = EncoderExplorer(encoder(), sentence=LITERAL, layer=0, head=2, corpus=corpus())
    traits = {"config": explorer.config, "settings": explorer.settings, "drawn": live_payload(explorer.drawn)}
    page.evaluate(RENDER_LIVE, [widget_esm("mountRealHeads"), traits, "live"])
    view = picture(page)
    assert page.evaluate("() => live.root.mha.live") and view["tokens"] == explorer.tokens
    torch.testing.assert_close(
        torch.tensor(view["weights"], dtype=torch.float64), explorer.weights.double(), atol=0, rtol=0
    )
    field = page.locator("#live input[name=sentence]")
    assert field.input_value() == LITERAL  # the text, literally
    assert page.locator("#live select[name=layer]").input_value() == "0"
    assert page.locator("#live select[name=head] option:checked").text_content() == "3"  # 1-based
    examples = page.locator("#live datalist option").evaluate_all("os => os.map((o) => o.value)")
    assert examples == list(CORPUS_TEXTS)
    assert "run in the kernel" in page.locator("#live .mha-status").text_content()

    # The reader chooses head 6: the settings go to Python, and the page draws the head at once from the
    # 8-bit copy of every head Python sent with the sentence (within half a step, 1/510); Python's float32
    # head then takes its place.
    page.locator("#live select[name=head]").select_option(index=5)  # label "6"
    assert page.evaluate("() => live.saved") == [{"sentence": LITERAL, "layer": 0, "head": 5}]
    at_once = torch.tensor(picture(page)["weights"], dtype=torch.float64)
    expected = explorer.attentions[0, 5].double()
    assert (at_once - expected).abs().max() <= 0.5 / SCALE + 1e-7 and not torch.equal(at_once, expected)
    explorer.settings = page.evaluate("() => live.saved.at(-1)")  # what ipywidgets does with the message
    page.evaluate("d => live.python('drawn', d)", live_payload(explorer.drawn))
    torch.testing.assert_close(
        torch.tensor(picture(page)["weights"], dtype=torch.float64), explorer.weights.double(), atol=0, rtol=0
    )
    check_drawn(explorer, LITERAL, 0, 5)

    # The reader types a sentence: it is sent back as typed, and Python's answer is drawn.
    field.fill(TIRED)
    assert page.evaluate("() => live.saved.at(-1)") == {"sentence": TIRED, "layer": 0, "head": 5}
    explorer.settings = page.evaluate("() => live.saved.at(-1)")
    page.evaluate("d => live.python('drawn', d)", live_payload(explorer.drawn))
    tokens = explorer.tokens
    now = picture(page)
    assert now["tokens"] == tokens
    torch.testing.assert_close(
        torch.tensor(now["weights"], dtype=torch.float64), explorer.weights.double(), atol=0, rtol=0
    )
    check_drawn(explorer, TIRED, 0, 5)

    # An empty sentence: Python's message is shown, literally, and the picture stays.
    field.fill("")
    explorer.settings = page.evaluate("() => live.saved.at(-1)")
    page.evaluate("d => live.python('drawn', d)", live_payload(explorer.drawn))
    assert page.locator("#live .mha-status").text_content() == explorer.message
    assert page.locator("#live .mha-warning").count() == 1 and picture(page)["tokens"] == tokens

    # A notebook cell drives it: the controls follow Python's settings, then the new picture arrives.
    explorer.update(sentence="Birds sing.", layer=2, head=7)
    page.evaluate("s => live.python('settings', s)", explorer.settings)
    assert field.input_value() == "Birds sing."
    assert page.locator("#live select[name=layer] option:checked").text_content() == "3"
    page.evaluate("d => live.python('drawn', d)", live_payload(explorer.drawn))
    now = picture(page)
    assert now["tokens"] == explorer.tokens and now["message"] == ""
    assert page.locator("#live .mha-warning").count() == 0
    torch.testing.assert_close(
        torch.tensor(now["weights"], dtype=torch.float64), explorer.weights.double(), atol=0, rtol=0
    )
    saved = page.evaluate("() => live.saved.length")

    # The keyboard: Page Down draws the next head at once and asks Python for it; the read-out names the cell.
    page.locator("#live canvas").focus()
    page.keyboard.press("PageDown")
    assert page.evaluate("() => live.saved.at(-1)") == {"sentence": "Birds sing.", "layer": 2, "head": 8}
    assert page.evaluate("() => live.saved.length") == saved + 1
    readout = page.locator("#live .mha-readout").text_content()
    assert readout.startswith("layer 3, head 9: query \u201c[CLS]\u201d (row 1)"), readout
    page.evaluate("() => live.cleanup()")
    assert page.evaluate("() => Object.keys(live.handlers)") == []


def test_the_static_viewer_still_draws_its_stored_weights(page):
    page.evaluate("() => document.getElementById('static').mha.ready")
    stored = dequantise(corpus())
    for settings in ({"sentence": 0, "layer": 0, "head": 2}, {"sentence": 1, "layer": 5, "head": 11}):
        if settings["sentence"]:
            page.locator("#static select[name=sentence]").select_option(index=1)
            page.locator("#static select[name=layer]").select_option(index=5)
            page.locator("#static select[name=head]").select_option(index=11)
        view = page.evaluate(
            "() => { const m = document.getElementById('static').mha; "
            "return {settings: m.settings, weights: m.weights, tokens: m.tokens, live: m.live}; }"
        )
        assert view["settings"] == settings and view["live"] is False
        s, layer, head = settings.values()
        np.testing.assert_array_equal(np.array(view["weights"]), stored[s][layer, head])
        assert view["tokens"] == corpus()["sentences"][s]["tokens"]
    assert "sentence 2 of 2" in page.locator("#static .mha-status").text_content()
