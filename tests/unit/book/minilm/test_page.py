"""book.minilm.page: the MiniLM box's Python side, its spec, its live widget and the weights scripts.

The spec (controls, messages, the head it opens on, the texts it says before and during the first load, the
stored weights of "What trained heads do"), the live widget, and the weights split into parts small enough for
the page's main thread (issue 32). The browser side (tokenizer, forward pass, box) is tested on the built
site by tests/browser/test_site_minilm.py (keyboard, print, progress and cancel, the difference view,
axe-core), the live widget's front end and the stored weights by tests/browser/test_minilm_box.py.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from book.minilm import page as minilm_page
from book.minilm.census import load_corpus, load_head_results
from book.minilm.page import (
    CALLBACK,
    CLASS_NAME,
    FORMAT,
    LAYER_CALLBACK,
    LAYERS_DIR,
    MAX_TOKENS,
    MESSAGES,
    PART_CHARACTERS,
    WEIGHTS_FILE,
    WORDS_DIR,
    MiniLMWidget,
    box_html,
    box_spec,
    decode_tensor,
    layer_script,
    layer_shard,
    minilm_box,
    telling_head,
    weights_payload,
    weights_script,
    weights_size,
    word_shard,
    write_weights_script,
)
from book.minilm.stored import dequantise, load_stored
from book.widgets.spec import INVALID, merge_settings
from mha.pretrained import MINILM, ablate_encoder_heads, ablated_embeddings, attend
from mha.pretrained.heads import PATTERNS
from tests import ROOT
from tests.minilm_cases import LABELS


def _spec_of(page_html: str) -> dict:
    found = re.search(r'<script type="application/json">(.*?)</script>', page_html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_spec_carries_limits_messages_and_the_census_patterns():
    spec = box_spec(LABELS)
    megabytes = f"{weights_size()[1] / 1e6:.0f}"
    shard = np.zeros((minilm_page.WORD_ROWS, MINILM.d_model))  # a file of word rows
    kilobytes = f"{len(minilm_page._float16_base64(shard)) / 1e3:.0f}"
    messages = {k: v.replace("{mb}", megabytes).replace("{kb}", kilobytes) for k, v in MESSAGES.items()}
    assert {k: spec["messages"][k] for k in MESSAGES} == messages and spec["messages"]["invalid"] == INVALID
    assert spec["labels"] == LABELS and "{mb}" in MESSAGES["loading"] and megabytes == "29"  # of 60 in all
    assert "{mb}" in MESSAGES["idle"] and "{kb}" in MESSAGES["idle"] and kilobytes == "66"  # said before Run
    assert spec["characters"] == weights_size()[1]
    assert set(PATTERNS) <= set(minilm_page.PATTERN_NAMES)


def test_the_spec_defines_the_controls_and_their_defaults():
    spec = box_spec(LABELS, sentence="one", other="two")
    controls = {c["name"]: c for c in spec["controls"]}
    assert list(controls) == ["sentence", "other", "layer_off", "pattern_off", "difference"]
    assert controls["difference"]["kind"] == "checkbox" and not controls["difference"]["setting"]  # a view
    assert spec["defaults"] == {"sentence": "one", "other": "two"}
    assert merge_settings(spec, spec["defaults"], {"other": "three"}) == {"sentence": "one", "other": "three"}
    assert not controls["layer_off"]["setting"] and not controls["pattern_off"]["setting"]  # actions
    layers = controls["layer_off"]["choices"]
    assert layers[0][0] == "" and [v for v, _ in layers[1:]] == list(range(MINILM.n_layers))
    patterns = controls["pattern_off"]["choices"]
    assert [p for p, _ in patterns[1:]] == ["cls", "sep", "previous", "broad", "mixed"]  # census order
    assert patterns[1][1] == f"{minilm_page.PATTERN_NAMES['cls']} (36)"  # with its number of heads


def test_stored_weights_go_into_the_spec_and_the_sentence_suggests_them():
    """The page reads spec["stored"] as book.minilm.stored writes it: every sentence, every head."""
    stored = load_stored()
    texts = load_corpus()["sentences"]
    spec = box_spec(LABELS, sentence=texts[0], stored=stored)
    sentence = next(c for c in spec["controls"] if c["name"] == "sentence")
    assert sentence["kind"] == "text" and sentence["choices"] == [[t, t] for t in texts]  # suggestions
    assert merge_settings(spec, spec["defaults"], {"sentence": "my own"})["sentence"] == "my own"
    assert set(spec["stored"]) == {"scale", "encoding", "sentences", "data"}
    page = {**spec["stored"], "layers": spec["layers"], "heads": spec["heads"]}  # as minilm.js reads it
    for got, expected in zip(dequantise(page), dequantise(stored), strict=True):
        np.testing.assert_array_equal(got, expected)
    assert "{index}" in MESSAGES["stored"] and "{mb}" not in spec["messages"]["stored"]
    assert "stored" not in box_spec(LABELS) and not box_spec(LABELS)["controls"][0]["choices"]
    assert _spec_of(box_html(LABELS, stored=stored))["stored"] == spec["stored"]
    with pytest.raises(ValueError, match="stored"):
        box_spec(LABELS, stored={**stored, "layers": 5})


def test_the_max_tokens_are_the_tokenizers_truncation(minilm):
    truncation = minilm.tokenizer.truncation
    assert truncation["max_length"] == MAX_TOKENS


@pytest.mark.parametrize(
    ("labels", "error"),
    [
        (LABELS[:5], ValueError),
        ([row[:11] for row in LABELS], ValueError),
        ([["cls"] * 11 + ["nonsense"]] * 6, ValueError),
        ("cls", ValueError),
    ],
)
def test_the_spec_rejects_labels_that_are_not_a_census(labels, error):
    with pytest.raises(error, match="labels"):
        box_spec(labels)


def test_the_spec_rejects_a_sentence_that_is_not_a_string():
    with pytest.raises(TypeError, match="sentence"):
        box_spec(LABELS, sentence=3)


def test_the_root_holds_the_spec_inline_and_a_visible_fallback():
    page = box_html(LABELS, sentence="a </script> b")
    assert page.startswith(f'<div class="{CLASS_NAME}">')
    assert _spec_of(page)["defaults"]["sentence"] == "a </script> b"  # "</" cannot end the script early
    assert 'class="mm-fallback"' in page and len(page) < 10_000


def test_the_box_output_is_html_and_with_an_encoder_holds_a_picture_for_print(minilm):
    plain = minilm_box(LABELS)._repr_mimebundle_()
    assert set(plain) == {"text/plain", "text/html"} and "<img" not in plain["text/html"]
    assert _spec_of(plain["text/html"])["labels"] == LABELS
    pictured = minilm_box(LABELS, encoder=minilm)._repr_mimebundle_()
    assert '<img class="mm-print" alt="Every head of all-MiniLM-L6-v2' in pictured["text/html"]
    assert "data:image/png;base64,iVBORw0KGgo" in pictured["text/html"]  # the PNG signature


def test_the_weights_are_the_encoder_in_float16_the_word_rows_apart(minilm):
    encoder = minilm
    payload = weights_payload(encoder)
    state = encoder.state_dict()
    words = payload["words"]
    assert payload["format"] == FORMAT and set(payload["tensors"]) == set(state) - {words["name"]}
    parts = payload["layers"]["parts"]
    assert [name for part in parts for name in part["names"]] == [n for n in state if n.startswith("layers.")]
    shards = [word_shard(encoder, i) for i in range(words["shards"])]
    assert [s["first"] for s in shards] == list(range(0, words["count"], words["rows"]))
    values = sum(int(np.prod(t["shape"])) for t in [*payload["tensors"].values(), *shards])
    assert weights_size() == (values, sum(len(t["data"]) for t in payload["tensors"].values()))
    vocab = encoder.tokenizer.get_vocab()
    assert len(payload["vocab"]) == len(vocab) and all(vocab[t] == i for i, t in enumerate(payload["vocab"]))
    for name, entry in [*payload["tensors"].items(), (words["name"], None)]:
        expected = state[name].numpy()
        if name == "position_embeddings.weight":
            expected = expected[:MAX_TOKENS]
        if name == "token_type_embeddings.weight":
            expected = expected[:1]
        got = decode_tensor(entry) if entry else np.concatenate([decode_tensor(s) for s in shards])
        assert got.shape == expected.shape, name
        np.testing.assert_allclose(got, expected, rtol=2**-11, atol=2**-24, err_msg=name)  # float16 rounding
    with pytest.raises(ValueError, match="index"):
        word_shard(encoder, words["shards"])


def test_the_weights_scripts_are_written_once_then_copied(tmp_path, monkeypatch):
    calls = []

    def fake_write(directory: Path) -> None:
        calls.append(directory)
        (directory / WEIGHTS_FILE).write_text("globalThis.x({});\n")
        for folder in (WORDS_DIR, LAYERS_DIR):
            (directory / folder).mkdir()
            (directory / folder / "0.js").write_text("globalThis.y(0, {});\n")

    monkeypatch.setattr(minilm_page, "_write_scripts", fake_write)
    first = write_weights_script(tmp_path / "a" / WEIGHTS_FILE, cache=tmp_path / "cache")
    second = write_weights_script(tmp_path / "b" / WEIGHTS_FILE, cache=tmp_path / "cache")
    assert first.read_text() == second.read_text() == "globalThis.x({});\n" and len(calls) == 1
    assert (tmp_path / "b" / WORDS_DIR / "0.js").read_text() == "globalThis.y(0, {});\n"
    assert (tmp_path / "b" / LAYERS_DIR / "0.js").read_text() == "globalThis.y(0, {});\n"
    assert len(list((tmp_path / "cache").iterdir())) == 1  # the built folder, no staging folder left


def _boxes(chapter: str) -> list[dict]:
    notebook = json.loads((ROOT / "chapters" / f"{chapter}.ipynb").read_text())
    outputs = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    return [o for o in outputs if f'class="{CLASS_NAME}"' in "".join(o.get("data", {}).get("text/html", ""))]


@pytest.mark.parametrize("chapter", ["why_multiple_heads", "trained_heads"])
def test_the_chapters_show_the_box_and_what_trained_heads_do_its_stored_sentences(chapter):
    (box,) = _boxes(chapter)
    page = "".join(box["data"]["text/html"])
    assert 'class="mm-print"' in page and html.unescape("".join(box["data"]["text/plain"])).startswith(
        "MiniLMWidget("
    )
    spec = _spec_of(page)
    if chapter == "why_multiple_heads":
        assert "stored" not in spec
    else:  # the corpus, every head of it, and the box opens on its first sentence, drawn at once
        assert spec["stored"]["data"] == load_stored()["data"]
        assert spec["defaults"]["sentence"] == load_corpus()["sentences"][0]


def test_the_live_widget_computes_with_python_as_the_page_would(minilm):
    widget = MiniLMWidget(LABELS, encoder=minilm)
    result, buffers = widget.compute({"type": "attend", "sentence": "Héllo qzxjkwv world", "off": [[0, 1]]})
    encoder = minilm
    assert result["tokens"] == encoder.tokenizer.encode("Héllo qzxjkwv world").tokens
    attention = np.frombuffer(buffers[0], dtype="<f4").reshape(result["attention_shape"])
    with ablate_encoder_heads(encoder, [(0, 1)]):
        expected = attend(encoder, "Héllo qzxjkwv world")[1].numpy()
    np.testing.assert_allclose(attention, expected, atol=1e-6, rtol=0)
    expected = ablated_embeddings(encoder, ["Héllo qzxjkwv world"], [(0, 1)])[0].numpy()
    np.testing.assert_allclose(result["embedding"], expected, atol=1e-6, rtol=0)
    long, _ = widget.compute({"type": "tokenize", "sentence": "word " * 200})
    assert len(long["tokens"]) == MAX_TOKENS and long["truncated"] and long["total"] == 202
    for bad, error in (({"type": "run", "sentence": "a"}, ValueError), ({"type": "embed"}, TypeError)):
        with pytest.raises(error):
            widget.compute(bad)
    bundle, _ = widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and 'class="mm-print"' in bundle["text/html"]


def test_the_live_widget_suggests_the_stored_sentences_and_leaves_their_weights_to_the_static_box(minilm):
    stored = load_stored()
    widget = MiniLMWidget(LABELS, encoder=minilm, sentence="Birds sing.", other="", stored=stored)
    assert "stored" not in widget.spec  # Python computes every sentence
    assert widget.spec["controls"][0]["choices"] == [[s["text"]] * 2 for s in stored["sentences"]]
    assert _spec_of(widget._repr_mimebundle_()[0]["text/html"])["stored"]["data"] == stored["data"]


# -- the head it opens on, what it says while loading, the weights in parts (issue 32) ---------------------

CHAPTER = ROOT / "chapters" / "why_multiple_heads.ipynb"


@pytest.fixture(scope="module")
def payload(minilm):
    return weights_payload(minilm)


def test_the_box_opens_on_the_censuss_previous_token_head():
    labels = load_head_results()["labels"]  # the shipped census
    spec = box_spec(labels)
    layer, head = spec["shown"]
    assert (layer, head) == telling_head(labels) == (0, 2) and labels[layer][head] == "previous"
    assert spec["kinds"]["previous"] == "looks at the previous token"  # what the thumbnail and title say


@pytest.mark.parametrize(
    ("first", "expected"),
    [("previous", (3, 7)), ("next", (3, 7)), ("cls", (0, 0))],
)
def test_the_telling_head_is_the_first_of_the_most_recognisable_kind(first, expected):
    labels = [["cls"] * MINILM.h for _ in range(MINILM.n_layers)]
    labels[3][7] = first
    assert telling_head(labels) == expected
    labels[5][1] = "previous"  # a previous-token head wins over any other kind, wherever it is
    assert telling_head(labels) == ((3, 7) if first == "previous" else (5, 1))


def test_the_chapter_says_what_the_box_shows_at_its_default():
    """The Notice after the box names the head the box opens on, as the cell before it prints."""
    cells = json.loads(CHAPTER.read_text())["cells"]
    text = ["".join(c["source"]) for c in cells]
    box = next(
        i for i, c in enumerate(cells) if c["cell_type"] == "code" and "MiniLMWidget(labels" in text[i]
    )
    printed = "".join("".join(o.get("text", "")) for o in cells[box - 1].get("outputs", []))
    layer, head = telling_head(load_head_results()["labels"])
    assert f"the box opens on layer {layer + 1}, head {head + 1} (previous)" in printed
    least = float(re.search(r"puts at least ([0-9.]+) on the one before", printed).group(1))
    assert least > 0.99  # a line just below the diagonal, as the Notice says
    notice = text[box + 1]
    assert notice.startswith("*Notice*") and f"layer {layer + 1}, head {head + 1}" in notice
    words = " ".join(notice.split())  # the Markdown's line breaks fall anywhere
    assert "previous-token head" in words and "Show the difference from the intact model" in words


def test_the_size_is_said_before_run_and_progress_names_its_fields():
    idle = box_spec(load_head_results()["labels"])["messages"]["idle"]
    assert f"{weights_size()[1] / 1e6:.0f} MB" in idle and "{" not in idle  # computed, filled in
    for key in ("loading", "partial"):
        fields = "{done} {mb} {layers} {total}"
        assert set(re.findall(r"\{\w+\}", MESSAGES[key])) == set(fields.split()), key
        assert "Escape" in MESSAGES[key] and MESSAGES["cancel"] in MESSAGES[key]


def test_the_layers_come_in_parts_in_order_each_small(payload):
    parts = payload["layers"]["parts"]
    layers = [part["layer"] for part in parts]
    assert layers == sorted(layers) and set(layers) == set(range(MINILM.n_layers))
    sizes = {name: len(t["data"]) for name, t in payload["tensors"].items()}
    for part in parts:
        assert part["characters"] == sum(sizes[n] for n in part["names"])
        assert part["characters"] <= PART_CHARACTERS or len(part["names"]) == 1
        assert all(n.startswith(f"layers.{part['layer']}.") for n in part["names"])
    base = sum(size for name, size in sizes.items() if not name.startswith("layers."))
    assert base + sum(p["characters"] for p in parts) == weights_size()[1]  # what the progress counts to
    assert len(parts) == 3 * MINILM.n_layers  # attention; W_1; W_2 and the norm: about 1.6 MB each


def _call(script: str, callback: str) -> list:
    """The arguments a weights script passes to its global callback."""
    found = re.fullmatch(rf"globalThis\.{callback}\((.*)\);\n", script, re.S)
    return json.loads(f"[{found.group(1)}]")


def test_the_scripts_hold_each_tensor_once(payload):
    (base,) = _call(weights_script(payload=payload), CALLBACK)
    assert not any(name.startswith("layers.") for name in base["tensors"])
    assert base["layers"] == payload["layers"] and base["vocab"] == payload["vocab"]
    seen = set(base["tensors"])
    for index, part in enumerate(payload["layers"]["parts"]):
        got_index, shard = _call(layer_script(payload, index), LAYER_CALLBACK)
        assert got_index == index and shard == layer_shard(payload, index)
        assert shard["layer"] == part["layer"] and list(shard["tensors"]) == part["names"]
        assert not seen & set(shard["tensors"])
        seen |= set(shard["tensors"])
        for name, entry in shard["tensors"].items():
            assert decode_tensor(entry).shape == tuple(payload["tensors"][name]["shape"])
    assert seen == set(payload["tensors"])
    with pytest.raises(ValueError, match="part"):
        layer_shard(payload, len(payload["layers"]["parts"]))


def test_the_files_are_under_a_few_megabytes_each(tmp_path, payload):
    """What the build writes: the base script, the parts and the word rows, none above 2.1 MB."""
    minilm_page._write_scripts(tmp_path)
    sizes = {p.relative_to(tmp_path).as_posix(): p.stat().st_size for p in tmp_path.rglob("*.js")}
    assert max(sizes.values()) < 2.1e6, max(sizes, key=sizes.get)
    parts = [k for k in sizes if k.startswith(f"{minilm_page.LAYERS_DIR}/")]
    assert len(parts) == len(payload["layers"]["parts"])
    words = math.ceil(MINILM.vocab_size / minilm_page.WORD_ROWS)
    assert sum(k.startswith(f"{minilm_page.WORDS_DIR}/") for k in sizes) == words
