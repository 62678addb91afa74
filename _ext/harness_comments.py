"""Sphinx extension of the book: the test harness's comments stay in the notebooks and out of the pages.

A chapter cell whose output strict nbval must not compare is tagged ``nbval-ignore-output`` and says why in a
comment that starts ``# nbval-`` (CONTRIBUTING.md; tests/book/test_book.py checks that the comment is there).
The comment serves the tests and whoever runs or edits the notebook, so it stays in the notebook and in the
site's download of it (``_sources/``); a reader of the page needs neither, so when Sphinx has read a chapter
this removes, from the code shown in each cell, every comment line that starts ``# nbval`` and the comment
lines that continue it, and drops the cell's ``tag_nbval-*`` classes that myst-nb writes from its tags. The
lecture decks leave the same lines out with the same function (scripts/tag_slides.py imports it), and
tests/book/test_site_harness.py checks that no built page shows them.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx

HARNESS_COMMENT = re.compile(r"^\s*#\s*nbval")


def strip_harness_comments(source: str) -> str:
    """The code without the test harness's comments: a ``# nbval...`` line and the comment lines under it."""
    kept, skipping = [], False
    for line in source.splitlines():
        if HARNESS_COMMENT.match(line):
            skipping = True
            continue
        if skipping and line.lstrip().startswith("#"):
            continue
        skipping = False
        kept.append(line)
    return "\n".join(kept)


def strip_from_cells(app: Sphinx, doctree: nodes.document) -> None:
    """Remove the harness's comments from every code cell's shown source, and its tags from the classes."""
    for container in doctree.findall(nodes.container):
        element = container.get("nb_element")
        if element == "cell_code":
            container["classes"] = [c for c in container["classes"] if not c.startswith("tag_nbval")]
        elif element == "cell_code_source":
            for block in container.findall(nodes.literal_block):
                text = block.astext()
                kept = strip_harness_comments(text)
                if kept != text:
                    block.rawsource = kept
                    block.children = [nodes.Text(kept)]


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", strip_from_cells)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
