"""The interactive figures speak Chinese on the Chinese site: every text of every figure has its Chinese.

The English notebooks' stored outputs carry each figure's spec and data (book/widgets/spec.py); zh_sync
translates their texts into the Chinese notebooks with the catalogue zh/figures.yml (scripts/zh_figures.py).
These tests read the English notebooks, so a new figure's texts, or a changed text, fail here by name, with
python -m scripts.zh_sync --figures printing the pairs to add.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from _ext.figure_roots import figure_roots
from scripts import zh_checks, zh_figures, zh_sync
from tests.zh_site import CHINESE

ADD = "python -m scripts.zh_sync --figures lists them, ready to paste into zh/figures.yml"


@pytest.fixture(scope="module")
def found() -> zh_figures.Report:
    return zh_figures.report()


def test_every_figure_text_has_its_chinese(found):
    missing = [f"{where[0]}: {text!r}" for text, where in found.missing.items()]
    assert not missing, f"{len(missing)} figure texts have no Chinese ({ADD}):\n" + "\n".join(missing)


def test_no_pair_of_the_catalogue_is_left_over(found):
    assert not found.left_over, (
        f"pairs of zh/figures.yml whose English no figure shows (changed? removed?): {found.left_over}"
    )


def test_every_string_of_a_figure_is_classed_as_text_or_data(found):
    assert not found.unknown, (
        "a figure's JSON has strings in a place scripts/zh_figures.py does not know: add the place to TEXT "
        "(a text the reader reads) or DATA (a name, a setting, a model's input):\n" + "\n".join(found.unknown)
    )


def test_the_chinese_keeps_the_fields_and_the_glossarys_terms(found):
    assert not found.fields, "\n".join(found.fields)
    problems = []
    for entry in zh_figures.Catalogue.load().entries:
        if entry.en == entry.zh:
            continue  # a name or formula, shown as it is
        en, zh = (re.sub(r"\{\w+\}|\w*_\w*", "", t) for t in (entry.en, entry.zh))  # fields, code names
        problems += [f"{entry.en!r}: {p}" for p in zh_checks.term_problems(en, zh)]
        if not CHINESE.search(entry.zh):
            problems.append(f"{entry.en!r}: its Chinese {entry.zh!r} has no Chinese (a name? write it as is)")
    assert not problems, "\n".join(problems)


def test_the_chinese_notebooks_show_the_figures_in_chinese():
    """Each Chinese notebook's figures: every text in Chinese (or a name kept as it is), the data as the
    English figure's; and chapter 1's MiniLM box tells the reader that the model is an English one."""
    catalogue = zh_figures.Catalogue.load()
    kept = {e.en for e in catalogue.entries if e.en == e.zh}
    seen = 0
    for doc in zh_sync.documents():
        path = zh_sync.chinese_path(doc)
        if path.suffix != ".ipynb":
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                html = output.get("data", {}).get("text/html")
                for data in [r.data for r in figure_roots(html)] if isinstance(html, str) else []:
                    seen += 1
                    english = [t.value for t in zh_figures.texts(data) if t.value not in kept]
                    english = [t for t in english if not CHINESE.search(t)]
                    assert not english, f"zh/{doc}.ipynb cell {cell.id}: English texts left {english}"
                    if data.get("figure") == "MiniLM 演示框":
                        assert "英文模型" in data["messages"]["idle"], "the box must say the model is English"
    english = [f for f in zh_figures.english_figures() if f.cls]
    assert seen == len(english), "a Chinese notebook lacks a figure of the English one"


# ---------------------------------------------------------------------------------------------------------
# The mechanism, on a small figure made here
# ---------------------------------------------------------------------------------------------------------


SPEC = {
    "spec": {
        "figure": "viewer",
        "controls": [
            {"name": "head", "kind": "select", "label": "head", "choices": [[0, "head 1"], [1, "head 2"]]},
            {"name": "mask", "kind": "select", "label": "mask", "choices": [["causal", "causal"]]},
            {"name": "sentence", "kind": "select", "label": "sentence", "choices": [[0, "1. The cat sat."]]},
        ],
        "defaults": {"head": 0},
        "messages": {"shown": "{n} tokens: the cat sat.", "invalid": {"int": "{name} must be an int"}},
    },
    "tokens": ["the", "cat"],
}
CATALOGUE = zh_figures.Catalogue(
    [
        zh_figures.Entry(e, z)
        for e, z in [
            ("viewer", "查看器"),
            ("head", "头"),
            ("head {head}", "头 {head}"),
            ("mask", "掩码"),
            ("sentence", "句子"),
            ("{n} tokens: the cat sat.", "{n} 个词元：猫坐着。"),
            ("{name} must be an int", "{name} 必须是整数"),
            ("unused", "没用上"),
        ]
    ]
)


def _html(data: dict) -> str:
    return f'<div class="mha-viewer"><script type="application/json">{json.dumps(data)}</script></div>'


def test_only_the_texts_are_translated_the_names_and_sentences_stay():
    html = _html(SPEC)
    out = zh_figures.translate_html(html, CATALOGUE)
    (root,) = figure_roots(out)
    data = root.data
    head, mask, sentence = data["spec"]["controls"]
    assert data["spec"]["figure"] == "查看器"
    assert (head["name"], head["label"], head["choices"]) == ("head", "头", [[0, "头 1"], [1, "头 2"]])
    assert mask["choices"] == [["causal", "causal"]], "a choice that is its value is the code's name"
    assert sentence["choices"] == [[0, "1. The cat sat."]], "an English model's sentence stays English"
    assert data["spec"]["messages"] == {
        "shown": "{n} 个词元：猫坐着。",
        "invalid": {"int": "{name} 必须是整数"},
    }
    assert data["tokens"] == ["the", "cat"] and data["spec"]["defaults"] == {"head": 0}
    assert "unused" not in CATALOGUE.used and "head {head}" in CATALOGUE.used


def test_a_text_with_no_chinese_stays_english_and_is_reported():
    missing: list[str] = []
    catalogue = zh_figures.Catalogue([zh_figures.Entry("viewer", "查看器")])
    out = zh_figures.translate_html(_html(SPEC), catalogue, missing)
    assert "head 1" in missing and "{n} tokens: the cat sat." in missing and "1. The cat sat." not in missing
    (root,) = figure_roots(out)
    data = root.data
    assert data["spec"]["controls"][0]["label"] == "head" and data["spec"]["figure"] == "查看器"
    empty = zh_figures.Catalogue([])
    assert zh_figures.translate_html(_html(SPEC), empty) == _html(SPEC), "nothing translated: unchanged"


def test_an_unknown_place_and_a_lost_field_are_named():
    data = {**SPEC, "legend": "a new text"}
    unknown = [t.path for t in zh_figures.strings(data) if zh_figures.place(t.path) == "unknown"]
    assert unknown == [("legend",)]
    bad = zh_figures.Catalogue([zh_figures.Entry("{n} token{s} of {m}", "{n} 个词元")])
    (problem,) = zh_figures.field_problems(bad)
    assert "has the fields ['m', 'n', 's'], its Chinese '{n} 个词元' has ['n']" in problem
    good = zh_figures.Catalogue([zh_figures.Entry("{n} token{s} of {m}", "{m} 中的 {n} 个词元")])
    assert zh_figures.field_problems(good) == []
    assert good.lookup("3 tokens of 5") == "5 中的 3 个词元", "a filled text matches its pattern"
    assert good.lookup("1 token of 5") == "5 中的 1 个词元", "a plural ending may be empty"


def test_a_figure_whose_data_the_module_cannot_find_is_reported(tmp_path):
    """A figure's JSON outside a root element ``<div class="mha-…">`` would stay English unnoticed: named."""
    (tmp_path / "_toc.yml").write_text("root: ch\n")
    read = _html(SPEC).replace('class="mha-viewer"', 'class="mha-viewer wide" data-x="1"')
    unread = f'<section><script type="application/json">{json.dumps(SPEC)}</script></section>'
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("f", id="c1", outputs=[_display(read), _display(unread)])]
    nbformat.write(nb, tmp_path / "ch.ipynb")
    found = zh_figures.report(tmp_path)
    (unread_figure,) = found.unknown
    assert unread_figure.startswith("ch, cell c1: a figure's JSON not in a root element"), unread_figure
    assert "head 1" in found.missing and found.missing["head 1"][0].startswith(
        "the viewer (mha-viewer) of ch"
    )


def _display(html: str) -> dict:
    return nbformat.v4.new_output("display_data", data={"text/html": html})
