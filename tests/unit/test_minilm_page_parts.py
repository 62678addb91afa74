"""Chapter 1's MiniLM box, its Python side (issue 32): the head it opens on, the texts it says before and
during the first load, and the weights split into parts small enough for the page's main thread.

The page's side (keyboard, print, progress and cancel, the difference view, axe-core) is checked on the built
site by tests/browser/test_site_minilm.py.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from book.minilm import page as minilm_page
from book.minilm.census import load_head_results
from book.minilm.page import (
    CALLBACK,
    LAYER_CALLBACK,
    MESSAGES,
    PART_CHARACTERS,
    box_spec,
    decode_tensor,
    layer_script,
    layer_shard,
    telling_head,
    weights_payload,
    weights_script,
    weights_size,
)
from mha.pretrained import MINILM

ROOT = Path(__file__).resolve().parents[2]
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
    assert "previous-token head" in notice and "Show the\ndifference from the intact model" in notice


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
