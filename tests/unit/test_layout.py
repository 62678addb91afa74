"""The tests' own layout: the unit tests mirror the code; what two test files share sits in a helper.

A test file that imports another loads that file with it (its imports, its module-level skips) and breaks
when the other's tests are moved or split; so shared constants and functions live in helper modules not named
``test_*.py`` (such as tests/built_site.py, tests/port_cases.py, tests/browser/harness_page.py), and shared
fixtures in a conftest.py."""

from __future__ import annotations

import ast
import json
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
        "def f():\n    from tests.unit.book.minilm.test_page import LABELS\n",
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


TOP_FOLDERS = tuple(sorted({f"{name.split('/', 1)[0]}/" for name in TRACKED if "/" in name}))


def markdown_sources() -> dict[str, str]:
    """The Markdown of the contributors' pages, the book's pages and every Markdown cell of the chapters."""
    sources = {name: (ROOT / name).read_text(encoding="utf-8") for name in TRACKED if name.endswith(".md")}
    for name in TRACKED:
        if name.endswith(".ipynb"):
            cells = json.loads((ROOT / name).read_text(encoding="utf-8"))["cells"]
            sources[name] = "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return sources


def test_the_docs_name_only_files_that_exist():
    """Every file a page names in code exists: in any page or chapter, a path that starts with one of the
    repository's folders (``book/…``, ``tests/…``; page code also from a static folder); and in the
    contributors' pages (CONTRIBUTING.md, README.md) any path, and a bare file name that some file has."""
    contributors = ("CONTRIBUTING.md", "README.md")
    static = [root.as_posix() for root in ROOT.glob("book/*/static")]
    names = {Path(name).name for name in TRACKED}
    for document, source in markdown_sources().items():
        for span in code_spans(source):
            candidate = span.split("::", 1)[0].split(" ", 1)[0]
            if not FILE_NAME.fullmatch(candidate) or candidate.startswith(("_build/", "_static/", "../")):
                continue
            if candidate.startswith(TOP_FOLDERS) or (
                "/" in candidate and document in ("CONTRIBUTING.md", "README.md")
            ):
                found = (ROOT / candidate).exists() or any(Path(s, candidate).exists() for s in static)
            elif document in contributors and "/" not in candidate:
                found = candidate in names
            else:
                continue
            assert found, f"{document} names {span}, which is not in the repository"


# -- the unit tests mirror the code ------------------------------------------------------------------------
#
# Each module with behaviour under mha/, book/, scripts/, _ext/ and benchmarks/ has its unit tests in one file
# named after it, in the folder that mirrors its package: mha/costs/counts.py in
# tests/unit/mha/costs/test_counts.py, _ext/page_assets.py in tests/unit/ext/test_page_assets.py. Module names
# repeat across packages (book/compute/explorer.py, book/widgets/explorer.py), the folders tell them apart.

PACKAGES = ("mha", "book", "scripts", "_ext", "benchmarks")
UNIT = ROOT / "tests" / "unit"

# The test files at tests/unit's top level, about several modules at once or about the tests' own helpers.
WHOLE = {
    "test_package.py": "the package as a whole: its public names, its layers' imports",
    "test_layout.py": "the tests' own layout (this file)",
    "test_figure_style.py": "every figure of book.figures, book.chapters and book.decoder, against _style",
    "test_contrast.py": "tests/contrast.py, a helper of the browser tests",
}

# Modules without behaviour of their own, so without a test file. (A package's __init__.py only gathers its
# modules' names: test_a_package_init_defines_nothing checks that it defines nothing.)
NO_BEHAVIOUR = {
    "book/figures/_style.py": "two text sizes, constants that test_figure_style.py holds every figure to",
    "book/figures/_pyplot.py": "pyplot's figure and subplots, imported on first use: wrappers, no logic",
}

# Not mirrored yet (the list only shrinks): the unit test files still to merge into their module's file, and
# the modules without a test file of their name, with where their behaviour is tested today.
UNPLACED_TESTS: dict[str, str] = {}  # every unit test file is placed
UNMIRRORED = {
    "book/chapters/train_heads.py": "none: the script the chapters' training runs",
    "scripts/build_pdf.py": "tests/book/test_editions.py",
    "scripts/build_slides.py": "tests/unit/scripts/test_tag_slides.py, tests/book/test_editions.py",
    "scripts/lab.py": "tests/book/test_editions.py, tests/browser/test_jupyterlab.py",
    "_ext/accessibility.py": "axe-core's scan of every built page (tests/browser/test_site_pages.py)",
    "_ext/languages.py": "the built site's tests (tests/book/test_site_zh.py)",
    "benchmarks/bench_decoder_port.py": "make bench",
    "benchmarks/bench_jupyterlab.py": "tests/browser/test_jupyterlab.py",
    "benchmarks/bench_page_decoder.py": "make bench",
    "benchmarks/bench_page_minilm.py": "tests/browser/test_site_minilm.py",
    "benchmarks/bench_page_smollm2.py": "tests/browser/test_site_smollm2_run.py",
    "benchmarks/bench_pretrained.py": "make bench",
    "benchmarks/bench_smollm2.py": "make bench",
    "benchmarks/bench_static_explorer.py": "make bench",
    "benchmarks/bench_widgets.py": "make bench",
}

MODULES = sorted(
    path.relative_to(ROOT).as_posix()
    for package in PACKAGES
    for path in (ROOT / package).rglob("*.py")
    if "__pycache__" not in path.parts
)


def test_file_of(module: str) -> str:
    """The unit test file of ``module`` (a path from the repository's root), from tests/unit/."""
    *folders, name = module.split("/")
    return "/".join([folders[0].lstrip("_"), *folders[1:], f"test_{name}"] if folders else [f"test_{name}"])


test_file_of.__test__ = False  # a helper of the checks below, not a test


@pytest.mark.parametrize(
    "module, test_file",
    [
        ("mha/multihead.py", "mha/test_multihead.py"),
        ("mha/costs/counts.py", "mha/costs/test_counts.py"),
        ("_ext/page_assets.py", "ext/test_page_assets.py"),
        ("benchmarks/_timing.py", "benchmarks/test__timing.py"),
    ],
)
def test_a_module_s_test_file_mirrors_its_path(module, test_file):
    assert test_file_of(module) == test_file


def test_a_package_init_defines_nothing():
    inits = [module for module in MODULES if module.endswith("/__init__.py")]
    assert len(inits) > 10
    defining = [
        module
        for module in inits
        for node in ast.parse((ROOT / module).read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    assert not defining, (
        f"a package's __init__.py only gathers names; give these a module and a test: {defining}"
    )


def test_every_module_with_behaviour_has_its_test_file():
    exempt = NO_BEHAVIOUR.keys() | UNMIRRORED.keys()
    assert exempt <= set(MODULES), f"listed, but no such module: {sorted(exempt - set(MODULES))}"
    without = [
        module
        for module in MODULES
        if not module.endswith("/__init__.py") and not (UNIT / test_file_of(module)).exists()
    ]
    assert sorted(set(without) - exempt) == [], "write tests/unit/<its path>/test_<its name>.py"
    mirrored = sorted(set(UNMIRRORED) - set(without))
    assert not mirrored, f"these have their test file now: take them off UNMIRRORED: {mirrored}"


def test_every_unit_test_file_is_named_after_a_module():
    files = {path.relative_to(UNIT).as_posix() for path in UNIT.rglob("test_*.py")}
    top = WHOLE.keys() | UNPLACED_TESTS.keys()
    assert top <= files, f"listed, but no such test file: {sorted(top - files)}"
    named = {test_file_of(module) for module in MODULES}
    stray = sorted(files - named - top)
    assert not stray, f"name each after the module it tests, in the folder that mirrors its package: {stray}"


# -- a port is tested equal to its Python twin in the twin's test file -------------------------------------

PORT_FILES = sorted(ROOT.glob("book/*/static/ports/*.js"))
UNIT_TEST_FILE = re.compile(r"tests/unit/(?:\w+/)*test_\w+\.py")


def test_every_port_names_its_test_file_and_that_file_tests_it():
    """A port's header (its first comment) names its unit test file, the test file of its Python twin; the
    file exists and names the port (``ports/<name>.js``), as CONTRIBUTING.md's table of ports says."""
    assert len(PORT_FILES) >= 10
    wrong = {}
    for path in PORT_FILES:
        port = f"ports/{path.name}"
        named = sorted(set(UNIT_TEST_FILE.findall(path.read_text(encoding="utf-8").split("*/", 1)[0])))
        testing = [t for t in named if (ROOT / t).is_file() and port in (ROOT / t).read_text("utf-8")]
        if not named or testing != named:
            wrong[path.relative_to(ROOT).as_posix()] = named
    assert not wrong, f"name, in the port's header, the test file that tests it against its twin: {wrong}"
