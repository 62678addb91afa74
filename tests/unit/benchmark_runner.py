"""A benchmark script run as `make bench` runs it, for the tests of its own checks and of its last line
(tests/unit/benchmarks/)."""

from __future__ import annotations

import contextlib
import io
import runpy
import subprocess
import sys
import traceback


def run(benchmark: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.<benchmark> args``, as `make bench` runs it, in this process (torch and
    transformers are imported already): its exit status, what it printed and its error, if any."""
    out, err, code = io.StringIO(), io.StringIO(), 0
    argv, sys.argv = sys.argv, [f"benchmarks/{benchmark}.py", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_module(f"benchmarks.{benchmark}", run_name="__main__")
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except Exception:  # a failed check of the script: the test says what it was
        code, _ = 1, err.write(traceback.format_exc())
    finally:
        sys.argv = argv
    return subprocess.CompletedProcess(sys.argv, code, out.getvalue(), err.getvalue())
