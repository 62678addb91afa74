"""The tests' own layout: what two test files share sits in a helper module, never in one of the two.

A test file that imports another loads that file with it (its imports, its module-level skips) and breaks
when the other's tests are moved or split; so shared constants and functions live in helper modules not named
``test_*.py`` (such as tests/built_site.py, tests/port_cases.py, tests/browser/harness_page.py), and shared
fixtures in a conftest.py."""

from __future__ import annotations

import ast

import pytest

from tests import ROOT

TEST_FILES = sorted((ROOT / "tests").rglob("test_*.py"))


def _is_test_module(name: str) -> bool:
    """Whether the dotted ``name`` (absolute in ``tests``, or relative) is a test module or inside one."""
    return name.startswith(("tests.", ".")) and any(part.startswith("test_") for part in name.split("."))


def imported_test_modules(source: str) -> list[str]:
    """The test modules (``tests.….test_*``) that ``source`` imports, at module level or inside a function."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):  # each name may be a module: from tests.unit import test_x
            module = "." * node.level + (node.module or "")
            within = [f"{module.rstrip('.')}.{alias.name}" for alias in node.names]
            names = [module] if _is_test_module(module) else within
        else:
            continue
        found += [name for name in names if _is_test_module(name)]
    return found


@pytest.mark.parametrize(
    "source",
    [
        "from tests.unit.test_benchmarks import run",
        "import tests.book.test_site",
        "from tests.browser import test_frontend",
        "from .test_site import PAGES",
        "def f():\n    from tests.unit.test_realheads import encoder\n",
    ],
    ids=["from", "import", "from-package", "relative", "in-a-function"],
)
def test_the_check_sees_every_way_to_import_a_test_module(source):
    assert imported_test_modules(source)


def test_the_check_lets_a_test_import_the_helpers():
    source = "from tests import ROOT\nfrom tests.built_site import SITE\nimport tests.unit.transformers_calls"
    assert imported_test_modules(source) == []


def test_no_test_file_imports_another():
    assert len(TEST_FILES) > 50
    offenders = {  # a test file's path: the test modules it imports
        path.relative_to(ROOT).as_posix(): imported
        for path in TEST_FILES
        if (imported := imported_test_modules(path.read_text(encoding="utf-8")))
    }
    assert not offenders, f"move what they share to a helper module or a conftest.py: {offenders}"
