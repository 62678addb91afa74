"""The real-heads explorer (mha.widgets.realheads.EncoderExplorer): all-MiniLM-L6-v2 on a typed sentence.

Python side: what the page is sent is exactly :func:`mha.pretrained.attend`'s head, a reader's unusable
sentence gives a message and keeps the picture, values no control offers raise, and the display bundle
carries the static viewer for the site. Browser side (headless Chromium): the widget's ES module
(:func:`mha.widgets.frontend.widget_esm`) rendered on a stand-in anywidget model draws the head Python
sends and sends back what the reader chooses and types; the same file still mounts the static viewer.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading

import numpy as np
import pytest
import torch
from widget_harness import RENDER_LIVE, live_payload  # tests/widget_harness.py

from mha.pretrained import MINILM, attend, load_minilm
from mha.widgets import realheads
from mha.widgets.frontend import STYLESHEET, WIDGET_SCRIPTS, copy_static, one_thread, widget_esm
from mha.widgets.realheads import (
    MAX_TOKENS,
    SCALE,
    STILL,
    EncoderExplorer,
    dequantise,
    viewer_config,
    viewer_html,
)
from mha.widgets.spec import realheads_spec

CORPUS_TEXTS = ("The cat sat on the mat.", "Birds sing.")
TIRED = "The animal didn't cross the street because it was too tired."
LITERAL = 'a <b>bold</b> "cat" </script> & $x^2$'


@functools.cache
def encoder():
    return load_minilm()


@functools.cache
def corpus() -> dict:
    """A small viewer config of the same encoder: two sentences."""
    tokens, attentions = zip(*(attend(encoder(), t) for t in CORPUS_TEXTS), strict=True)
    return viewer_config(CORPUS_TEXTS, tokens, attentions, model="all-MiniLM-L6-v2", layer=0, head=2)


def sent(explorer: EncoderExplorer) -> torch.Tensor:
    """The weights the page is sent, ``(n, n)``, decoded from the float32 bytes."""
    n, m = explorer.drawn["shape"]
    return torch.from_numpy(np.frombuffer(explorer.drawn["weights"], dtype="<f4").reshape(n, m).copy())


def check_drawn(explorer: EncoderExplorer, text: str, layer: int, head: int) -> None:
    """The page is sent exactly attend()'s head ``(layer, head)`` of ``text``, and the settings agree.

    The explorer runs the encoder on one thread (the reference here too); on several threads the sums
    may round differently, by about 1e-6.
    """
    with one_thread():
        tokens, attentions = attend(encoder(), text)  # (L, h, n, n)
    n = len(tokens)
    assert explorer.text == text and explorer.tokens == tokens
    assert (explorer.layer, explorer.head) == (layer, head)
    assert explorer.weights.shape == (n, n) and explorer.weights.dtype == torch.float32
    assert torch.equal(explorer.weights, attentions[layer, head])
    assert torch.equal(explorer.attentions, attentions)
    assert torch.equal(sent(explorer), attentions[layer, head])
    torch.testing.assert_close(explorer.attentions, attend(encoder(), text)[1], atol=1e-5, rtol=0)
    drawn = explorer.drawn
    assert (drawn["text"], drawn["tokens"], drawn["shape"]) == (text, tokens, [n, n])
    assert (drawn["layer"], drawn["head"]) == (layer, head)
    assert explorer.settings["layer"] == layer and explorer.settings["head"] == head


# ---------------------------------------------------------------------------------------------------------
# Python side
# ---------------------------------------------------------------------------------------------------------


def test_update_draws_the_encoder_head_that_attend_gives():
    explorer = EncoderExplorer(encoder(), sentence=CORPUS_TEXTS[0], layer=0, head=2)
    check_drawn(explorer, CORPUS_TEXTS[0], 0, 2)
    assert explorer.message == "" and explorer.drawn["level"] == ""
    assert explorer.config == {
        "model": "all-MiniLM-L6-v2",
        "layers": MINILM.n_layers,
        "heads": MINILM.h,
        "max_tokens": MAX_TOKENS,
        "spec": realheads_spec(layers=MINILM.n_layers, heads=MINILM.h),
    }
    for changes, (text, layer, head) in [
        ({"layer": 3, "head": 1}, (CORPUS_TEXTS[0], 3, 1)),
        ({"sentence": TIRED}, (TIRED, 3, 1)),
        ({"sentence": "Birds sing.", "layer": 5, "head": 11}, ("Birds sing.", 5, 11)),
        ({"head": 0}, ("Birds sing.", 5, 0)),
    ]:
        explorer.update(**changes)
        check_drawn(explorer, text, layer, head)
        assert explorer.settings == {"sentence": text, "layer": layer, "head": head}


def test_the_page_s_settings_are_computed_as_update_does():
    explorer = EncoderExplorer(encoder(), sentence="Birds sing.", layer=1, head=4)
    explorer.settings = {
        "sentence": TIRED,
        "layer": 1,
        "head": 4,
    }  # what ipywidgets does with a typed sentence
    check_drawn(explorer, TIRED, 1, 4)
    explorer.settings = {"sentence": TIRED, "layer": 4, "head": 7}
    check_drawn(explorer, TIRED, 4, 7)


def test_each_sentence_runs_the_encoder_once(monkeypatch):
    calls = []

    def counting(enc, text):
        calls.append(text)
        return attend(enc, text)

    monkeypatch.setattr(realheads, "attend", counting)
    explorer = EncoderExplorer(encoder(), sentence="Birds sing.")
    for changes in ({"head": 3}, {"layer": 2}, {"sentence": TIRED}, {"sentence": "Birds sing."}, {"head": 4}):
        explorer.update(**changes)
    assert calls == ["Birds sing.", TIRED]


@pytest.mark.parametrize(
    ("sentence", "words"),
    [
        ("", "Type a sentence"),
        (" \t\n ", "Type a sentence"),
        (" ".join(["word"] * (MAX_TOKENS - 1)), f"makes {MAX_TOKENS + 1} tokens"),
        ("word " * 400, "makes more than 128 tokens"),
    ],
)
def test_an_unusable_sentence_says_why_and_keeps_the_picture(sentence, words):
    explorer = EncoderExplorer(encoder(), sentence="Birds sing.", layer=2, head=3)
    explorer.update(sentence=sentence)
    assert words in explorer.message and explorer.message.endswith(STILL)
    assert explorer.drawn["message"] == explorer.message and explorer.drawn["level"] == "warning"
    assert explorer.settings["sentence"] == sentence  # the field keeps what the reader typed
    check_drawn(explorer, "Birds sing.", 2, 3)  # the last valid sentence
    explorer.update(head=5)  # another head of the last valid sentence, the message stays
    check_drawn(explorer, "Birds sing.", 2, 5)
    assert words in explorer.drawn["message"]
    explorer.update(sentence=TIRED)
    check_drawn(explorer, TIRED, 2, 5)
    assert explorer.message == "" and explorer.drawn["level"] == ""


def test_a_sentence_of_max_tokens_is_drawn():
    sentence = " ".join(["word"] * (MAX_TOKENS - 2))
    explorer = EncoderExplorer(encoder(), sentence=sentence)
    assert len(explorer.tokens) == MAX_TOKENS and explorer.message == ""


def test_text_is_kept_literally():
    explorer = EncoderExplorer(encoder(), sentence=LITERAL)
    tokens, _ = attend(encoder(), LITERAL)
    assert explorer.drawn["text"] == LITERAL and explorer.drawn["tokens"] == tokens
    assert "<" in tokens and "/" in tokens
    page = explorer.static_html()
    assert "</script>" not in page.split('type="application/json">', 1)[1].split("</script>", 1)[0]
    config = json.loads(re.search(r'type="application/json">(.*?)</script>', page, re.S).group(1))
    assert config["sentences"] == [{"text": LITERAL, "tokens": tokens}]


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"layer": MINILM.n_layers}, ValueError),
        ({"head": -1}, ValueError),
        ({"head": True}, ValueError),
        ({"layer": 1.0}, ValueError),
        ({"sentence": 3}, TypeError),
        ({"sentences": "x"}, KeyError),
    ],
)
def test_values_no_control_offers_raise_and_change_nothing(changes, error):
    explorer = EncoderExplorer(encoder(), sentence="Birds sing.", layer=1, head=1)
    with pytest.raises(error):
        explorer.update(**{"layer": 4, **changes})  # a valid change beside a bad one: neither is made
    check_drawn(explorer, "Birds sing.", 1, 1)
    assert explorer.settings == {"sentence": "Birds sing.", "layer": 1, "head": 1}


def test_constructor_checks():
    with pytest.raises(TypeError, match="MiniLMEncoder"):
        EncoderExplorer(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="cannot be drawn"):
        EncoderExplorer(encoder(), sentence="")
    with pytest.raises(ValueError, match="layer"):
        EncoderExplorer(encoder(), layer=6)
    with pytest.raises(ValueError, match="max_tokens"):
        EncoderExplorer(encoder(), max_tokens=1)
    tokens, attentions = attend(encoder(), "Birds sing.")
    five_layers = viewer_config(["Birds sing."], [tokens], [attentions[:5]], model="five layers")
    with pytest.raises(ValueError, match="5 layers x 12 heads"):
        EncoderExplorer(encoder(), corpus=five_layers)


def test_the_bundle_holds_the_widget_and_the_static_viewer_of_the_corpus():
    explorer = EncoderExplorer(encoder(), sentence="Birds sing.", layer=4, head=6, corpus=corpus())
    sentence = explorer.config["spec"]["controls"][0]  # a text box that suggests the corpus's sentences
    assert sentence["kind"] == "text" and [v for v, _ in sentence["choices"]] == list(CORPUS_TEXTS)
    data, _ = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"] == "EncoderExplorer(all-MiniLM-L6-v2, layer 5, head 7, 5 tokens: 'Birds sing.')"
    page = data["text/html"]
    prefix = '<div class="mha-realheads"><script type="application/json">'
    assert page.startswith(prefix)  # what the site's realheads.js mounts, and tests/test_site.py reads
    config = json.loads(page[len(prefix) :].split("</script>", 1)[0])
    # the corpus, opened on the sentence shown (it is the corpus's second) at the layer and head shown
    spec = realheads_spec(layers=MINILM.n_layers, heads=MINILM.h, sentences=list(CORPUS_TEXTS))
    assert config == {**corpus(), "settings": {"sentence": 1, "layer": 4, "head": 6}, "spec": spec}
    explorer.update(sentence=TIRED)  # not in the corpus: the static viewer opens on the corpus's own first
    first = {**corpus(), "settings": {"sentence": 0, "layer": 4, "head": 6}}
    assert explorer.static_html() == viewer_html(first)


def test_without_a_corpus_the_static_viewer_shows_the_sentence_within_8_bit_rounding():
    explorer = EncoderExplorer(encoder(), sentence=TIRED, layer=3, head=1)
    page = explorer.static_html()
    config = json.loads(re.search(r'type="application/json">(.*?)</script>', page, re.S).group(1))
    assert config["settings"] == {"sentence": 0, "layer": 3, "head": 1}
    (stored,) = dequantise(config)  # (L, h, n, n)
    assert np.abs(stored - explorer.attentions.double().numpy()).max() <= 0.5 / SCALE + 1e-6


# ---------------------------------------------------------------------------------------------------------
# Browser side
# ---------------------------------------------------------------------------------------------------------

from chromium import CHROMIUM  # noqa: E402 (scripts/ is on sys.path: tests/conftest.py)

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (/usr/bin/chromium)")


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


@needs_chromium
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


@needs_chromium
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
