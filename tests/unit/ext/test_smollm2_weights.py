"""_ext/smollm2_weights.py: the Sphinx extension that writes SmolLM2-135M-Instruct's weights into the built
site, for "Run on your own text" (the writing itself: tests/unit/book/smollm2/test_weights.py)."""

from __future__ import annotations

import yaml

from book.smollm2 import weights
from book.smollm2.weights import WEIGHTS_FILE
from book.widgets.frontend import SCRIPTS
from scripts.zh_book import NOT_SHARED
from tests import ROOT


def test_the_sphinx_extension_writes_the_weights_after_an_html_build(tmp_path, hook_writes):  # conftest.py
    from _ext import smollm2_weights

    assert hook_writes(smollm2_weights, weights) == [tmp_path / "_static" / WEIGHTS_FILE]


def test_the_book_names_the_extension_and_the_chinese_site_shares_the_weights():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]
    assert sphinx["local_extensions"]["smollm2_weights"] == "_ext"
    assert "smollm2_weights" in sphinx["config"]["extensions"]
    assert "smollm2_weights" in NOT_SHARED  # written once, by the English build
    assert SCRIPTS.index("smollm2run.js") < SCRIPTS.index("smollm2.js")  # the figure's mount calls it


def test_the_run_spec_states_the_size_and_the_page_s_limit():
    spec = weights.run_spec()
    assert spec["bytes"] == weights.WEIGHTS_BYTES <= weights.BUDGET_BYTES
    assert spec["max_tokens"] == weights.MAX_TOKENS and spec["new_tokens"] >= 20
    assert set(spec["kinds"]) == {"induction", "previous"}
