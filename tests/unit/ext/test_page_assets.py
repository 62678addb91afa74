"""_ext/page_assets.py: the figures' scripts go onto every page in load order, each under the prefix, and off
a page without a figure root; the book's own static files are copied at the end of every HTML build."""

from types import SimpleNamespace

import pytest

from _ext import page_assets
from book.widgets.frontend import SCRIPTS


def app(prefix="", **builder):
    added = []
    config = SimpleNamespace(mha_scripts_prefix=prefix, html_static_path=["book/static", "/abs/theme"])
    return SimpleNamespace(config=config, add_js_file=added.append, added=added, **builder)


@pytest.mark.parametrize("prefix", ["", "../../_static/"])
def test_the_scripts_are_added_in_load_order_under_the_prefix(prefix):
    sphinx = app(prefix)
    page_assets.add_figure_scripts(sphinx)
    assert sphinx.added == [prefix + name for name in SCRIPTS]


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        ('<div class="mha-explorer">', True),
        ("<div class='cell mha-stages'>", True),
        ('<div class="not-mha-x"><p>mha-explorer</p>', False),  # only a class that starts mha- is a figure
        ("", False),
    ],
)
def test_a_page_without_a_figure_root_loads_none_of_the_figure_scripts(body, kept):
    prefix = "../_static/"
    figure = [SimpleNamespace(filename=f"_static/{prefix}{name}") for name in SCRIPTS[:2]]
    others = ["_static/jquery.js", SimpleNamespace(filename="_static/sphinx_highlight.js"), None]
    context = {"body": body, "script_files": [others[0], *figure, *others[1:]]}
    page_assets.drop_unused_figure_scripts(app(prefix), "page", "page.html", context, None)
    assert context["script_files"] == ([others[0], *figure, *others[1:]] if kept else others)


def test_the_relative_static_paths_are_copied_after_an_html_build_only(monkeypatch):
    copied = []
    monkeypatch.setattr(
        page_assets, "copy_asset", lambda source, destination: copied.append((source, destination))
    )
    html = app(builder=SimpleNamespace(format="html"), confdir="/book", outdir="/out")
    page_assets.copy_static_files(html, None)
    assert copied == [("/book/book/static", "/out/_static")]  # not the extensions' absolute entries
    copied.clear()
    page_assets.copy_static_files(html, RuntimeError("the build failed"))
    page_assets.copy_static_files(
        app(builder=SimpleNamespace(format="latex"), confdir="/b", outdir="/o"), None
    )
    assert copied == []
