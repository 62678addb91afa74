"""The student edition: the book with no solution, as a site, notebooks and a PDF (`make book-students`).

A course hands out this edition while its exercises are open. Nothing in it holds a solution:

* **the sources**: the site is built from copies of the chapters (``<out>/source``, the committed notebooks
  are never changed) from which every ``{solution}`` directive and every cell tagged ``solution-check`` (the
  folded cell that checks a solution, CONTRIBUTING.md) is removed, and in which the cell tagged
  ``exercise-preamble`` (how the book gives its solutions) says that this edition leaves them out; so the
  pages, the search index, the ``_sources`` behind the "Download .ipynb" and ".md" buttons and the notebook
  set hold no solution;
* **the buttons**: no launch buttons (Colab and Binder would open the repository's notebooks, which have
  the solutions) and no repository or edit buttons; students run the notebook set instead;
* **the notebook set**: the same copies, into ``<out>/notebooks/``, to hand out or upload (Colab, an LMS);
* **the PDF**: printed from the student site by scripts/build_pdf.py into
  ``<out>/multi-head-attention-students.pdf`` (``--pdf``, as `make book-students` does).

The set-up cell of every copy installs ``mha`` at the tag of the book's version (:func:`pinned_setup`),
with Colab's custom widget manager on, so a notebook handed out mid-semester runs the code it was written
for. Two second guards stay on: sphinx-exercise's ``hide_solutions``, and the book's extension
``_ext/removed_cells.py``, which drops from the pages any cell tagged ``solution-check``. The site goes to
``<out>/html`` (Jupyter Book's work files to ``<out>/_build``); the stored outputs are reused, nothing is
executed.

The Chinese student edition (``--lang zh``, from ``zh/``, scripts/zh_book.py) is built the same way, inside
the English one as the Chinese site is inside the English site: its site in ``<out>/html/zh`` (sharing the
English student site's assets), its notebooks in ``<out>/notebooks/zh``, its PDF in ``<out>/zh/``; build the
English edition first.

Usage: python -m scripts.student_edition [--out _build/students] [--pdf] [--lang en|zh]
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import tomllib
import yaml

from scripts import myst, zh_book
from scripts.texts import ui

ROOT = Path(__file__).resolve().parents[1]
BOOK_FLAGS = ["-W", "-n", "--keep-going"]
EXTENSION = "removed_cells"  # _ext/removed_cells.py: the edition's Sphinx extension, its second guard
PDF_NAME = "multi-head-attention-students.pdf"
# Top-level entries of the repository that the book's build does not read (or that are the copies' own).
NOT_LINKED = {".git", ".venv", "_build", "chapters", ".pytest_cache", ".ruff_cache", ".hypothesis"}

STUDENT_PREAMBLE = "This edition leaves the solutions out: your lecturer hands them out after the exercises."


def version() -> str:
    """The book's version: ``project.version`` of pyproject.toml."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def repository() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


def setup_block(url: str | None = None, tag: str | None = None) -> str:
    """The first lines of every chapter's set-up cell: ``mha`` and ``book`` at the book's version, and Colab's
    widget manager.

    Where ``book`` is missing it installs the library with the extra its pretrained models need,
    ``mha[pretrained]`` (the library itself needs PyTorch only, as Colab and Binder have it; pyproject.toml),
    and the book's own package ``book`` (``mha-book``, from the repository's ``book/`` folder), which brings
    what the chapters' figures, widgets and tables need (book/pyproject.toml).

    Colab shows third-party widgets (the book's explorer, stepper and calculator are anywidgets) only with its
    custom widget manager on: Colab's ``google.colab.output.enable_custom_widget_manager()``, which
    anywidget's own Colab check also calls; the cell calls it so that any widget of the chapter shows.
    """
    url, tag = url or repository(), tag or f"v{version()}"
    return (
        "# Set-up: on Colab or Binder, install the library `mha` and the book's own package `book`, with\n"
        "# what the chapters need, at this book's version (nothing happens where they are installed), and\n"
        "# on Colab turn on the widget manager the figures need.\n"
        "import importlib.util\n"
        "\n"
        'if importlib.util.find_spec("book") is None:\n'
        f'    source = "git+{url}@{tag}"\n'
        '    %pip install --quiet "mha[pretrained] @ {source}" "mha-book @ {source}#subdirectory=book"\n'
        "import mha\n"
        "\n"
        "try:\n"
        "    from google.colab import output\n"
        "\n"
        "    output.enable_custom_widget_manager()\n"
        "except ImportError:  # not on Colab\n"
        "    pass"
    )


def pinned_setup(source: str, url: str | None = None, tag: str | None = None) -> str:
    """A chapter's set-up cell with its first block, :func:`setup_block`, pinned to ``url`` and ``tag``."""
    block = setup_block()
    if not source.startswith(block):
        raise ValueError(f"source: not a chapter's set-up cell (CONTRIBUTING.md): {source[:80]!r}")
    return setup_block(url, tag) + source[len(block) :]


def student_notebook(nb: nbformat.NotebookNode, lang: str = "en") -> nbformat.NotebookNode:
    """A copy of a chapter without its solutions and solution checks, its set-up cell pinned."""
    nb = copy.deepcopy(nb)
    cells, setup_done = [], False
    for cell in nb.cells:
        if myst.SOLUTION_CHECK in myst.tags(cell):
            continue
        if cell.cell_type == "code" and not setup_done:
            cell.source, setup_done = pinned_setup(cell.source), True
        if cell.cell_type == "markdown":
            if myst.EXERCISE_PREAMBLE in myst.tags(cell):
                cell.source = ui(STUDENT_PREAMBLE, lang)
            else:
                cell.source = myst.without(cell.source, "solution").rstrip("\n")
            if not cell.source.strip():
                continue
        cells.append(cell)
    nb.cells = cells
    return nb


def student_config(config: dict, lang: str = "en") -> dict:
    """A book's configuration (``_config.yml``'s, or the Chinese one's) made the student edition's."""
    config["title"] = config["title"] + ui(" (student edition)", lang)
    # No button leads to the repository's notebooks, which hold the solutions; Download keeps the copies.
    config["launch_buttons"] = {"binderhub_url": "", "colab_url": "", "thebe": False}
    html = config.setdefault("html", {})
    html.update(use_repository_button=False, use_edit_page_button=False, use_download_button=True)
    sphinx = config.setdefault("sphinx", {})
    sphinx_config = sphinx.setdefault("config", {})
    sphinx_config["hide_solutions"] = True
    # _config.yml lists every extension (sphinx.config.extensions), which takes precedence over
    # local_extensions' own list: add the edition's to both; local_extensions puts _ext on sys.path.
    sphinx_config["extensions"] = [*sphinx_config.get("extensions", []), EXTENSION]
    sphinx_config["mha_removed_tags"] = [myst.SOLUTION_CHECK]
    local = sphinx.setdefault("local_extensions", {})
    local.update({name: str(ROOT / path) for name, path in local.items()})  # relative to the repository
    local[EXTENSION] = str(ROOT / "_ext")
    return config


def write_config(out: Path) -> Path:
    config = student_config(yaml.safe_load((ROOT / "_config.yml").read_text()))
    path = out / "_config.yml"
    path.write_text(
        "# Written by scripts/student_edition.py from _config.yml: edit that file, not this one.\n"
        + yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    )
    return path


def write_sources(out: Path, lang: str = "en") -> Path:
    """``out/source``: the repository's book files (linked) with student copies of the chapters. In Chinese,
    ``out/zh/source/zh``: zh/'s files likewise, inside links to the repository's files (``out/zh/source``), so
    that paths out of zh/ (``../../mha/...``) lead where they lead from the repository's zh/."""
    top = out / "source" if lang == "en" else out / lang / "source"
    book, source = (ROOT, top) if lang == "en" else (ROOT / lang, top / lang)
    if top.exists():
        shutil.rmtree(top)
    (source / "chapters").mkdir(parents=True)
    if lang != "en":
        for entry in ROOT.iterdir():
            if entry.name not in NOT_LINKED | {lang}:
                (source.parent / entry.name).symlink_to(entry)
    for entry in book.iterdir():
        if entry.name not in NOT_LINKED:
            (source / entry.name).symlink_to(entry)
    for entry in (book / "chapters").iterdir():
        target = source / "chapters" / entry.name
        if entry.suffix == ".ipynb":
            nbformat.write(student_notebook(nbformat.read(entry, as_version=4), lang), target)
        elif not entry.name.startswith("."):
            target.symlink_to(entry)
    notebooks = out / "notebooks" if lang == "en" else out / "notebooks" / lang
    if notebooks.exists():
        shutil.rmtree(notebooks)
    notebooks.mkdir()
    for nb in sorted((source / "chapters").glob("*.ipynb")):
        shutil.copy(nb, notebooks / nb.name)
    return source


def build(out: Path, *, pdf: bool = False, browser=None, lang: str = "en") -> Path:
    """Build the student edition into ``out / "html"`` (and its notebooks, and with ``pdf`` its PDF); the
    Chinese one into ``out / "html" / "zh"``, after the English one."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if lang != "en":
        return _build_translation(out, pdf=pdf, browser=browser, lang=lang)
    source = write_sources(out)
    config = write_config(out)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(source), "--config", str(config), "--path-output", str(out)]
    subprocess.run([*command, *BOOK_FLAGS], check=True)
    html = out / "html"
    if html.exists():
        shutil.rmtree(html)
    os.replace(out / "_build" / "html", html)
    if pdf:
        from scripts import build_pdf

        build_pdf.print_book(html, out / PDF_NAME, edition="students", browser=browser)
    return html


def _build_translation(out: Path, *, pdf: bool, browser, lang: str) -> Path:
    if not (out / "html" / "_static").is_dir():
        raise SystemExit(f"build the English student edition into {out} first: it holds the shared assets")
    source = write_sources(out, lang)
    html = zh_book.build(
        out / "html" / lang, out / lang, source=source, adjust=lambda c: student_config(c, lang)
    )
    if pdf:
        from scripts import build_pdf

        build_pdf.print_book(html, out / lang / PDF_NAME, edition="students", browser=browser, lang=lang)
    return html


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "students")
    parser.add_argument("--pdf", action="store_true", help=f"print <out>/{PDF_NAME} too")
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="the book's language")
    args = parser.parse_args(argv)
    html = build(args.out, pdf=args.pdf, lang=args.lang)
    folder = "" if args.lang == "en" else f"{args.lang}/"
    print(f"Open the student edition: {html}/index.html; notebooks in {args.out / 'notebooks' / folder}")
    if args.pdf:
        print(f"The student PDF: {args.out / folder / PDF_NAME}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
