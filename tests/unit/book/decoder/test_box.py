"""The decoder box's Python side (book.decoder.box): its spec, the live widget's answers, its bundle.

The page's side is tested on the built site (tests/browser/test_site_decoder.py) and, live, on a stand-in
Jupyter model (tests/browser/test_decoder_box.py); the port it computes with in
tests/unit/book/decoder/test_model.py.
"""

import html
import json
import re

import pytest
import torch

from _ext.figure_roots import figure_roots
from book.decoder import box as decoder_box
from book.decoder.box import DecoderWidget, box_html, box_spec, default_text
from book.decoder.induction import LENGTHS
from book.decoder.model import DECODER, MESSAGES, ORDINARY, predict
from book.decoder.page import WEIGHTS_SCRIPT, weights_script
from book.widgets.frontend import ROOT_CLASSES, SCRIPTS, WIDGET_SCRIPTS, static_file

ROLES = {(0, 1): "previous token", (0, 3): "previous token", (1, 0): "induction"}
L, H = DECODER.layers, DECODER.h


@pytest.fixture(scope="module")
def widget():
    return DecoderWidget(ROLES, shown_head=(1, 0))


def test_the_box_opens_on_a_random_sequence_written_twice():
    text = default_text()
    half = len(text) // 2
    assert len(text) == 40 and text[:half] == text[half:]
    assert len(set(text[:half])) == half and set(text) <= set(ORDINARY)


def test_the_spec_has_a_control_per_head_and_names_the_heads_by_their_roles():
    spec = box_spec(ROLES, shown_head=(1, 2))
    names = [c["name"] for c in spec["controls"]]
    assert names == ["text", "head", *(f"off_{layer}_{head}" for layer in range(L) for head in range(H))]
    controls = {c["name"]: c for c in spec["controls"]}
    assert [v for v, _ in controls["head"]["choices"]] == list(range(L * H))
    assert controls["head"]["choices"][1][1] == "L1H2 (previous token): layer 1, head 2"
    assert controls["off_1_0"]["label"] == "L2H1 (induction)" and controls["off_0_0"]["label"] == "L1H1"
    assert not any(controls[f"off_{layer}_{head}"]["setting"] for layer in range(L) for head in range(H))
    assert spec["defaults"] == {"text": default_text(), "head": 1 * H + 2}
    assert spec["roles"][0][1] == "previous token" and spec["roles"][1][1] == ""
    assert spec["names"][1][3] == "L2H4"
    assert (
        spec["weights"] == WEIGHTS_SCRIPT and "decoder" in WEIGHTS_SCRIPT and WEIGHTS_SCRIPT.endswith(".js")
    )
    assert spec["kb"] == round(len(weights_script()) / 1e3)
    assert spec["ordinary"] == list(ORDINARY) and spec["lengths"] == list(LENGTHS)
    assert spec["shown"] == {" ": "\u2423", "\n": "\u23ce"}
    assert {"random", "notice", "tokens", "cell", "still", "bug"} <= set(spec["messages"])
    json.dumps(spec)  # JSON as it is
    assert box_spec()["roles"] == [[""] * H] * L


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"roles": [((0, 1), "induction")]}, TypeError, "roles must be a mapping"),
        ({"roles": {(0, H): "induction"}}, ValueError, r"\(0, 4\) is not a head"),
        ({"roles": {(0, 1): "copying"}}, ValueError, "one of"),
        ({"shown_head": (L, 0)}, ValueError, "shown_head must hold"),
        ({"shown_head": (True, 0)}, ValueError, "shown_head must hold"),
        ({"text": 5}, TypeError, "text must be a string"),
    ],
)
def test_box_spec_refuses_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        box_spec(**kwargs)


def test_the_live_widget_answers_as_predict(widget):
    text = "The cat sat. The cat sat"
    result, (data,) = widget.compute({"id": 3, "text": text, "off": [[1, 0], [0, 2]]})
    expected = predict(text, off=[(1, 0), (0, 2)])
    attention = torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(result["attention_shape"])
    assert result["attention_shape"] == [L, H, len(text), len(text)]
    assert torch.equal(attention, expected["attention"])
    assert result["tokens"] == expected["tokens"]
    assert result["top"] == [[list(pair) for pair in row] for row in expected["top"]]
    assert (result["truncated"], result["unknown"], result["note"]) == (0, [], "")
    text = "\u00e9" + "ab" * DECODER.context  # longer than the context: cut, and said
    long, _ = widget.compute({"id": 4, "text": text, "off": None})
    assert long["truncated"] == 1 + DECODER.context and long["note"] == predict(text)["note"] != ""


@pytest.mark.parametrize(
    ("message", "error", "text"),
    [
        ({"text": ""}, ValueError, MESSAGES["empty"]),
        ({"text": None}, TypeError, "text must be a string, got NoneType"),
        ({"text": "ab", "off": [[0, H]]}, ValueError, "[0, 4] is not a head of this decoder"),
        ({"text": "ab", "off": "x"}, TypeError, "off must be a sequence of (layer, head) pairs"),
    ],
)
def test_the_live_widget_refuses_bad_input_with_predicts_messages(widget, message, error, text):
    with pytest.raises(error) as raised:
        widget.compute({"id": 0, **message})
    assert text in str(raised.value)
    sent = []
    widget.send = lambda content, buffers=None: sent.append(content)
    try:
        widget._on_message(widget, {"id": 7, **message}, [])
    finally:
        del widget.send
    assert sent == [{"id": 7, "error": str(raised.value)}]


def test_the_display_bundle_holds_the_live_box_and_the_static_box_with_its_picture(widget):
    data, _ = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"] == f"DecoderWidget(text={default_text()!r})"
    page = data["text/html"]
    assert page.startswith(f'<div class="{ROOT_CLASSES["mountDecoder"]}">')
    (root,) = figure_roots(page)
    spec = root.data
    assert spec == json.loads(json.dumps(widget.spec))
    image = re.search(
        r'<img class="md-print" alt="([^"]*)" style="max-width:100%" src="data:image/png;', page
    )
    assert image and html.unescape(image.group(1)).endswith(default_text())
    assert "md-fallback" in page and weights_script()[:2000] not in page  # the weights are never inlined


def test_the_box_is_one_of_the_figures_on_every_page_and_a_live_widget(widget):
    assert ROOT_CLASSES["mountDecoder"] == decoder_box.CLASS_NAME == "mha-decoder"
    assert "decoderbox.js" in SCRIPTS and WIDGET_SCRIPTS["mountDecoder"][-1] == "decoderbox.js"
    assert static_file("decoderbox.js") in widget._esm
    assert widget._esm.rstrip().endswith("export default globalThis.mhaDecoderBox.anywidget;")


def test_box_html_without_a_picture_shows_the_fallback():
    page = box_html(box_spec())
    assert "md-fallback" in page and "md-print" not in page
