"""_ext/page_assets.py: the figures' scripts stay on the pages with a figure's root and leave the others."""

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
