"""Every port of book/widgets/static/ports/ against its Python twin, in a JavaScript engine and no browser.

A port is a computation the page makes without a kernel that Python makes too; its file's header names the
twin. Here mini-racer (V8 from PyPI: no DOM, no TextEncoder, no atob, as a port must expect) loads every
port of the folder, as the page does, and each is checked on the cases of tests/port_cases.py, which the
browser tests use too: equal bit for bit where the arithmetic is integer (random numbers, settings, costs,
masks, tokens), within float32 rounding where it is not (1e-5, the explorer's and MiniLM's weights).

All but the last tests need no pretrained model; those on all-MiniLM-L6-v2 itself are marked slow.
"""

from __future__ import annotations

import base64
import copy
import json
import math
import random

import numpy as np
import pytest
import torch
from py_mini_racer import MiniRacer

from book.compute import portable_random
from book.compute.attention_2026 import INDEX_SHAPE, INDEX_STREAM, index_selection, index_weights
from book.compute.explorer import build_mask, explorer_weights, head_weights, token_vectors
from book.compute.since_2017 import layer_masks, receptive_fields
from book.minilm.page import MAX_TOKENS, page_tokens, weights_payload, word_shard
from book.widgets.frontend import PORTS, model_payload, static_file
from book.widgets.spec import choices, explorer_spec, merge_settings, next_valid
from mha.costs.sparse import causal_pairs
from tests import ROOT
from tests.port_cases import (
    ATTEND,
    HEADS_OFF,
    ODD,
    SHIPPED_SENTENCES,
    SPARSE_SWEEP,
    TRAINED_SENTENCES,
    WINDOW_SWEEP,
    explorer_sweep,
    merge_cases,
    site_explorer_sweep,
    trained_like_model,
    unicode_sample,
)

# A port's result comes back through JSON: typed arrays as arrays, BigInts as decimal strings.
JSON_OUT = """(f) => (...args) => JSON.stringify(f(...args), (key, value) =>
    typeof value === "bigint" ? value.toString() : ArrayBuffer.isView(value) ? Array.from(value) : value)"""


class Ports:
    """The ports in one V8 context: ``run(js_function, *args)`` calls a function given as source text."""

    def __init__(self) -> None:
        self.js = MiniRacer()
        self.engine = set(self.js.eval("Object.keys(globalThis)"))  # the engine's own (setTimeout, ...)
        for name in PORTS:  # in the page's order
            self.js.eval(static_file(name))
        self.added = set(self.js.eval("Object.keys(globalThis)")) - self.engine
        self.ns = set(self.js.eval("Object.keys(globalThis.mhaFrontEnd)"))
        self.js.eval(f"globalThis.__json = {JSON_OUT};")

    def run(self, function: str, *args: object) -> object:
        self.js.eval(f"globalThis.__test = __json({function});")
        return json.loads(self.js.call("__test", *args))


@pytest.fixture(scope="module")
def ports() -> Ports:
    return Ports()


def test_every_port_names_its_python_twin_and_its_test():
    """A port's header names its Python twin and the test that checks it; CONTRIBUTING.md lists it."""
    import re

    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for name in PORTS:
        header = static_file(name).split("*/", 1)[0]
        assert "Python twin" in header and "PORT of" in header, name
        tests = re.findall(r"tests/\w+/test_\w+\.py", header)
        assert tests and all((ROOT / t).is_file() for t in tests), name
        assert f"| `{name}` |" in contributing, f"CONTRIBUTING.md's table of ports has no row for {name}"


def test_the_ports_need_no_page(ports):
    """Loaded alone, the ports define their functions and no global but the namespace: they need no page."""
    assert ports.added == {"mhaFrontEnd"}
    assert {
        "utf8Bytes",
        "uniform",
        "explorerWeights",
        "mergeSettings",
        "costs",
        "windowsCompute",
        "sparseCompute",
        "miniLM",
    } <= ports.ns


# -- ports/bytes.js: the byte formats Python writes ----------------------------------------------------------

TEXTS = [
    "",
    "the",
    "多头注意力",
    "<b>",
    "\\foo",
    "é",
    "🍕👍🏽 🇫🇷",
    "\x00\x7f\x80\u07ff\u0800\uffff\U00010000\U0010ffff",
]


def test_bytes_utf8_is_python_s_encode(ports):
    assert ports.run("ts => ts.map(mhaFrontEnd.utf8Bytes)", TEXTS) == [list(t.encode("utf-8")) for t in TEXTS]


def test_bytes_base64_and_float32_are_python_s(ports):
    rng = random.Random(0)
    blobs = [bytes(rng.randrange(256) for _ in range(n)) for n in (*range(10), 1000)]
    texts = [base64.b64encode(b).decode("ascii") for b in blobs]
    assert ports.run("ts => ts.map(mhaFrontEnd.base64Bytes)", texts) == [list(b) for b in blobs]
    values = np.array([0.0, -0.0, 1.5, -2.25e-8, 3.4e38, 1 / 3], dtype="<f4")
    got = ports.run(
        "t => mhaFrontEnd.float32s(mhaFrontEnd.base64Bytes(t))", base64.b64encode(values.tobytes()).decode()
    )
    assert got == values.astype(np.float64).tolist()
    error = ports.run("t => { try { mhaFrontEnd.base64Bytes(t); } catch (e) { return e.name; } }", "ab!d")
    assert error == "RangeError"


# -- ports/random.js: book.compute.portable_random -----------------------------------------------------------


def test_random_equals_python_exactly(ports):
    keys = [0, 1, 0x243F6A88, 2**32 - 1, portable_random.stream_key(7, 3)]
    got = ports.run(
        """(keys, words) => ({
            uniform: keys.map(k => mhaFrontEnd.uniform(k, 40)),
            stream: [mhaFrontEnd.streamKey(), mhaFrontEnd.streamKey(0), mhaFrontEnd.streamKey(12345, 7),
                     mhaFrontEnd.streamKey(4294967295, 0, 2147483647)],
            words: words.map(mhaFrontEnd.textWord),
            vectors: mhaFrontEnd.tokenVectors(["the", "$x^2$", "多头注意力"], 12),
        })""",
        keys,
        TEXTS,
    )
    assert got["uniform"] == [portable_random.uniform(k, 40).tolist() for k in keys]
    ps = portable_random.stream_key
    assert got["stream"] == [ps(), ps(0), ps(12345, 7), ps(2**32 - 1, 0, 2**31 - 1)]
    assert got["words"] == [portable_random.text_word(w) for w in TEXTS]
    expected = token_vectors(["the", "$x^2$", "多头注意力"], 12, dtype=torch.float64)
    assert got["vectors"] == expected.tolist()


# -- ports/explorer.js: book.compute.explorer ----------------------------------------------------------------


@pytest.mark.parametrize("sweep", [explorer_sweep, site_explorer_sweep])
def test_explorer_weights_equal_python(ports, sweep):
    cases = sweep()
    got = ports.run(
        "(cases, spec) => cases.map(s => mhaFrontEnd.explorerWeights(s, null, spec))", cases, explorer_spec()
    )
    for settings, weights in zip(cases, got, strict=True):
        expected = explorer_weights(**settings)
        weights = torch.tensor(weights, dtype=torch.float32)
        assert weights.shape == expected.shape, settings
        torch.testing.assert_close(
            weights, expected, atol=1e-5, rtol=0, msg=lambda m, s=settings: f"{s}: {m}"
        )


WEIGHTS_OF = "(p, spec, mask, all) => all.map(s => mhaFrontEnd.explorerWeights({sentence: s, mask}, p, spec))"


def test_explorer_runs_a_trained_model_s_payload(ports):
    """The payload of model_payload, read back (base64 float32 tensors, strictly by name) and run."""
    from book.chapters.training import load_models

    payload, expected = trained_like_model()
    spec = explorer_spec(trained=True)
    got = ports.run(WEIGHTS_OF, payload, spec, "causal", TRAINED_SENTENCES)
    for sentence, weights in zip(TRAINED_SENTENCES, got, strict=True):
        weights = torch.tensor(weights, dtype=torch.float32)
        torch.testing.assert_close(weights, expected(sentence.split()), atol=1e-5, rtol=0, msg=sentence)
    model = load_models()["copy-3/h4/seed0"]  # the shipped model of the appendix's explorer
    shipped = model_payload(model.attn, model.task.token_names(), model.embed_names, model.task.seq_len)
    for mask in ("causal", "none"):
        got = ports.run(WEIGHTS_OF, shipped, spec, mask, SHIPPED_SENTENCES)
        for sentence, weights in zip(SHIPPED_SENTENCES, got, strict=True):
            tokens = sentence.split()
            want = head_weights(model.attn, model.embed_names(tokens), build_mask(mask, len(tokens)))
            weights = torch.tensor(weights, dtype=torch.float32)
            torch.testing.assert_close(weights, want, atol=1e-5, rtol=0, msg=f"{sentence} {mask}")


# -- ports/settings.js: book.widgets.spec's rules ------------------------------------------------------------


def _python_merge(spec, state, changes, fixed):
    try:
        return {"state": merge_settings(spec, state, changes, fixed=fixed)}
    except (ValueError, TypeError) as error:
        return {"error": str(error)}
    except KeyError:
        return {"error": "unknown"}


def test_settings_merge_equals_python(ports):
    """mergeSettings is merge_settings: the same new settings, or the same message, for every case."""
    cases = merge_cases()
    got = ports.run(
        """cases => cases.map(([spec, state, changes, fixed]) => {
            try { return {state: mhaFrontEnd.mergeSettings(spec, state, changes, fixed)}; }
            catch (e) { return {error: e.message.startsWith("unknown settings") ? "unknown" : e.message}; }
        })""",
        [list(c) for c in cases],
    )
    expected = [_python_merge(*c) for c in cases]
    assert got == expected
    assert sum("error" in e for e in expected) >= 15 and sum("state" in e for e in expected) >= 15


def test_settings_follow_notes_equal_python(ports):
    """followNotes is follow_notes: what the page says about a setting that followed another, for every
    change the rules accept; a divisor and a layer that had to change, and a valid length below the one
    chosen, say so."""
    from book.widgets.spec import follow_notes

    cases = []
    for spec, state, changes, fixed in merge_cases():
        result = _python_merge(spec, state, changes, fixed)
        if "state" in result:
            cases.append((spec, state, result["state"], changes))
    got = ports.run(
        "cases => cases.map(([spec, before, after, changes]) =>"
        " mhaFrontEnd.followNotes(spec, before, after, changes))",
        [list(c) for c in cases],
    )
    expected = [follow_notes(*c) for c in cases]
    assert got == expected
    said = " ".join(text for notes in expected for text in notes.values())
    assert "The heads h changed from 16 to 8: 16 does not divide d_model = 8." in said
    assert "The show layer changed from 6 to 3: layers is now 3." in said
    assert "The valid length is 1 while the sentence has 1 token; it goes back to 8 when" in said
    assert sum(bool(notes) for notes in expected) >= 8 and sum(not notes for notes in expected) >= 15


def test_settings_valid_length_follows_the_sentence(ports):
    """Typed word by word, or through a sentence the page refuses, the valid length comes back to the value
    chosen: the page and Python take the same steps."""
    spec = explorer_spec()
    state = merge_settings(spec, spec["defaults"], {"mask": "padding", "valid_length": 8})
    steps = [
        {"sentence": ""},
        {"sentence": "a"},
        {"sentence": "a b c"},
        {"sentence": " ".join("abcdefghijkl")},
    ]
    got = ports.run(
        "(spec, state, steps) => steps.map(s =>"
        " (state = mhaFrontEnd.mergeSettings(spec, state, s)).valid_length)",
        spec,
        state,
        steps,
    )
    expected = []
    for step in steps:
        state = merge_settings(spec, state, step)
        expected.append(state["valid_length"])
    assert got == expected == [8, 1, 3, 8]


def test_settings_choices_and_next_valid_equal_python(ports):
    spec = explorer_spec()
    h = next(c for c in spec["controls"] if c["name"] == "h")
    got = ports.run("(h, ds) => ds.map(d => mhaFrontEnd.choicesOf(h, {d_model: d}))", h, [8, 12, 24, 64, 7])
    assert got == [choices(spec, h, {"d_model": d}) for d in (8, 12, 24, 64, 7)]
    got = ports.run("() => [[1, 2, 4], [3, 6]].map(v => mhaFrontEnd.nextValid(v, 5))")
    assert got == [next_valid([1, 2, 4], 5), next_valid([3, 6], 5)] == [4, 3]
    got = ports.run(
        "(t, v) => mhaFrontEnd.format(t, v)", "{a} and {b}: {c}", {"a": [1, "x"], "b": None, "c": 2.5}
    )
    from book.widgets.spec import fill

    assert got == fill("{a} and {b}: {c}", a=[1, "x"], b=None, c=2.5)


def test_settings_explorer_choices_equal_python(ports):
    """What the explorer's menus offer, fresh or with a trained model (its own d_model and h)."""
    from book.widgets.spec import explorer_choices

    spec = explorer_spec(trained=True)
    cases = [
        ({**spec["defaults"], "source": "fresh", "d_model": d}, trained)
        for d in (8, 12, 48)
        for trained in (None, {"d_model": 24, "h": 3}, {"d_model": 20, "h": 20}, {"d_model": 64, "h": 16})
    ]
    cases += [({**state, "source": "trained"}, trained) for state, trained in cases if trained]
    got = ports.run(
        "(spec, cases) => cases.map(([s, t]) => mhaFrontEnd.explorerChoices(spec, s, t))", spec, cases
    )
    assert got == [explorer_choices(spec, state, trained) for state, trained in cases]


# -- ports/costs.js: the calculator's sums and rows (mha.costs) ----------------------------------------------


def _calculator_cases() -> list[dict]:
    from mha.costs.configs import MODEL_CONFIGS

    decoders = [c for c in MODEL_CONFIGS.values() if c.kind == "decoder"]
    return [
        *[
            {"model": c.name, "context": context, "batch": batch, "dtype": dtype}
            for i, c in enumerate(decoders)
            for context, batch, dtype in [
                (4096, 1, "bfloat16"),
                (1 + 997 * i, 3, "float32"),
                (2**20, 2**12, "float8_e4m3fn"),
            ]
        ],
        *[
            {"model": c.name, "context": c.trained_context or 4096, "batch": 2, "dtype": "bfloat16"}
            for c in decoders
        ],
    ]


def test_costs_equal_mha_costs_for_every_decoder(ports):
    from book.widgets.frontend import calculator_config
    from mha.costs.configs import MODEL_CONFIGS
    from mha.costs.counts import kv_cache_bytes, model_costs, model_kv_cache_bytes, uncounted_layers
    from mha.costs.report import DTYPES, cost_report

    config = calculator_config({})
    cases = _calculator_cases()
    got = ports.run(
        """(cases, config) => cases.map(s => mhaFrontEnd.costs(config.configs.find(c => c.name === s.model),
                                                                s.context, s.batch, s.dtype, config.spec))""",
        cases,
        config,
    )
    for s, result in zip(cases, got, strict=True):
        model, dtype = MODEL_CONFIGS[s["model"]], DTYPES[s["dtype"]]
        costs = model_costs(model, s["context"], batch=s["batch"], dtype=dtype)
        for name in ("params", "macs_per_token", "macs_per_sequence"):  # None where not counted
            value = result[name]
            assert (None if value is None else int(value)) == getattr(costs, name), (s, name)
        assert int(result["kv_cache_bytes"]) == costs.kv_cache_bytes, s
        as_mha = dtype.itemsize * s["batch"] * model.mha_cache_width * model.n_layers * s["context"]
        if model.kv_latent is None:  # plain MHA's cache; latent heads' keys add the rotary part
            assert as_mha == kv_cache_bytes(
                model.n_layers, model.h, model.d_k, s["context"], batch=s["batch"], dtype=dtype
            )
        assert int(result["kv_cache_bytes_as_mha"]) == as_mha == costs.kv_cache_bytes_as_mha, s
        every = (
            dtype.itemsize * s["batch"] * sum(layer.global_elements(s["context"]) for layer in model.layers)
        )
        if not uncounted_layers(model):  # one kind of layer: the same model with every layer global
            assert (
                model_kv_cache_bytes(model.every_layer_global(), s["context"], batch=s["batch"], dtype=dtype)
                == every
            )
        assert int(result["kv_cache_bytes_all_global"]) == every, s
        assert (costs.kv_cache_bytes_as_mha, costs.kv_cache_bytes_all_global) == (as_mha, every), s
        width = max(len(k) for k, _ in result["rows"])
        lines = "\n".join(f"{k.ljust(width)}  {v}" for k, v in result["rows"])
        assert lines == cost_report(s["model"], s["context"], batch=s["batch"], dtype=s["dtype"]), s


def test_costs_format_as_python_rounds(ports):
    """Python's f"{x:,.2f}" rounds ties (exact in binary) to even, toFixed up: the port does as Python, with
    the units of the spec (up to YiB and Y) and digits grouped beyond them."""
    from book.widgets.frontend import calculator_config
    from mha.costs.report import format_bytes, format_count

    sizes = [
        0,
        1023,
        1024,
        1536,
        1024 * 1024 * 5 // 8 * 1 + 5,
        2**30 + 2**20 * 5,
        2**40 * 3 + 1,
        10**12 + 5 * 10**9,
        589824 * 2**40,  # once "589824.00 TiB"
        2**60 * 3 // 2,
        2**80 - 1,
        2**90,
        2**100 + 2**93,
    ]
    counts = [0, 999, 1000, 1005, 1015, 1_234_567, 10**9 + 5 * 10**6, 2**53 + 1, 10**15]
    counts += [
        2_724_067_590_852_840 * 10**9,  # once "2724067590852.84 T"
        10**21 * 7,
        10**24 - 1,
        10**27 * 123_456 + 5 * 10**24,
    ]
    units = calculator_config({})["spec"]["units"]
    got = ports.run(
        """(sizes, counts, units) => [sizes.map(n => mhaFrontEnd.formatBytes(BigInt(n), units.bytes)),
                                      counts.map(n => mhaFrontEnd.formatCount(BigInt(n), units.counts))]""",
        [str(n) for n in sizes],
        [str(n) for n in counts],
        units,
    )
    assert got == [[format_bytes(n) for n in sizes], [format_count(n) for n in counts]]
    assert got[0][8] == "576.00 PiB" and got[0][-1] == "1,056,768.00 YiB" and got[1][9] == "2.72 Y"
    assert got[1][-1] == "123,456,005.00 Y"


# -- ports/windows.js: book.compute.since_2017 ---------------------------------------------------------------


def test_windows_equal_python(ports):
    got = ports.run("all => all.map(mhaFrontEnd.windowsCompute)", WINDOW_SWEEP)
    for s, result in zip(WINDOW_SWEEP, got, strict=True):
        masks = layer_masks(
            s["n"], window=s["window"], layers=s["layers"], global_period=s["global_period"] or None
        )
        assert torch.equal(torch.tensor(result["masks"]), masks), s
        assert torch.equal(torch.tensor(result["seen"]), receptive_fields(masks)), s
        assert result["cached"] == int(masks[:, -1].sum()) and result["full"] == s["n"] * s["layers"], s
        kept = [s["n"] if m[-1].all() else min(s["n"], s["window"]) for m in masks]  # a global row sees all
        assert result["cached"] == sum(kept), s


# -- ports/sparse.js: book.compute.attention_2026 and mha.costs.sparse ---------------------------------------


def test_sparse_weights_are_python_s_exactly(ports):
    got = ports.run(
        "(shape, stream) => mhaFrontEnd.indexWeights(shape, stream, 11)", INDEX_SHAPE, INDEX_STREAM
    )
    for mine, theirs in zip(got, index_weights(11).values(), strict=True):
        assert torch.equal(torch.tensor(mine, dtype=torch.float64), theirs)


def test_sparse_equal_python(ports):
    """The scores within float64 rounding, the kept keys exactly, the pair counts exactly."""
    spec = {"index_shape": INDEX_SHAPE, "index_stream": INDEX_STREAM}
    got = ports.run("(all, spec) => all.map(s => mhaFrontEnd.sparseCompute(s, spec))", SPARSE_SWEEP, spec)
    for s, result in zip(SPARSE_SWEEP, got, strict=True):
        n = len(result["tokens"])
        k = n if s["top_k"] is None else min(s["top_k"], n)
        scores, selected = index_selection(s["sentence"], k, seed=s["seed"])
        js = torch.tensor(
            [[-math.inf if v is None else v for v in row] for row in result["scores"]], dtype=torch.float64
        )
        visible = torch.isfinite(scores)
        assert torch.equal(torch.isfinite(js), visible), s
        torch.testing.assert_close(js[visible], scores[visible], rtol=0, atol=1e-12)
        assert torch.equal(torch.tensor(result["selected"]), selected), s
        assert result["kept"] == causal_pairs(n, k) == int(selected.sum()), s
        assert result["pairs"] == causal_pairs(n) and result["k"] == k, s


# -- ports/minilm.js: all-MiniLM-L6-v2's tokenizer and encoder (mha.pretrained) ------------------------------

# The page's model in the engine: the weights as weights_payload and word_shard store them, decoded by the
# ports (base64Bytes, float16s) as minilm.js and its worker decode them.
LOAD_MINILM = """(payload, shards) => {
    const port = mhaFrontEnd.miniLM(), d = payload.config.d_model, W = {};
    const values = (entry) => port.float16s(mhaFrontEnd.base64Bytes(entry.data));
    for (const name in payload.tensors) W[name] = values(payload.tensors[name]);
    W[payload.words.name] = new Float32Array(payload.words.count * d);
    for (const s of shards) W[payload.words.name].set(values(s), s.first * d);
    const vocab = new Map(payload.vocab.map((t, i) => [t, i]));
    globalThis.minilm = {port, vocab, max: payload.max_tokens, model: {config: payload.config, W}};
    return Object.keys(W).length;
}"""
TOKENIZE = "texts => texts.map(s => minilm.port.tokenize(s, minilm.vocab, minilm.max))"
ATTEND_JS = """texts => texts.map(s => { const t = minilm.port.tokenize(s, minilm.vocab, minilm.max);
    const run = minilm.port.forward(minilm.model, t.ids, new Set(), true);
    return {tokens: t.tokens, attention: run.attention}; })"""
EMBED_JS = """cases => cases.map(([s, off]) => { const t = minilm.port.tokenize(s, minilm.vocab, minilm.max);
    const heads = new Set(off.map(([l, h]) => l * minilm.model.config.h + h));
    return minilm.port.forward(minilm.model, t.ids, heads, false).embedding; })"""


def _load(ports: Ports, encoder) -> None:
    shards = [word_shard(encoder, i) for i in range(math.ceil(encoder.config.vocab_size / 64))]
    assert (
        all(s["shape"][0] <= 64 for s in shards)
        and sum(s["shape"][0] for s in shards) == encoder.config.vocab_size
    )
    ports.run(LOAD_MINILM, weights_payload(encoder), shards)


def _as_the_page_has_it(encoder):
    """A copy of ``encoder`` with every weight rounded to float16, as the page stores it."""
    page = copy.deepcopy(encoder)
    with torch.no_grad():
        for p in page.parameters():
            p.copy_(p.half().float())
    return page


def _check_minilm(ports: Ports, encoder, texts, attend_texts, heads_off, *, atol: float) -> None:
    from mha.pretrained import ablated_embeddings, attend

    got = ports.run(TOKENIZE, texts)
    wrong = [(t, g) for t, g in zip(texts, got, strict=True) if g != page_tokens(encoder, t)]
    assert not wrong, wrong[:3]
    page = _as_the_page_has_it(encoder)
    for text, result in zip(attend_texts, ports.run(ATTEND_JS, attend_texts), strict=True):
        tokens, expected = attend(page, text)  # (L, h, n, n)
        assert result["tokens"] == tokens, text
        torch.testing.assert_close(
            torch.tensor(result["attention"], dtype=torch.float32), expected, atol=atol, rtol=0, msg=text
        )
    for (text, off), embedding in zip(heads_off, ports.run(EMBED_JS, heads_off), strict=True):
        expected = ablated_embeddings(page, [text], [tuple(pair) for pair in off])[0]  # (d_model,)
        torch.testing.assert_close(torch.tensor(embedding, dtype=torch.float32), expected, atol=atol, rtol=0)


def small_encoder():
    """A MiniLM-shaped encoder of 2 layers of 4 heads with random weights, and a small WordPiece vocabulary
    tokenized as all-MiniLM-L6-v2's tokenizer.json says (BertNormalizer, BertPreTokenizer, WordPiece)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    from mha.pretrained.minilm import MiniLMConfig, MiniLMEncoder

    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    words = [
        "the",
        "cat",
        "sat",
        "on",
        "mat",
        "dog",
        "did",
        "not",
        "go",
        "road",
        "tired",
        "hello",
        "world",
        "cafe",
    ]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", *letters]
    vocab += (
        [f"##{c}" for c in letters]
        + words
        + ["东", "京", "日", "本", "中", "文", "ø", "ß", "ι", "δ", "ο", "σ"]
    )
    tokenizer = Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]", max_input_chars_per_word=100)
    )
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tokenizer.enable_truncation(MAX_TOKENS)
    config = MiniLMConfig(
        vocab_size=len(vocab), max_positions=MAX_TOKENS, d_model=32, h=4, d_ff=64, n_layers=2
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        encoder = MiniLMEncoder(config, tokenizer).eval().requires_grad_(False)
        for name, p in encoder.named_parameters():
            if (
                name.endswith("norm_1.weight")
                or name.endswith("norm_2.weight")
                or name == "embedding_norm.weight"
            ):
                p.uniform_(0.5, 1.5)
            elif "W_q" in name or "W_k" in name:
                p.mul_(6)  # sharp attention: weights far from uniform
    return encoder


def test_minilm_reads_float16_as_numpy_does(ports):
    """Every float16 bit pattern, little-endian, as numpy reads it (infinities and NaN sent as text)."""
    bits = np.arange(2**16, dtype="<u2")
    values = bits.view("<f2").astype(np.float64)
    run = "t => Array.from(mhaFrontEnd.miniLM().float16s(mhaFrontEnd.base64Bytes(t)), String)"
    got = np.array([float(v) for v in ports.run(run, base64.b64encode(bits.tobytes()).decode())])
    assert np.array_equal(got, values, equal_nan=True)


def test_minilm_on_a_small_encoder_equals_python(ports):
    """The tokenizer (against tokenizers', with the box's truncation and [UNK] words) and the encoder (against
    mha.pretrained's attend and ablated_embeddings, heads off) on a small random model with the same code."""
    encoder = small_encoder()
    _load(ports, encoder)
    texts = [*ODD, *unicode_sample(60), "The cat sat on the mat.", "word " * 200, "Cafés: the dog's road!"]
    attend_texts = ["The cat sat on the mat.", "Hello, world!", ODD[2], ODD[3], "a", ODD[9]]
    heads_off = [
        ("The cat sat on the mat.", []),
        ("The dog did not go.", [[0, 1]]),
        (ODD[9], [[1, 0], [1, 3], [0, 2]]),
    ]
    _check_minilm(ports, encoder, texts, attend_texts, heads_off, atol=1e-5)


@pytest.mark.slow  # all-MiniLM-L6-v2's weights in the engine, a few seconds
def test_minilm_itself_equals_python(ports, minilm):
    """The page's model: the tokenizer on the book's corpus, odd input and a sample of Unicode; the encoder on
    the sentences and heads-off cases of the browser's check, against Python on the same float16 weights."""
    from book.minilm.census import load_corpus

    encoder = minilm
    _load(ports, encoder)
    corpus = load_corpus()
    texts = (
        corpus["sentences"]
        + [t for pair in corpus["paraphrase_pairs"] for t in pair]
        + ODD
        + unicode_sample()
    )
    _check_minilm(ports, encoder, texts, ATTEND, HEADS_OFF, atol=1e-5)


@pytest.mark.slow  # the encoder on a sample of the corpus, twice
def test_the_page_s_float16_weights_hold_the_box_s_bounds(minilm):
    """The box's bounds (attention within 0.005 of Python's float32 model, sentence embeddings within 1e-3,
    with heads switched off), for the weights as the page stores them (float16), on hard inputs and a sample
    of the corpus. (On the whole corpus the largest differences were 0.0021 and 3.2e-4, both on the hard
    inputs; the browser checks the page's own numbers on some of them: tests/browser/test_site_minilm.py.)"""
    from book.minilm.census import load_corpus
    from mha.pretrained import ablated_embeddings, attend

    encoder = minilm
    page = _as_the_page_has_it(encoder)
    corpus = load_corpus()
    sentences = corpus["sentences"][::6] + ODD  # every head's weights on each
    texts = sentences + [t for pair in corpus["paraphrase_pairs"][::6] for t in pair]  # and every embedding
    attention = max((attend(page, t)[1] - attend(encoder, t)[1]).abs().max().item() for t in sentences)
    embedding = max(
        (ablated_embeddings(page, texts, off) - ablated_embeddings(encoder, texts, off)).abs().max().item()
        for off in (
            [],
            [(0, 2)],
            [(2, j) for j in range(12)] + [(i, j) for i in range(6) for j in range(0, 12, 3)],
        )
    )
    assert attention <= 0.005 and embedding <= 1e-3, (attention, embedding)
