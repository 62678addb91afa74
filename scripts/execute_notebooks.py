"""Execute chapter notebooks in place, storing fresh outputs (what `make notebooks` runs).

Usage:
    python -m scripts.execute_notebooks [chapters/NAME.ipynb ...]   # default: every chapter

Each notebook runs top to bottom in a fresh kernel with the chapter folder as working directory, as nbval
runs it in CI, on portable kernels (:data:`PORTABLE`: the kernels every x86 CPU has, one thread, MKL's
reproducible mode), and records them in its metadata (``mha.executed_with``). `make test` then executes
every notebook once more on the test machine's own kernels (AVX2, AVX-512, AMX) and threads and compares the
outputs with the stored ones (nbval): two kinds of kernel giving the same outputs shows that the outputs do
not depend on the CPU (tests/book/test_notebook_outputs.py checks the record, and that no output prints
float round-off). Widget state is not stored: a widget needs a live kernel anyway, and stored state would make
every page of the site load the widget manager from a CDN. The widgets in `mha` also output a static root
of the same figure, with its data inline, which the site's own scripts run in the reader's browser.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

LANGUAGE = "BOOK_FIGURE_LANGUAGE"  # book/figures/_text.py: "zh" draws the static figures' texts in Chinese
CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
# The kernel's environment: every x86 CPU's kernels, one thread, MKL's reproducible results.
PORTABLE = {
    "ATEN_CPU_CAPABILITY": "default",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "MKL_CBWR": "COMPATIBLE",
}


def run(notebook: nbformat.NotebookNode, folder: Path, env: dict[str, str] | None = None) -> float:
    """Run ``notebook`` (in memory, in a fresh kernel working in ``folder``) on portable kernels, with
    ``env`` added to the kernel's environment; return the seconds it took."""
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
        store_widget_state=False,
        record_timing=False,  # no timestamps in cell metadata: re-running changes only what changed
    )
    start = time.perf_counter()
    here = {k: v for k, v in os.environ.items() if k != LANGUAGE}  # English figures unless env says
    client.execute(env={**here, **PORTABLE, **(env or {})})
    return time.perf_counter() - start


def execute(path: Path) -> float:
    """Run ``path`` in place and return the seconds it took."""
    notebook = nbformat.read(path, as_version=4)
    seconds = run(notebook, path.parent)
    notebook.metadata["mha"] = {"executed_with": PORTABLE}
    nbformat.write(notebook, path)
    return seconds


def main(argv: list[str]) -> None:
    paths = [Path(arg) for arg in argv] or sorted(CHAPTERS.glob("*.ipynb"))
    for path in paths:
        print(f"{path}: executed in {execute(path):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
