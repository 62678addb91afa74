"""The package as a whole: `import mha` is the small attention core, and the layers import downwards."""

import ast
import importlib.metadata
import inspect
import io
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import mha
from tests import ROOT

PACKAGE = Path(mha.__file__).parent
CORE_MODULES = sorted(p for p in PACKAGE.glob("*.py"))
LAYERS = ("compute", "pretrained", "costs", "figures", "widgets", "chapters")


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


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_is_a_documented_subpackage(layer):
    init = PACKAGE / layer / "__init__.py"
    assert init.is_file(), f"mha.{layer} is not a package"
    assert ast.get_docstring(ast.parse(init.read_text())), f"mha.{layer} has no docstring"


# -- what `pip install mha` needs, and what the extra `book` adds --------------------------------------------

TORCH_ONLY = ("compute", "costs", "linear")  # with the core: what `pip install mha` brings


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
            for top in {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names) - {"mha"}:
                assert top in distributions, f"{path}: imports {top}, which no installed package provides"
                found.update(canonicalize_name(d) for d in distributions[top])
    return found


def requirement_names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def test_pip_install_mha_needs_torch_only_and_the_extra_book_the_rest():
    """pyproject's dependencies are PyTorch alone, which is all the core and the torch-only layers import;
    every other layer imports only what the extra ``book`` adds (import-linter's contracts keep the core from
    importing the layers above it, `make lint`)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = {name: requirement_names(reqs) for name, reqs in project["optional-dependencies"].items()}
    assert requirement_names(project["dependencies"]) == {"torch"}
    assert set(extras) == {"book", "transformers"} and extras["transformers"] == {"transformers"}
    torch_only = [*CORE_MODULES, *(p for layer in TORCH_ONLY for p in (PACKAGE / layer).glob("*.py"))]
    assert third_party_imports(torch_only) == {"torch"}
    for layer in set(LAYERS) - set(TORCH_ONLY):
        imported = third_party_imports((PACKAGE / layer).glob("*.py"))
        assert imported <= {"torch"} | extras["book"], f"mha.{layer} imports {imported - extras['book']}"
    used = third_party_imports(p for layer in LAYERS for p in (PACKAGE / layer).glob("*.py"))
    widgets = {"ipywidgets"}  # what anywidget's widgets need in a notebook, though mha imports it not itself
    assert extras["book"] - used == widgets, "the extra book lists what no layer imports"
