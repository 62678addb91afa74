"""The decoder's page port (book/decoder/static/ports/decoder.js) against its Python twin, in mini-racer.

The port runs in an embedded V8 (mini-racer, no browser, no DOM), with the shared ports it calls (NEEDS:
base64 and float16, the linear layers and the attention), loaded with the weights script that the build
writes (book.decoder.page.weights_script), and must give what book.decoder.model.predict
gives: the same tokens and notes, attention and probabilities within 2e-3 (Python computes in float32, the
port in float64, both from the same float16 values), and the same top tokens wherever the probabilities are
not near-tied.
"""

import json

import pytest
import torch
from py_mini_racer import JSEvalException, MiniRacer

import book.decoder.model as decoder
from book.decoder.model import VOCABULARY, load_state
from book.decoder.page import CALLBACK, weights_script
from book.widgets.frontend import static_file, static_path

PORT = static_path("ports/decoder.js")
NEEDS = ("ports/bytes.js", "ports/layers.js")  # the shared ports it calls, tested in tests/unit/test_ports.py
TOLERANCE = 2e-3  # the bound on attention and probabilities
NEAR_TIE = 1e-4  # two candidates closer than this may swap places between float32 and float64

TEXTS = [
    "The cat sat on the mat. The cat sat",
    "def f(x):\n    return x + 1\n",
    "a",
    "qZ#8@kLm!2 qZ#8@kLm!2",  # a random string repeated: the induction heads' case
    "caf\u00e9 \U0001f600 na\u00efve \t tab",  # characters the vocabulary lacks, an emoji as one code point
    "The quick brown fox jumps over the lazy dog. " * 4,  # longer than the context: the last 128 are kept
]
OFFS = [[], [[0, 0]], [[1, 1], [1, 3]], [[0, 1], [0, 2], [1, 0]]]


@pytest.fixture(scope="module")
def js():
    ctx = MiniRacer()
    for name in NEEDS:
        ctx.eval(static_file(name))
    ctx.eval(PORT.read_text(encoding="utf-8"))
    ctx.eval(f"globalThis.{CALLBACK} = (data) => {{ globalThis.model = mhaFrontEnd.decoderModel(data); }};")
    ctx.eval(weights_script())
    return ctx


def js_predict(js, text, off):
    call = f"mhaFrontEnd.decoderPredict(model, {json.dumps(text)}, {{off: {json.dumps(off)}}})"
    return json.loads(js.eval(f"JSON.stringify({call})"))


def test_the_port_says_what_it_is():
    header = PORT.read_text(encoding="utf-8").split("*/")[0]
    assert "PORT of book/decoder/model.py" in header
    assert "tests/unit/test_decoder_port.py" in header
    for forbidden in ("TextEncoder", "atob(", "document.", "window."):  # mini-racer and workers have none
        assert forbidden not in PORT.read_text(encoding="utf-8").split("*/", 1)[1]


@pytest.mark.parametrize("off", OFFS, ids=lambda off: f"off{len(off)}")
@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_port_equals_python(js, text, off):
    ours = js_predict(js, text, off)
    python = decoder.predict(text, off=[tuple(pair) for pair in off])
    assert ours["tokens"] == python["tokens"]
    for key in ("truncated", "unknown", "note"):
        assert ours[key] == python[key], key
    attention = torch.tensor(ours["attention"], dtype=torch.float64)
    torch.testing.assert_close(attention, python["attention"].double(), rtol=0, atol=TOLERANCE)
    assert len(ours["top"]) == len(python["top"])
    for i, (mine, theirs) in enumerate(zip(ours["top"], python["top"], strict=True)):
        assert len(mine) == decoder.TOP_K
        for rank, ((token, p), (token_py, p_py)) in enumerate(zip(mine, theirs, strict=True)):
            assert abs(p - p_py) <= TOLERANCE, (i, rank)
            neighbours = [q for _, q in theirs[max(0, rank - 1) : rank + 2] if q != p_py]
            if all(abs(p_py - q) > NEAR_TIE for q in neighbours):
                assert token == token_py, (i, rank)


def test_port_attention_is_python_within_far_less_than_the_bound(js):
    """Float64 against float32 on the same float16 values: far inside 2e-3 (room left for other engines)."""
    text = TEXTS[0]
    ours = torch.tensor(js_predict(js, text, [])["attention"], dtype=torch.float64)
    assert (ours - decoder.predict(text)["attention"].double()).abs().max() < 1e-5


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('""', "text must be a non-empty string"),
        ("42", "text must be a string"),
        ('"abc", {off: [[2, 0]]}', "off must hold (layer, head) pairs"),
        (
            '"abc", {off: [[0, 4]]}',
            "off must hold (layer, head) pairs with layer in 0..1 and head in 0..3; [0,4] is",
        ),
        ('"abc", {off: [[0]]}', "off must hold"),
        ('"abc", {off: [[0, 1.5]]}', "off must hold"),
        ('"abc", {off: "01"}', "off must be a sequence"),
        ('"abc", {off: null}', "off must be a sequence"),
    ],
)
def test_port_refuses_bad_input_with_a_plain_error_worded_as_python(js, arguments, words):
    with pytest.raises(JSEvalException) as caught:
        js.eval(f"mhaFrontEnd.decoderPredict(model, {arguments})")
    assert f"Error: {words}" in str(caught.value)  # a plain Error, its message as Python's
    assert "TypeError" not in str(caught.value) and "RangeError" not in str(caught.value)


def test_port_reads_every_tensor_as_python_has_it(js):
    """The decoded weights are the float16 values Python computes with, bit for bit."""
    model = decoder.shipped_decoder()
    for name, tensor in model.state_dict().items():
        values = json.loads(js.eval(f"JSON.stringify(Array.from(model.W[{json.dumps(name)}]))"))
        assert torch.equal(torch.tensor(values, dtype=torch.float32), tensor.flatten()), name


def test_port_encodes_as_python(js):
    for text in [*TEXTS, "\ufffd", "x" * 300]:
        ours = json.loads(js.eval(f"JSON.stringify(mhaFrontEnd.decoderEncode(model, {json.dumps(text)}))"))
        assert ours == decoder.encode(text)


def test_port_breaks_ties_in_id_order_as_python(monkeypatch):
    """With the unembedding zeroed every token is equally likely: both sides list ids 0..4, each 1/V."""
    state = {name: t.clone() for name, t in load_state().items()}
    state["unembed.weight"].zero_()
    ctx = MiniRacer()
    for name in NEEDS:
        ctx.eval(static_file(name))
    ctx.eval(PORT.read_text(encoding="utf-8"))
    ctx.eval(f"globalThis.{CALLBACK} = (data) => {{ globalThis.model = mhaFrontEnd.decoderModel(data); }};")
    ctx.eval(weights_script(state))
    model = decoder.build_decoder(state)
    monkeypatch.setattr(decoder, "shipped_decoder", lambda: model)
    expected = [(token, 1 / len(VOCABULARY)) for token in VOCABULARY[: decoder.TOP_K]]
    for ours, python in zip(js_predict(ctx, "tie", [])["top"], decoder.predict("tie")["top"], strict=True):
        assert [t for t, _ in ours] == [t for t, _ in python] == [t for t, _ in expected]
        assert [p for _, p in ours] == pytest.approx([p for _, p in expected], abs=1e-12)
        assert [p for _, p in python] == pytest.approx([p for _, p in expected], abs=1e-7)
