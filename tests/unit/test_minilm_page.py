"""The Python side of chapter 1's in-page MiniLM box (book/minilm/page.py, _ext/minilm_weights.py).

The browser side (tokenizer, forward pass, box) is tested on the built site by
tests/browser/test_site_minilm.py, the live widget's front end by tests/browser/test_minilm_box.py.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from book.minilm import page as minilm_page
from book.minilm.census import load_corpus
from book.minilm.page import (
    CLASS_NAME,
    FORMAT,
    LAYERS_DIR,
    MAX_TOKENS,
    MESSAGES,
    WEIGHTS_FILE,
    WORDS_DIR,
    MiniLMWidget,
    box_html,
    box_spec,
    decode_tensor,
    minilm_box,
    weights_payload,
    weights_size,
    word_shard,
    write_weights_script,
)
from book.minilm.stored import dequantise, load_stored
from book.widgets.frontend import SCRIPTS
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


def test_the_sphinx_extension_writes_the_weights_after_an_html_build(tmp_path, monkeypatch):
    from _ext import minilm_weights

    written = []

    def fake_write(target: Path) -> Path:
        written.append(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("globalThis.x({});\n")
        return target

    monkeypatch.setattr(minilm_page, "write_weights_script", fake_write)
    html_app = SimpleNamespace(builder=SimpleNamespace(format="html"), outdir=str(tmp_path))
    minilm_weights.write_weights(html_app, None)
    minilm_weights.write_weights(html_app, RuntimeError("failed build"))
    minilm_weights.write_weights(SimpleNamespace(builder=SimpleNamespace(format="latex"), outdir="x"), None)
    assert written == [tmp_path / "_static" / WEIGHTS_FILE]


def test_the_book_names_the_extension_and_loads_the_script():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert sphinx["local_extensions"]["minilm_weights"] == "_ext"
    assert "minilm_weights" in sphinx["config"]["extensions"]  # this list replaces Jupyter Book's
    assert (
        "page_assets" in sphinx["config"]["extensions"] and "minilm.js" in SCRIPTS
    )  # page_assets adds SCRIPTS


def test_the_chapter_shows_the_box():
    notebook = json.loads((ROOT / "chapters" / "why_multiple_heads.ipynb").read_text())
    outputs = [o for c in notebook["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    boxes = [o for o in outputs if f'class="{CLASS_NAME}"' in "".join(o.get("data", {}).get("text/html", ""))]
    assert len(boxes) == 1 and 'class="mm-print"' in "".join(boxes[0]["data"]["text/html"])
    assert html.unescape("".join(boxes[0]["data"]["text/plain"])).startswith("MiniLMWidget(")


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
