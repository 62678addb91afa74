"""scripts/zh_figures.py's translation of a figure's texts in an output's HTML (the catalogue and the book's
figures: tests/book/test_figure_texts.py)."""

from __future__ import annotations

import json

from _ext.figure_roots import figure_roots
from scripts import zh_figures

CATALOGUE = zh_figures.Catalogue([zh_figures.Entry("head", "头"), zh_figures.Entry("viewer", "查看器")])


def _figure(figure: str, label: str) -> str:
    """A figure's root as book.widgets.frontend.root_html writes it: its data inline, "</" escaped."""
    spec = {"figure": figure, "controls": [{"name": "head", "kind": "select", "label": label}]}
    data = json.dumps({"spec": spec, "tokens": ["a </b>"]}).replace("</", "<\\/")
    script = f'<script type="application/json">{data}</script>'
    return f'<div class="mha-viewer">{script}<noscript><p>head 1</p></noscript></div>'


def test_each_roots_texts_are_translated_and_the_html_around_them_is_kept():
    one, two = _figure("viewer", "head"), _figure("stage", "mask")
    html = f"<p>Before, head.</p>{one}<p>Between.</p>{two}<p>End</p>"
    missing: list[str] = []
    out = zh_figures.translate_html(html, CATALOGUE, missing)
    first, second = figure_roots(out)
    assert second.data == figure_roots(two)[0].data
    assert first.data["spec"]["figure"] == "查看器" and first.data["spec"]["controls"][0]["label"] == "头"
    assert first.data["tokens"] == ["a </b>"] and "</b>" not in first.json, "the data, escaped as before"
    assert missing == ["stage", "mask"], "the second figure's texts have no Chinese: they stay English"
    untouched = html[figure_roots(html)[1].start :]
    assert out.startswith("<p>Before, head.</p>") and out.endswith(untouched)
    assert out.count("<noscript><p>head 1</p></noscript>") == 2, "only the roots' data change"


def test_html_without_a_text_to_translate_comes_back_as_it_was():
    html = f"<p>head</p>{_figure('stage', 'mask')}"
    assert zh_figures.translate_html(html, CATALOGUE) == html
    assert zh_figures.translate_html("<p>no figure</p>", CATALOGUE) == "<p>no figure</p>"
