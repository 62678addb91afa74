"""The student edition: the same sources built without the exercise solutions (`make book-students`).

Run as a script, it writes a copy of _config.yml with sphinx-exercise's ``hide_solutions: True`` (every
``{solution}`` directive is left out), a title that says "student edition", and this module as a Sphinx
extension, then builds the book with Jupyter Book's own warnings-as-errors flags into ``<out>/html``
(default _build/students/html; Jupyter Book's work files stay in ``<out>/_build``).

As a Sphinx extension it leaves out the folded code cells that check a solution, which the chapters start
with the comment ``# Check of the solution`` (CONTRIBUTING.md): they print what a solution would say.

Usage: python scripts/student_edition.py [--out _build/students]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHECK_PREFIX = "# Check of the solution"
BOOK_FLAGS = ["-W", "-n", "--keep-going"]


def _drop_solution_checks(app, doctree) -> None:
    from docutils import nodes

    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code":
            continue
        source = next(cell.findall(nodes.literal_block), None)
        if source is not None and source.astext().lstrip().startswith(CHECK_PREFIX):
            cell.parent.remove(cell)


def setup(app):
    app.connect("doctree-read", _drop_solution_checks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def write_config(out: Path) -> Path:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    config["title"] = f"{config['title']} (student edition)"
    sphinx = config.setdefault("sphinx", {})
    sphinx_config = sphinx.setdefault("config", {})
    sphinx_config["hide_solutions"] = True
    # _config.yml lists every extension (sphinx.config.extensions), which takes precedence over
    # local_extensions' own list: add this module to both, local_extensions puts its folder on sys.path.
    sphinx_config["extensions"] = [*sphinx_config.get("extensions", []), "student_edition"]
    sphinx.setdefault("local_extensions", {})["student_edition"] = str(Path(__file__).resolve().parent)
    path = out / "_config.yml"
    path.write_text(
        "# Written by scripts/student_edition.py from _config.yml: edit that file, not this one.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    )
    return path


def build(out: Path) -> Path:
    """Build the student edition into ``out / "html"``; return that folder."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    config = write_config(out)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(ROOT), "--config", str(config), "--path-output", str(out)]
    subprocess.run([*command, *BOOK_FLAGS], check=True)
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)
    os.replace(out / "_build" / "html", html)
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "students")
    args = parser.parse_args(argv)
    html = build(args.out)
    print(f"Open the student edition: {html}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
