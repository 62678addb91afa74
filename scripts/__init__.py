"""The book's scripts, run from the repository's root as modules: ``python -m scripts.build_slides``.

A package, so that the scripts, the tests and the benchmarks import one another by name
(``from scripts.tag_slides import slide_notebook``) and nothing edits ``sys.path``. What each does: its
docstring; which ``make`` target runs it: the Makefile.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
