"""The real-heads explorer (book.minilm.realheads.EncoderExplorer): all-MiniLM-L6-v2 on a typed sentence.

What the page is sent is exactly :func:`mha.pretrained.attend`'s head, a reader's unusable sentence gives a
message and keeps the picture, values no control offers raise, and the display bundle carries the static
viewer for the site. Every test runs the model (``pretrained``). The front end in Chromium:
tests/browser/test_realheads.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from _ext.figure_roots import figure_roots
from book.minilm import realheads
from book.minilm.realheads import (
    MAX_TOKENS,
    SCALE,
    STILL,
    EncoderExplorer,
    dequantise,
    viewer_config,
    viewer_html,
)
from book.widgets.spec import realheads_spec
from mha.pretrained import MINILM, attend
from tests.minilm_cases import CORPUS_TEXTS, LITERAL, TIRED, check_drawn, corpus, encoder

pytestmark = pytest.mark.usefixtures("minilm")  # every test runs all-MiniLM-L6-v2


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
    (root,) = figure_roots(page)
    assert "</" not in root.json, "the text's '</' is escaped: it cannot end the script"
    config = root.data
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
    assert page.startswith(prefix)  # what the site's realheads.js mounts, and tests/browser/test_site reads
    (root,) = figure_roots(page)
    config = root.data
    # the corpus, opened on the sentence shown (it is the corpus's second) at the layer and head shown
    spec = realheads_spec(layers=MINILM.n_layers, heads=MINILM.h, sentences=list(CORPUS_TEXTS))
    assert config == {**corpus(), "settings": {"sentence": 1, "layer": 4, "head": 6}, "spec": spec}
    explorer.update(sentence=TIRED)  # not in the corpus: the static viewer opens on the corpus's own first
    first = {**corpus(), "settings": {"sentence": 0, "layer": 4, "head": 6}}
    assert explorer.static_html() == viewer_html(first)


def test_without_a_corpus_the_static_viewer_shows_the_sentence_within_8_bit_rounding():
    explorer = EncoderExplorer(encoder(), sentence=TIRED, layer=3, head=1)
    page = explorer.static_html()
    (root,) = figure_roots(page)
    config = root.data
    assert config["settings"] == {"sentence": 0, "layer": 3, "head": 1}
    (stored,) = dequantise(config)  # (L, h, n, n)
    assert np.abs(stored - explorer.attentions.double().numpy()).max() <= 0.5 / SCALE + 1e-6
