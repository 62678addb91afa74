"""The test harness's comments stay in the notebooks and out of the built pages (_ext/harness_comments.py).

A chapter cell whose output nbval does not compare says why in a ``# nbval-...`` comment. The site shows the
code of that cell without the comment (and without the ``tag_nbval-*`` classes of its tags); the notebook
keeps it, and so does the site's download of the notebook (``_sources/``), for readers who run it. Reads the
built book (tests/built_site.py).
"""

from __future__ import annotations

import re

import nbformat
import pytest

from _ext.harness_comments import strip_harness_comments
from tests import ROOT
from tests.built_site import CHAPTER_PAGES as CHAPTERS
from tests.built_site import PAGES, SITE


def harness_cells(page: str) -> list[str]:
    """The sources of a chapter's code cells that carry a harness comment."""
    nb = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    return [source for source in code if re.search(r"^\s*#\s*nbval", source, re.M)]


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES)
def test_no_page_shows_a_harness_comment(page):
    path = SITE / f"{page}.html"
    if not path.exists():
        pytest.fail(f"no built page {path}: run `make book` (make test does it first)")
    assert "nbval" not in path.read_text(encoding="utf-8"), f"{page}.html shows the test harness's comments"


@pytest.mark.site
def test_the_cells_behind_the_comments_are_shown_and_the_downloads_keep_them():
    cells = {page: harness_cells(page) for page in CHAPTERS}
    assert sum(map(len, cells.values())) >= 4, "the chapters have harness comments to hide"
    for page, sources in cells.items():
        html = (SITE / f"{page}.html").read_text(encoding="utf-8")
        for source in sources:
            first_code = next(line for line in strip_harness_comments(source).splitlines() if line.strip())
            name = re.match(r"\s*(\w+)", first_code).group(1)
            assert name in html, f"{page}: the code after the harness comment is missing: {first_code}"
        if sources:
            download = SITE / "_sources" / f"{page}.ipynb"
            assert download.exists() and "# nbval-ignore-output" in download.read_text(encoding="utf-8"), page
