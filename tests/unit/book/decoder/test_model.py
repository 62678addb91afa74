"""The book's decoder (book.decoder.model): its contract, its shipped weights, and what they must show.

The contract is issue 37's: vocabulary() and predict(text, *, off=()) with tokens, causal float32 attention
(L, h, n, n) and five (token, probability) pairs per position. The measured criteria (copying on the second
copy of a repeated random sequence, and which heads it needs) run on the shipped weights with the chapter's
fixed seed. Nothing is trained here except in the slow test, which runs a few steps twice. The page's port
(book/decoder/static/ports/decoder.js) is tested equal to encode and predict at the end, in mini-racer.
"""

import json
import math
import unicodedata

import pytest
import torch
from py_mini_racer import JSEvalException, MiniRacer
from safetensors.torch import load_file

import book.decoder.model as decoder
from book.decoder import induction
from book.decoder.model import (
    DECODER,
    ORDINARY,
    TOP_K,
    UNKNOWN,
    VOCABULARY,
    WEIGHTS_FILE,
    Decoder,
    build_decoder,
    load_state,
    predict,
    vocabulary,
)
from book.decoder.page import CALLBACK, weights_script
from book.widgets.frontend import static_file, static_path
from mha.compute.ablation import ablate_heads

DATA = decoder.__file__.rsplit("/", 1)[0] + "/data"


# --- vocabulary and tokens -------------------------------------------------------------------------------


def test_vocabulary_is_characters_index_is_id():
    tokens = vocabulary()
    assert isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)
    assert len(tokens) == DECODER.vocab_size == len(set(tokens))
    assert all(len(t) == 1 for t in tokens)  # one code point each: nothing merges across a seam
    assert tokens[-1] == UNKNOWN and unicodedata.name(UNKNOWN) == "REPLACEMENT CHARACTER"
    printable = [t for t in tokens if t.isprintable() and not t.isspace() and t != UNKNOWN]
    assert printable == list(ORDINARY) and len(ORDINARY) >= 60
    assert not any(marker in "".join(tokens) for marker in ("\u2581", "\u0120"))  # no ▁ or Ġ markers


def test_encode_reads_code_points_and_names_unknown_characters():
    encoded = decoder.encode("a\u00e9\U0001f600b\u00e9")
    ids = vocabulary()
    assert encoded["ids"] == [ids.index(c) for c in ("a", UNKNOWN, UNKNOWN, "b", UNKNOWN)]
    assert encoded["unknown"] == ["\u00e9", "\U0001f600"]  # each once, in order; the emoji is one character
    assert encoded["truncated"] == 0


# --- predict: the contract -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sentence():
    return predict("The cat sat on the mat. The cat")


def test_predict_returns_the_contract(sentence):
    n = len("The cat sat on the mat. The cat")
    assert sentence["tokens"] == list("The cat sat on the mat. The cat")
    attention = sentence["attention"]
    assert isinstance(attention, torch.Tensor) and attention.dtype == torch.float32
    assert attention.shape == (DECODER.layers, DECODER.h, n, n)
    assert torch.equal(attention.triu(1), torch.zeros_like(attention))  # causal
    torch.testing.assert_close(attention.sum(-1), torch.ones(DECODER.layers, DECODER.h, n))
    assert len(sentence["top"]) == n
    for row in sentence["top"]:
        assert len(row) == TOP_K
        assert all(isinstance(t, str) and t in vocabulary() and isinstance(p, float) for t, p in row)
        probabilities = [p for _, p in row]
        assert (
            probabilities == sorted(probabilities, reverse=True)
            and 0 < probabilities[-1] <= probabilities[0] <= 1
        )
        assert len({t for t, _ in row}) == TOP_K
    assert sentence["truncated"] == 0 and sentence["unknown"] == [] and sentence["note"] == ""


def test_predict_is_causal_in_its_outputs(sentence):
    """What comes later in the text changes nothing at earlier positions."""
    prefix = predict("The cat sat on")
    n = len(prefix["tokens"])
    torch.testing.assert_close(prefix["attention"], sentence["attention"][:, :, :n, :n], rtol=0, atol=1e-5)
    for short, long in zip(prefix["top"], sentence["top"][:n], strict=False):
        assert [t for t, _ in short] == [t for t, _ in long]
        assert [p for _, p in short] == pytest.approx([p for _, p in long], abs=1e-5)


def test_the_top_tokens_are_the_softmax_of_the_logits():
    text = "Python"
    model = decoder.shipped_decoder()
    logits, _ = model(torch.tensor([decoder.encode(text)["ids"]]))
    probabilities = torch.softmax(logits[0, -1].double(), -1)
    expected = probabilities.topk(TOP_K)
    top = predict(text)["top"][-1]
    assert [t for t, _ in top] == [vocabulary()[i] for i in expected.indices.tolist()]
    assert [p for _, p in top] == pytest.approx(expected.values.tolist(), abs=1e-6)


def test_off_switches_heads_off_as_ablate_heads_does():
    text = "abcdef abcdef"
    model = decoder.shipped_decoder()
    ids = torch.tensor([decoder.encode(text)["ids"]])
    with ablate_heads(model.layers[1].attn, [0, 2]):
        logits, _ = model(ids)
    result = predict(text, off=[(1, 0), (1, 2)])
    expected = torch.softmax(logits[0], -1).max(-1).values
    assert [row[0][1] for row in result["top"]] == pytest.approx(expected.tolist(), abs=1e-6)
    assert result["top"] != predict(text)["top"]
    # the heads switched off still attend: their weights are computed, only their output is zeroed
    torch.testing.assert_close(result["attention"][:2], predict(text)["attention"][:2], rtol=0, atol=1e-6)
    assert predict(text, off=[[0, 1]])["top"] == predict(text, off=((0, 1),))["top"]  # lists or tuples


@pytest.mark.parametrize(
    "off",
    [[(2, 0)], [(0, 4)], [(-1, 0)], [(0, 0, 0)], [(0,)], [(0, 1.0)], [(True, 0)], [[0, "1"]], ["01"]],
)
def test_off_naming_a_head_that_does_not_exist_raises_value_error(off):
    with pytest.raises(ValueError, match=r"^off must hold \(layer, head\) pairs with layer in 0\.\.1"):
        predict("abc", off=off)


def test_the_forward_pass_checks_its_tokens():
    model = decoder.shipped_decoder()
    with pytest.raises(TypeError, match="tokens must be an integer tensor"):
        model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match=r"tokens must have shape \(B, n\) with 1 <= n <= 128"):
        model(torch.zeros(1, DECODER.context + 1, dtype=torch.long))
    with pytest.raises(ValueError, match=r"tokens must be ids in 0\.\.96"):
        model(torch.tensor([[0, DECODER.vocab_size]]))


def test_off_that_is_no_sequence_raises_type_error():
    for off in (3, "01", None):
        with pytest.raises(TypeError, match=r"^off must be a sequence"):
            predict("abc", off=off)


def test_empty_text_raises_value_error_naming_text():
    with pytest.raises(ValueError, match=r"^There is no text to predict from"):
        predict("")
    with pytest.raises(TypeError, match=r"^text must be a string"):
        predict(b"abc")


def test_long_text_keeps_the_last_context_characters_and_says_so():
    text = "".join(ORDINARY[i % 50] for i in range(300))
    result = predict(text)
    assert result["tokens"] == list(text[-DECODER.context :])
    assert result["truncated"] == 300 - DECODER.context
    assert "300 characters" in result["note"] and f"last {DECODER.context}" in result["note"]
    assert result["top"] == predict(text[-DECODER.context :])["top"]
    assert len(predict("x" * DECODER.context)["tokens"]) == DECODER.context
    assert predict("x" * DECODER.context)["truncated"] == 0


def test_unknown_characters_map_to_one_named_token_and_are_named():
    result = predict("na\u00efve \U0001f600!")
    assert result["tokens"] == ["n", "a", UNKNOWN, "v", "e", " ", UNKNOWN, "!"]
    assert result["unknown"] == ["\u00ef", "\U0001f600"]
    assert "2 characters" in result["note"] and "\u00ef, \U0001f600" in result["note"]
    assert predict(UNKNOWN)["unknown"] == []  # U+FFFD is a token of its own vocabulary
    one = predict("a\tb")["note"]  # one character: singular; a tab is named, not printed as blank
    assert one.startswith("1 character the vocabulary lacks") and one.endswith(": U+0009.")
    assert decoder.visible("\u200b") == "U+200B" and decoder.visible("\u00e9") == "\u00e9"


# --- the shipped weights ---------------------------------------------------------------------------------


def test_weights_file_is_small_float16_and_named_as_the_layers():
    path = f"{DATA}/{WEIGHTS_FILE}"
    import os

    assert os.path.getsize(path) <= 4 * 2**20
    state = load_file(path)
    assert all(t.dtype == torch.float16 for t in state.values())
    assert set(state) == set(Decoder().state_dict())
    for layer in range(DECODER.layers):
        for name in ("W_q", "W_k", "W_v", "W_o"):
            assert f"layers.{layer}.attn.{name}.weight" in state


def test_weights_load_strictly_by_name():
    state = load_state()
    missing = {k: v for k, v in state.items() if k != "layers.1.attn.W_k.weight"}
    with pytest.raises(RuntimeError, match="Missing key"):
        build_decoder(missing)
    renamed = {k.replace("W_q", "W_query"): v for k, v in state.items()}
    with pytest.raises(RuntimeError, match="Unexpected key"):
        build_decoder(renamed)
    swapped = dict(state, **{"embed.weight": state["unembed.weight"].T.contiguous()})
    with pytest.raises(RuntimeError, match="size mismatch"):
        build_decoder(swapped)


def test_python_computes_with_the_shipped_float16_values():
    model = decoder.shipped_decoder()
    for name, t in model.state_dict().items():
        assert t.dtype == torch.float32
        assert torch.equal(t, t.half().float()), name  # every value is a float16 value, as the page has it


# --- the model's size ------------------------------------------------------------------------------------


def test_config_meets_the_issue():
    assert DECODER.layers >= 2 and DECODER.layers * DECODER.h >= 4
    assert DECODER.context >= 128 >= 2 * induction.LENGTHS[1]
    model = decoder.shipped_decoder()
    count = sum(p.numel() for p in model.parameters())
    d, V, L = DECODER.d_model, DECODER.vocab_size, DECODER.layers
    assert count == 2 * V * d + L * (4 * d * d + d) + d
    assert math.isclose(induction.load_log()["parameters"], count)


# --- what the shipped decoder must show (issue 37), on the chapter's sequences ----------------------------


@pytest.fixture(scope="module")
def measured():
    model = decoder.shipped_decoder()
    tokens, lengths = induction.repeated_sequences()  # the chapter's: seed induction.SEED, 20-40 tokens
    scores = induction.head_scores(model, tokens, lengths)
    groups = {
        "induction heads": induction.find_heads(scores["induction"], induction.INDUCTION_THRESHOLD),
        "previous-token heads": induction.find_heads(scores["previous"], induction.PREVIOUS_THRESHOLD),
    }
    table = induction.ablation_table(model, tokens, lengths, groups)
    return {"model": model, "tokens": tokens, "lengths": lengths, "groups": groups, "table": table}


def test_the_second_copy_is_predicted_and_the_first_is_not(measured):
    none = measured["table"].loc["none"]
    assert none["second"] >= 0.8
    assert none["first"] <= none["second"] - 0.5


def test_the_heads_are_found_by_their_scores_in_the_right_layers(measured):
    induction_heads, previous_heads = measured["groups"].values()
    assert induction_heads and previous_heads
    assert all(layer >= 1 for layer, _ in induction_heads)  # an induction head needs an earlier layer
    assert all(layer < max(layer for layer, _ in induction_heads) for layer, _ in previous_heads)
    assert not set(induction_heads) & set(previous_heads)


def test_switching_either_group_off_breaks_the_copying(measured):
    table = measured["table"]
    assert table.loc["induction heads", "change"] <= -0.3
    assert table.loc["previous-token heads", "change"] <= -0.3
    for group in ("induction heads", "previous-token heads"):  # toward first-copy level
        assert table.loc[group, "second"] <= table.loc["none", "first"] + 0.2


def test_a_head_that_is_neither_matters_little(measured):
    found = {pair for pairs in measured["groups"].values() for pair in pairs}
    heads = [(layer, j) for layer in range(DECODER.layers) for j in range(DECODER.h)]
    neither = [pair for pair in heads if pair not in found]
    assert neither, "keep at least one head that is neither"
    for pair in neither:
        assert abs(measured["table"].loc[induction.head_name(*pair), "change"]) <= 0.1


def test_the_induction_heads_key_on_the_previous_token_heads_output(measured):
    """K-composition, asked of the forward pass: without the previous-token heads in their keys, they fail."""
    induction_heads, previous_heads = measured["groups"].values()
    args = (measured["model"], measured["tokens"], measured["lengths"], previous_heads)
    table = induction.path_patching(*args, readers=induction_heads)
    drop = table.loc["none", "second"] - table["second"]
    assert drop["k"] >= 0.5
    assert drop["k"] >= 3 * max(drop["q"], drop["v"], 0.0)
    assert table.loc["k", "induction"] <= 0.5 * table.loc["none", "induction"]


def test_k_composition_scores_single_out_the_pairs_that_compose(measured):
    induction_heads, previous_heads = measured["groups"].values()
    scores = induction.composition_scores(measured["model"])
    pairs = [(i, j) for _, i in previous_heads for _, j in induction_heads]
    mean = {kind: torch.stack([scores[kind][pair] for pair in pairs]).mean() for kind in ("k", "q", "v")}
    assert mean["k"] >= 1.5 * scores["baseline"]
    assert mean["k"] > mean["q"] and mean["k"] > mean["v"]


def test_the_log_shows_a_phase_change():
    change = induction.phase_change()
    log = induction.load_log()
    assert change["after"] >= 0.8 and change["before"] <= 0.2
    assert change["end"] - change["start"] <= 0.1 * log["train"]["steps"]  # a jump, not a slow climb
    final = log["final"]
    assert final["second"] >= 0.8 and final["first"] <= 0.1


# --- ports/decoder.js: the page's port of encode and predict, in mini-racer --------------------------------
#
# The port runs in an embedded V8 (mini-racer, no browser, no DOM), with the shared ports it calls (NEEDS:
# base64 and float16, the linear layers and the attention), loaded with the weights script that the build
# writes (book.decoder.page.weights_script), and must give what predict gives: the same tokens and notes,
# attention and probabilities within 2e-3 (Python computes in float32, the port in float64, both from the same
# float16 values), and the same top tokens wherever the probabilities are not near-tied.

PORT = static_path("ports/decoder.js")
NEEDS = ("ports/bytes.js", "ports/layers.js")  # the shared ports it calls, each tested in its twin's file
TOLERANCE = 2e-3  # the issue's bound on attention and probabilities
NEAR_TIE = 1e-4  # two candidates closer than this may swap places between float32 and float64

PORT_TEXTS = [
    "The cat sat on the mat. The cat sat",
    "def f(x):\n    return x + 1\n",
    "a",
    "qZ#8@kLm!2 qZ#8@kLm!2",  # a random string repeated: the induction heads' case
    "caf\u00e9 \U0001f600 na\u00efve \t tab",
    "a\tb\u200bc",  # invisible characters the vocabulary lacks, listed by code point
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
    assert "tests/unit/book/decoder/test_model.py" in header
    for forbidden in ("TextEncoder", "atob(", "document.", "window."):  # mini-racer and workers have none
        assert forbidden not in PORT.read_text(encoding="utf-8").split("*/", 1)[1]


@pytest.mark.parametrize("off", OFFS, ids=lambda off: f"off{len(off)}")
@pytest.mark.parametrize("text", PORT_TEXTS, ids=range(len(PORT_TEXTS)))
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
    text = PORT_TEXTS[0]
    ours = torch.tensor(js_predict(js, text, [])["attention"], dtype=torch.float64)
    assert (ours - decoder.predict(text)["attention"].double()).abs().max() < 1e-5


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ('""', "There is no text to predict from"),
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
    for text in [*PORT_TEXTS, "\ufffd", "x" * 300]:
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
