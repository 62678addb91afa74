"""The tests' own layout: what two test files share sits in a helper module, never in one of the two.

A test file that imports another loads that file with it (its imports, its module-level skips) and breaks
when the other's tests are moved or split; so shared constants and functions live in helper modules not named
``test_*.py`` (such as tests/built_site.py, tests/port_cases.py, tests/browser/harness_page.py), and shared
fixtures in a conftest.py."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

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


# -- the repository's layout, as README.md and CONTRIBUTING.md state it --------------------------------------

TRACKED = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
TRACKED = TRACKED.stdout.split()


def code_spans(markdown: str, *, in_table_column: int | None = None) -> list[str]:
    """The inline code of ``markdown`` (markdown-it's tokens), or only that of a table's column."""
    spans, column = [], None
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "tr_open":
            column = -1
        elif token.type in ("th_open", "td_open"):
            column += 1
        elif token.type == "inline" and (in_table_column is None or column == in_table_column):
            spans += [child.content for child in token.children or [] if child.type == "code_inline"]
    return spans


def readme_layout() -> list[str]:
    """The paths of the first column of README.md's section "Layout"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return code_spans(section, in_table_column=0)


def test_the_readme_layout_table_names_every_folder_and_only_what_exists():
    paths = readme_layout()
    for path in paths:
        assert list(ROOT.glob(path.rstrip("/"))), f"README.md's layout names {path}, which does not exist"
    named = {path.rstrip("/") for path in paths}
    folders = {name.split("/", 1)[0] for name in TRACKED if "/" in name and not name.startswith(".")}
    inits = [*ROOT.glob("mha/*/__init__.py"), *ROOT.glob("book/*/__init__.py")]
    wanted = folders | {p.parent.relative_to(ROOT).as_posix() for p in inits}
    left_out = {w for w in wanted if not any(n == w or n.startswith(f"{w}/") for n in named)}
    assert not left_out, f"README.md's layout leaves out {sorted(left_out)}"


def test_the_check_reads_code_spans_by_column():
    table = "| path | what |\n| --- | --- |\n| `a/` and `b.py` | see `c/` |\n"
    assert code_spans(table, in_table_column=0) == ["a/", "b.py"]
    assert code_spans(table) == ["a/", "b.py", "c/"]


FILE_NAME = re.compile(r"[\w./-]+\.(py|md|yml|toml|js|css|json|ipynb|txt|cfg|j2)")


def test_contributing_names_only_files_that_exist():
    """Every file CONTRIBUTING.md and README.md name in code exists: a path from the repository's root (or,
    for page code, from a static folder), or a file name that some file of the repository has."""
    static = [root.as_posix() for root in ROOT.glob("book/*/static")]
    names = {Path(name).name for name in TRACKED}
    for document in ("CONTRIBUTING.md", "README.md"):
        for span in code_spans((ROOT / document).read_text(encoding="utf-8")):
            candidate = span.split("::", 1)[0].split(" ", 1)[0]
            if not FILE_NAME.fullmatch(candidate) or candidate.startswith(("_build/", "_static/", "../")):
                continue
            if "/" in candidate:
                found = (ROOT / candidate).exists() or any(Path(s, candidate).exists() for s in static)
            else:
                found = candidate in names
            assert found, f"{document} names {span}, which is not in the repository"
