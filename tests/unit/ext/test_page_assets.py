"""_ext/page_assets.py: the figures' scripts go onto the pages in load order, under the prefix, stay on the
pages with a figure's root and leave the others; the book's static files are copied after each HTML build."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

from book.widgets.frontend import SCRIPTS, root_html
from tests import ROOT


@pytest.fixture
def page_assets(monkeypatch):
    """The extension, imported as Sphinx imports it: by its own name, with _ext on the path."""
    monkeypatch.syspath_prepend(str(ROOT / "_ext"))
    return importlib.import_module("page_assets")


def _scripts_left(page_assets, body: str, prefix: str = "") -> list[str]:
    app = SimpleNamespace(config=SimpleNamespace(mha_scripts_prefix=prefix))
    theirs = ["_static/jquery.js", "_static/mathjax/tex-chtml.js"]
    context = {"body": body, "script_files": [*theirs, *(f"_static/{prefix}{name}" for name in SCRIPTS)]}
    page_assets.drop_unused_figure_scripts(app, "chapters/x", "page.html", context, None)
    return context["script_files"]


def test_a_page_with_a_figure_keeps_every_script(page_assets):
    body = "<p>Text.</p>" + root_html("mha-explorer", {"settings": {}})
    assert _scripts_left(page_assets, body) == [
        "_static/jquery.js",
        "_static/mathjax/tex-chtml.js",
        *(f"_static/{name}" for name in SCRIPTS),
    ]


@pytest.mark.parametrize(
    "body",
    ["<p>References.</p>", '<p>The class <code class="mha-token">x</code> alone is no figure.</p>'],
)
def test_a_page_without_a_figure_loses_the_figures_scripts_only(page_assets, body):
    assert _scripts_left(page_assets, body) == ["_static/jquery.js", "_static/mathjax/tex-chtml.js"]
    prefix = "../../_static/"  # the Chinese site's: the English copies
    assert _scripts_left(page_assets, body, prefix) == ["_static/jquery.js", "_static/mathjax/tex-chtml.js"]


def _app(prefix="", **builder):
    added = []
    config = SimpleNamespace(mha_scripts_prefix=prefix, html_static_path=["book/static", "/abs/theme"])
    return SimpleNamespace(config=config, add_js_file=added.append, added=added, **builder)


@pytest.mark.parametrize("prefix", ["", "../../_static/"])
def test_the_scripts_are_added_in_load_order_under_the_prefix(page_assets, prefix):
    sphinx = _app(prefix)
    page_assets.add_figure_scripts(sphinx)
    assert sphinx.added == [prefix + name for name in SCRIPTS]


def test_the_relative_static_paths_are_copied_after_an_html_build_only(page_assets, monkeypatch):
    copied = []
    monkeypatch.setattr(
        page_assets, "copy_asset", lambda source, destination: copied.append((source, destination))
    )
    html = _app(builder=SimpleNamespace(format="html"), confdir="/book", outdir="/out")
    page_assets.copy_static_files(html, None)
    assert copied == [("/book/book/static", "/out/_static")]  # not the extensions' absolute entries
    copied.clear()
    page_assets.copy_static_files(html, RuntimeError("the build failed"))
    page_assets.copy_static_files(
        _app(builder=SimpleNamespace(format="latex"), confdir="/b", outdir="/o"), None
    )
    assert copied == []
