"""book.smollm2.page: the SmolLM2 figure's spec, notices, root element and picture, and its live widget's
requests (without the model: a stand-in ``predict``). The page (keyboard, screen reader, print, 390 px, dark
mode, axe-core) is tested on the built site by tests/browser/test_site_smollm2.py."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
import torch

from book.smollm2 import page as smollm2_page
from book.smollm2.census import load_results
from book.smollm2.page import (
    CLASS_NAME,
    DEFAULT_PROMPT,
    KIND_NAMES,
    MESSAGES,
    SmolLM2Figure,
    SmolLM2Widget,
    figure_html,
    figure_spec,
    notices,
    picture,
)
from book.smollm2.stored import load_stored
from book.widgets.spec import fill


@pytest.fixture(scope="module")
def data():
    return load_results(), load_stored()


def test_the_spec_offers_every_prompt_layer_and_head(data):
    results, stored = data
    spec = figure_spec(*data)
    controls = {c["name"]: c for c in spec["controls"]}
    assert [v for v, _ in controls["prompt"]["choices"]] == [p["name"] for p in stored["prompts"]]
    assert [v for v, _ in controls["layer"]["choices"]] == list(range(30))
    heads = controls["head"]["choices"]
    assert [v for v, _ in heads] == list(range(9)) and heads[4][1] == "head 5 (group 2)"
    assert spec["defaults"]["prompt"] == DEFAULT_PROMPT and "text" not in controls
    assert spec["labels"] == results["labels"] and set(spec["kinds"]) == set(results["counts"])
    assert spec["stored"]["data"] == stored["data"]
    live = figure_spec(*data, live=True)
    assert "stored" not in live and "text" in {c["name"] for c in live["controls"]}
    with pytest.raises(ValueError, match="prompt must be one of"):
        figure_spec(*data, prompt="nothing")


def test_each_notice_is_true_of_the_stored_weights(data):
    results, stored = data
    said = notices(results, stored)
    assert len(said) == len(stored["prompts"])
    for prompt, note in zip(stored["prompts"], said, strict=True):
        layer, head = note["layer"], note["head"]
        assert note["text"].startswith("Notice: ")
        assert note["fields"]["kind"] == results["labels"][layer][head]
        template = MESSAGES[note["message"]]
        assert note["text"] == fill(
            MESSAGES["notice"],
            text=fill(template, **{**note["fields"], "kind": KIND_NAMES[note["fields"]["kind"]]}),
        )
        if note["message"] == "notice_so":
            share = float(note["fields"]["share"].rstrip("%")) / 100
            old = float(note["fields"]["old"].rstrip("%")) / 100
            assert share > 10 * old  # the sink follows the place
        else:
            name = "induction" if note["message"] == "notice_induction" else "previous"
            score = np.array(prompt["scores"][name])
            assert (layer, head) == np.unravel_index(score.argmax(), score.shape)
            assert note["fields"]["share"] == f"{score[layer, head]:.0%}"
            assert note["fields"]["sink"] == f"{np.mean(prompt['scores']['sink'][layer]):.0%}"
    default = said[[p["name"] for p in stored["prompts"]].index(DEFAULT_PROMPT)]
    assert default["message"] == "notice_induction" and default["fields"]["kind"] == "induction"
    spec = figure_spec(*data)
    assert (spec["defaults"]["layer"], spec["defaults"]["head"]) == (default["layer"], default["head"])


def test_the_root_element_holds_the_spec_its_fallback_and_its_picture(data):
    png = picture(*data)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    text = figure_html(*data, picture=png)
    assert text.startswith(f'<div class="{CLASS_NAME}"><script type="application/json">')
    spec = json.loads(html.unescape(re.search(r"<script[^>]*>(.*?)</script>", text, re.S).group(1)))
    assert spec == json.loads(json.dumps(figure_spec(*data)))
    assert 'class="mm-fallback"' in text and 'class="mm-print"' in text
    assert len(text.encode()) < 4_000_000  # the budget for the figure
    figure = SmolLM2Figure(*data)
    assert figure._repr_mimebundle_()["text/html"] == figure.html and figure.notice.startswith("Notice: ")


def test_the_live_widget_answers_with_the_models_attention_and_refuses_bad_requests(data, monkeypatch):
    n = 4
    attention = torch.full((30, 9, n, n), 0.0)
    attention[..., 0] = 1.0  # every head a sink

    def predict(text, *, off=()):
        predict.off = list(off)
        return {"ids": [1, 2, 1, 2], "tokens": list("abab"), "attention": attention, "top": []}

    monkeypatch.setattr("mha.pretrained.smollm2.predict", predict)
    monkeypatch.setattr("mha.pretrained.smollm2.tokenize", lambda text: [0] * len(text.split()))
    widget = SmolLM2Widget(*data, text="a b a b")
    assert widget.spec["defaults"]["text"] == "a b a b" and widget.spec["live"]
    reply, buffers = widget.reply({"id": 3, "type": "attend", "text": "a b a b", "off": [[1, 2]]})
    assert reply["id"] == 3 and predict.off == [(1, 2)]
    assert reply["result"]["tokens"] == list("abab") and reply["result"]["attention_shape"] == [30, 9, n, n]
    assert reply["result"]["scores"]["sink"][0][0] == 1.0 and len(buffers[0]) == 30 * 9 * n * n * 4
    assert "error" in widget.reply({"id": 4, "type": "attend", "text": "  "})[0]
    assert "error" in widget.reply({"id": 5, "type": "embed", "text": "a"})[0]
    assert "error" in widget.reply({"id": 6, "type": "attend", "text": "a " * 300})[0]
    assert "text/html" in widget._repr_mimebundle_()[0]
    assert smollm2_page.MAX_TOKENS == 256
