"""_ext/minilm_weights.py: the Sphinx extension that writes all-MiniLM-L6-v2's weights into the built site."""

from __future__ import annotations

import yaml

from book.minilm import page as minilm_page
from book.minilm.page import WEIGHTS_FILE
from book.widgets.frontend import SCRIPTS
from tests import ROOT


def test_the_sphinx_extension_writes_the_weights_after_an_html_build(tmp_path, hook_writes):  # conftest.py
    from _ext import minilm_weights

    assert hook_writes(minilm_weights, minilm_page) == [tmp_path / "_static" / WEIGHTS_FILE]


def test_the_book_names_the_extension_and_loads_the_script():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert sphinx["local_extensions"]["minilm_weights"] == "_ext"
    assert "minilm_weights" in sphinx["config"]["extensions"]  # this list replaces Jupyter Book's
    assert (
        "page_assets" in sphinx["config"]["extensions"] and "minilm.js" in SCRIPTS
    )  # page_assets adds SCRIPTS
