"""The two packages as wholes: `mha`, the library (a small core, layers, PyTorch alone), and `book`."""

import ast
import importlib.metadata
import inspect
import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import book
import mha
from tests import ROOT

PACKAGE = Path(mha.__file__).parent
CORE_MODULES = sorted(p for p in PACKAGE.glob("*.py"))
LAYERS = ("compute", "pretrained", "costs", "linear")  # mha's subpackages
BOOK = Path(book.__file__).parent
BOOK_LAYERS = ("chapters", "minilm", "smollm2", "decoder", "widgets", "figures", "compute")


def test_the_core_exports_few_documented_names():
    assert len(mha.__all__) <= 10  # the core's budget (CONTRIBUTING.md)
    assert {"scaled_dot_product_attention", "MultiHeadAttention", "causal_mask", "padding_mask"} <= set(
        mha.__all__
    )
    for name in mha.__all__:
        obj = getattr(mha, name)
        assert inspect.getdoc(obj), f"mha.{name} has no docstring"


def test_import_mha_loads_torch_and_nothing_for_plots_or_widgets():
    """`import mha` prints nothing and imports no plotting, widget or notebook package."""
    heavy = (
        "matplotlib",
        "ipywidgets",
        "anywidget",
        "PIL",
        "IPython",
        "numpy.typing",
        "safetensors",
        "transformers",
    )
    code = f"import sys, mha; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"
    assert result.stderr == ""


def code_lines(source: str) -> int:
    """Lines holding code: neither blank, nor only a comment, nor part of a docstring (a string that opens a
    module, class or function body). A statement spread over several lines counts each of them."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        scope = isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        first = node.body[0] if scope and node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            docstrings.update(range(first.lineno, first.end_lineno + 1))
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    lines = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in layout | {tokenize.ENDMARKER}:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def test_code_lines_skip_docstrings_comments_and_blank_lines():
    source = '''"""A module docstring,
    on two lines."""

    # a comment
    def f(x):  # a comment after code
        """A docstring."""
        return (x +
                1)
    '''
    assert code_lines(inspect.cleandoc(source)) == 3  # def, and the two lines of the return


def test_the_core_stays_small():
    """The core's budget (CONTRIBUTING.md): at most 12 files and 920 lines of code in all (docstrings,
    comments and blank lines not counted), no file over 450 lines (everything counted), and the module of
    ``MultiHeadAttention`` at most 300. What it may import is import-linter's contract in pyproject.toml,
    which `make lint` runs."""
    sources = {p.name: p.read_text() for p in CORE_MODULES}
    assert len(sources) <= 12, sorted(sources)
    code = {name: code_lines(source) for name, source in sources.items()}
    assert sum(code.values()) <= 920, code
    lines = {name: len(source.splitlines()) for name, source in sources.items()}
    assert max(lines.values()) <= 450, lines
    assert lines[Path(inspect.getfile(mha.MultiHeadAttention)).name] <= 300, lines


def functions(tree: ast.AST) -> list[ast.FunctionDef]:
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_no_function_of_the_core_is_longer_than_a_screen():
    """At most 40 code lines per function or method of the core (its signature counted), so each reads in
    one screen; ``MultiHeadAttention.forward``, the 2017 layer, among them."""
    long = {}
    for path in CORE_MODULES:
        source = path.read_text()
        for node in functions(ast.parse(source)):
            body = "\n".join(source.splitlines()[node.lineno - 1 : node.end_lineno])
            if (n := code_lines(inspect.cleandoc("\n" + body) if body[:1] == " " else body)) > 40:
                long[f"{path.name}:{node.name}"] = n
    assert not long, long


def branches_on_options(cls: type) -> list[str]:
    """The ``if`` statements and conditional expressions (``a if c else b``) of a class whose test reads one
    of its own attributes (``self.…``): where the class branches on how it was built."""
    source = inspect.getsource(cls)
    found = []
    for node in ast.walk(ast.parse(inspect.cleandoc(source) if source[:1] == " " else source)):
        if isinstance(node, (ast.If, ast.IfExp)) and any(
            isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
            for n in ast.walk(node.test)
        ):
            found.append(ast.unparse(node.test))
    return found


def test_the_attention_layer_branches_on_few_of_its_options():
    """Each later option is a part the forward calls whatever the layer (CONTRIBUTING.md, "Adding an
    option"), not an ``if`` on an attribute: at most 8 such branches in ``MultiHeadAttention`` (14 when its
    options were keywords), and the forward reads the 2017 layer's steps in order."""
    assert len(branches_on_options(mha.MultiHeadAttention)) <= 8, branches_on_options(mha.MultiHeadAttention)
    forward = inspect.getsource(mha.MultiHeadAttention.forward)
    steps = ["self.W_q(query)", "self.W_k(key)", "self.W_v(value)", "split_heads(", "self.positions(",
             "grow(cache", "q @ k.transpose", "masked_fill(~mask", "self.softmax(", "merge_heads(",
             "self.W_o("]  # fmt: skip
    places = [forward.index(step) for step in steps]
    assert places == sorted(places), steps


def test_mha_is_the_library_and_nothing_in_it_is_named_after_a_chapter():
    """mha's subpackages are its layers (no figures, widgets or chapter material: they are `book`'s), and no
    module of it is named after a chapter of the book or a year."""
    assert {p.parent.name for p in PACKAGE.glob("*/__init__.py")} == set(LAYERS)
    assert {p.parent.name for p in BOOK.glob("*/__init__.py")} == set(BOOK_LAYERS)
    chapters = {p.stem for p in (ROOT / "chapters").glob("*.ipynb")}
    for path in PACKAGE.rglob("*.py"):
        assert path.stem not in chapters and not re.search(r"(19|20)\d\d", path.stem), path


SUBPACKAGES = [*(f"mha.{n}" for n in LAYERS), "book", *(f"book.{n}" for n in BOOK_LAYERS)]


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_layer_is_a_documented_subpackage(package):
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    assert init.is_file(), f"{package} is not a package"
    assert ast.get_docstring(ast.parse(init.read_text())), f"{package} has no docstring"


# -- what `pip install mha` needs, what its extras add, and what `book` needs --------------------------------


def third_party_imports(paths) -> set[str]:
    """The distributions whose modules ``paths`` import (at the top or inside a function), by name."""
    distributions = importlib.metadata.packages_distributions()
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for top in {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names) - {"mha", "book"}:
                assert top in distributions, f"{path}: imports {top}, which no installed package provides"
                found.update(canonicalize_name(d) for d in distributions[top])
    return found


def requirement_names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


MHA_PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = {name: requirement_names(reqs) for name, reqs in MHA_PROJECT["optional-dependencies"].items()}


def test_pip_install_mha_needs_torch_only_and_each_module_names_what_it_needs_beyond():
    """pyproject's dependencies are PyTorch alone. A module of mha that imports another package (at the top or
    in a function) names it, and the extra that brings it, in its docstring's first 3,000 characters; every
    package of an extra is imported by some module (transformers excepted: from_transformers is handed a
    transformers model and never imports the library)."""
    assert requirement_names(MHA_PROJECT["dependencies"]) == {"torch"}
    assert set(EXTRAS) == {"pretrained", "transformers"} and EXTRAS["transformers"] == {"transformers"}
    used = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        beyond = third_party_imports([path]) - {"torch"}
        used |= beyond
        head = (ast.get_docstring(ast.parse(path.read_text())) or "")[:3000]
        for name in beyond:
            extra = next((e for e, names in EXTRAS.items() if name in names), None)
            assert extra, f"{path.relative_to(ROOT)} imports {name}, which no extra of pyproject.toml brings"
            assert f"``{name}``" in head and f"mha[{extra}]" in head, (
                f"{path.relative_to(ROOT)}: its docstring must name ``{name}`` and the extra mha[{extra}]"
            )
    assert used == EXTRAS["pretrained"], "the extra pretrained lists what no module imports"


def torch_modules() -> set[str]:
    """The top-level modules of PyTorch and of what it requires, recursively (what a fresh environment with
    `pip install torch` alone holds)."""
    names, todo = set(), ["torch"]
    while todo:
        name = canonicalize_name(todo.pop())
        if name in names:
            continue
        names.add(name)
        for line in importlib.metadata.requires(name) or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return {top for top, dists in importlib.metadata.packages_distributions().items()
            if any(canonicalize_name(d) in names for d in dists)}  # fmt: skip


IMPORT_EACH_MODULE = """
import importlib, importlib.abc, json, pkgutil, sys

allowed = set(json.loads(sys.argv[1]))


class TorchAlone(importlib.abc.MetaPathFinder):  # as if only PyTorch and its requirements were installed
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top in allowed:
            return None
        raise ModuleNotFoundError(f"No module named {top!r}", name=top)


sys.meta_path.insert(0, TorchAlone())
import mha

missing = {}
for module in pkgutil.walk_packages(mha.__path__, "mha."):
    try:
        importlib.import_module(module.name)
    except ModuleNotFoundError as error:
        missing[module.name] = error.name
print(json.dumps(missing))
"""


def test_with_torch_alone_every_module_of_mha_imports_or_fails_naming_its_package():
    """In an interpreter that finds no package but PyTorch and its requirements, `import mha` and every module
    of it imports, except a module that imports an extra's package at its top, which raises
    ModuleNotFoundError naming that package (and names it in its docstring: the test above)."""
    allowed = sorted(torch_modules() | {"mha"})
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_MODULE, json.dumps(allowed)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    missing = json.loads(result.stdout)
    assert missing == {"mha.pretrained.smollm2": "gguf"}, missing
    assert "gguf" in EXTRAS["pretrained"]


def test_the_books_package_declares_what_it_imports():
    """book/pyproject.toml's dependencies are what the book's modules import beyond mha and PyTorch, and what
    mha[pretrained] brings (mha is not on PyPI, so book cannot require it by name), and ipywidgets, which
    anywidget's widgets need in a notebook though no module imports it."""
    project = tomllib.loads((BOOK / "pyproject.toml").read_text())["project"]
    declared = requirement_names(project["dependencies"])
    imported = third_party_imports(BOOK.rglob("*.py")) - {"torch"}
    assert imported <= declared, f"book imports {imported - declared}, not in book/pyproject.toml"
    assert declared == imported | EXTRAS["pretrained"] | {"ipywidgets"}, declared - imported
