"""_ext/figure_roots.py: an interactive figure's root element, found as mha writes it and nothing else."""

from __future__ import annotations

import json

from _ext.figure_roots import figure_roots
from book.widgets.frontend import ROOT_CLASSES, inline_json, root_html

DATA = {"settings": {"sentence": "a </script> b"}, "n": [1, 2]}


def test_a_root_as_mha_writes_it_gives_its_class_and_its_data():
    html = root_html(ROOT_CLASSES["mountStepper"], DATA, fallback="<p>no scripts</p>")
    (root,) = figure_roots(html)
    assert root.cls == "mha-stepper" and root.data == DATA
    assert html[root.start : root.end] == root.json == inline_json(DATA), "where its JSON is, as written"
    assert "</" not in root.json


def test_every_root_of_a_page_in_order_with_extra_classes_attributes_and_space():
    viewer = '<div class="mha-viewer wide" id="v">\n  <script type="application/json">{"b": 2}</script></div>'
    page = f"<section><p>Text.</p>{root_html('mha-explorer', {'a': 1})}{viewer}</section>"
    found = [(r.cls, r.data) for r in figure_roots(page)]
    assert found == [("mha-explorer", {"a": 1}), ("mha-viewer", {"b": 2})]


def test_what_is_not_a_root_is_not_found():
    others = [
        '<code class="mha-token">x</code>',  # a class of the book's, on an element without data
        '<div class="mha-shapes"><table></table></div>',
        f'<section><script type="application/json">{json.dumps(DATA)}</script></section>',  # data, no root
        f'<div class="cell mha-explorer"><script type="application/json">{json.dumps(DATA)}</script></div>',
        '<div class="mha-explorer"><script src="core.js"></script></div>',
        "<p>A page that says class=&quot;mha-explorer&quot;.</p>",
    ]
    assert [figure_roots(html) for html in others] == [[]] * len(others)
