"""The package as a whole: its public API and what importing it does."""

import inspect
import subprocess
import sys

import mha


def test_every_public_name_exists_and_is_documented():
    for name in mha.__all__:
        obj = getattr(mha, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert inspect.getdoc(obj), f"mha.{name} has no docstring"


def test_import_has_no_side_effects():
    """`import mha` prints nothing and does not import pyplot (which would pick a matplotlib backend)."""
    code = "import sys, mha; print('matplotlib.pyplot' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout == "False\n"
    assert result.stderr == ""
