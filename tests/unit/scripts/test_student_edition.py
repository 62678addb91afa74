"""scripts/student_edition.py's configuration of the edition (its builds: tests/book/test_editions.py)."""

from __future__ import annotations

import yaml

from scripts import myst, student_edition
from tests import ROOT


def test_the_editions_configuration_loads_the_extension_that_drops_solution_checks():
    config = student_edition.student_config(yaml.safe_load((ROOT / "_config.yml").read_text()))
    sphinx = config["sphinx"]
    extension = student_edition.EXTENSION
    assert sphinx["config"]["extensions"][-1] == extension == "removed_cells"
    assert sphinx["config"]["mha_removed_tags"] == [myst.SOLUTION_CHECK]
    path = sphinx["local_extensions"][extension]
    assert path == str(ROOT / "_ext") and (ROOT / "_ext" / f"{extension}.py").is_file()
    assert all(p.startswith(str(ROOT)) for p in sphinx["local_extensions"].values()), "paths from anywhere"
    assert sphinx["config"]["hide_solutions"] is True
    assert config["title"].endswith(" (student edition)") and not config["launch_buttons"]["colab_url"]


def test_the_chinese_editions_title_is_chinese():
    config = student_edition.student_config({"title": "书", "sphinx": {"config": {}}}, "zh")
    assert config["title"] != "书" and "student" not in config["title"]
    assert config["sphinx"]["local_extensions"] == {"removed_cells": str(ROOT / "_ext")}
