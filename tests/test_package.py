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
    assert len(mha.__all__) <= 10
    assert {"scaled_dot_product_attention", "MultiHeadAttention", "causal_mask", "padding_mask"} <= set(
        mha.__all__
    )
    for name in mha.__all__:
        obj = getattr(mha, name)
        assert inspect.getdoc(obj), f"mha.{name} has no docstring"


def test_import_mha_loads_torch_and_nothing_for_plots_or_widgets():
    """`import mha` prints nothing and imports no plotting, widget or notebook package."""
    heavy = ("matplotlib", "ipywidgets", "anywidget", "PIL", "IPython", "numpy.typing", "safetensors")
    code = f"import sys, mha; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"
    assert result.stderr == ""


def test_the_core_is_small_and_imports_only_torch_and_itself():
    assert [p.name for p in CORE_MODULES] == [
        "__init__.py",
        "_checks.py",
        "attention.py",
        "masks.py",
        "multihead.py",
        "positional.py",
    ]
    assert sum(len(p.read_text().splitlines()) for p in CORE_MODULES) < 800
    for path in CORE_MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                top = name.split(".")[0]
                assert top in {"torch", "mha", "__future__", "math", "collections", "typing"}, (
                    f"{path.name} imports {name}"
                )
                assert not name.startswith(tuple(f"mha.{layer}" for layer in LAYERS)), f"{path.name}: {name}"


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_is_a_documented_subpackage(layer):
    init = PACKAGE / layer / "__init__.py"
    assert init.is_file(), f"mha.{layer} is not a package"
    assert ast.get_docstring(ast.parse(init.read_text())), f"mha.{layer} has no docstring"


def test_the_layer_contract_fails_on_a_wrong_import(tmp_path):
    """`lint-imports` (run by `make lint`) passes, and fails when a lower layer imports a higher one."""
    lint = Path(sys.executable).with_name("lint-imports")
    root = Path(__file__).resolve().parents[1]
    ok = subprocess.run([lint], cwd=root, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    copy = tmp_path / "project"
    copy.mkdir()
    (copy / "pyproject.toml").write_text((root / "pyproject.toml").read_text())
    subprocess.run(["cp", "-r", str(PACKAGE), str(copy / "mha")], check=True)
    wrong = copy / "mha" / "compute" / "stages.py"
    wrong.write_text(
        wrong.read_text() + "\nfrom mha.figures import plot_heads  # a computation importing a figure\n"
    )
    broken = subprocess.run(
        [lint],
        cwd=copy,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"},
    )
    assert broken.returncode != 0
    assert "mha.compute.stages -> mha.figures" in broken.stdout
