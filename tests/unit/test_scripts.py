"""The scripts package: its modules import one another one way, at any depth of a function (no cycle)."""

from __future__ import annotations

import ast
import graphlib

import pytest

from tests import ROOT

SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def imported_scripts(path) -> set[str]:
    """The modules of ``scripts`` that a file imports, anywhere in it (in a function too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "scripts":
            found |= {alias.name for alias in node.names if (ROOT / "scripts" / f"{alias.name}.py").exists()}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scripts."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("scripts.")}
    return found - {path.stem}


def test_imported_scripts_reads_every_form_of_import(tmp_path):
    path = tmp_path / "example.py"
    path.write_text(
        "from scripts import zh_sync, ROOT\nimport scripts.myst\n"
        "def f():\n    from scripts.zh_book import site_config\n"
    )
    assert imported_scripts(path) == {"zh_sync", "myst", "zh_book"}


def test_the_scripts_import_one_another_without_a_cycle():
    graph = {path.stem: imported_scripts(path) for path in SCRIPTS}
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"scripts/ has an import cycle (a function-level import counts too): {error.args[1]}")
    assert order.index("documents") < order.index("zh_figures") < order.index("zh_sync")
