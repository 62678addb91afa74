"""The package as a whole: `import mha` is the small attention core, and the layers import downwards."""

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import mha

PACKAGE = Path(mha.__file__).parent
CORE_MODULES = sorted(p for p in PACKAGE.glob("*.py"))
LAYERS = ("compute", "pretrained", "costs", "figures", "widgets", "chapters")


def test_the_core_exports_few_documented_names():
    assert len(mha.__all__) <= 12
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


def test_the_core_stays_small():
    """The core's budget (CONTRIBUTING.md): under 1,200 lines in all, no file over 450. What it may import
    is import-linter's contract in pyproject.toml, which `make lint` runs."""
    lines = {p.name: len(p.read_text().splitlines()) for p in CORE_MODULES}
    assert sum(lines.values()) < 1200, lines
    assert max(lines.values()) <= 450, lines


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_is_a_documented_subpackage(layer):
    init = PACKAGE / layer / "__init__.py"
    assert init.is_file(), f"mha.{layer} is not a package"
    assert ast.get_docstring(ast.parse(init.read_text())), f"mha.{layer} has no docstring"
