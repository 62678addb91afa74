"""Sphinx extension of the book: what the theme and its extensions write that fails WCAG 2.2 AA, mended.

``tests/browser/test_site_pages.py`` scans every page with axe-core; these are the findings that came from the
tools rather than from the book's own pages, each mended where it is made:

- MyST-NB's folded cells (``hide-input``) open with ``<summary aria-label="Toggle hidden content">`` around
  the visible "Show code cell source": a name that does not contain the words a reader sees and a voice
  user says (WCAG 2.5.3, axe ``label-content-name-mismatch``). :func:`visit_hidden_cell` writes the summary
  without it, so its name is its visible text.
- docutils writes each entry of a citation list (the references page) as ``role="doc-biblioentry"`` inside a
  ``role="list"``, which may hold only list items (WCAG 1.3.1, ``aria-required-children``):
  :func:`visit_citation` writes ``role="listitem"``.
- A Markdown table whose top-left header cell is empty has row headings in its first column, but docutils
  writes them as data cells, so no data cell of the row has a header (WCAG 1.3.1, ``td-has-header``):
  :class:`RowHeadings` marks that column as stub columns, which the HTML writer makes ``<th>``.

The theme's own search and colour-mode buttons are mended by the templates in ``_theme/templates`` (the
``templates_path`` of ``_config.yml``), and the links in admonitions by ``_theme/book.css``.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.writers.html5 import HTML5Translator

SUMMARY = '<summary aria-label="Toggle hidden content">'  # what myst_nb's visitor writes


def visit_hidden_cell(self: HTML5Translator, node: nodes.Element) -> None:
    """MyST-NB's ``HideCodeCellNode``, as its own visitor writes it, less the summary's aria-label."""
    from myst_nb.sphinx_ import visit_HideCellInput

    visit_HideCellInput(self, node)
    for i in range(len(self.body) - 1, -1, -1):
        if self.body[i].startswith(SUMMARY):
            self.body[i] = self.body[i].replace(SUMMARY, "<summary>", 1)
            return
    raise RuntimeError(f"myst_nb no longer writes {SUMMARY!r}: remove this mend (_ext/accessibility.py)")


def depart_hidden_cell(self: HTML5Translator, node: nodes.Element) -> None:
    from myst_nb.sphinx_ import depart_HideCellInput

    depart_HideCellInput(self, node)


def visit_citation(self: HTML5Translator, node: nodes.citation) -> None:
    """docutils' citation, an item of the list that its writer opens around the citations."""
    HTML5Translator.visit_citation(self, node)
    self.body[-1] = self.body[-1].replace('role="doc-biblioentry"', 'role="listitem"')


def depart_citation(self: HTML5Translator, node: nodes.citation) -> None:
    HTML5Translator.depart_citation(self, node)


class RowHeadings(SphinxTransform):
    """A table whose header row starts with an empty cell: its first column is the rows' headings."""

    default_priority = 500

    def apply(self, **kwargs) -> None:
        for tgroup in self.document.findall(nodes.tgroup):
            head = next((c for c in tgroup.children if isinstance(c, nodes.thead)), None)
            colspecs = [c for c in tgroup.children if isinstance(c, nodes.colspec)]
            if head is None or not colspecs or not head.children:
                continue
            first = head.children[0].children[0] if head.children[0].children else None
            if first is not None and not first.astext().strip():
                colspecs[0]["stub"] = 1


def setup(app: Sphinx) -> dict:
    from myst_nb.sphinx_ import HideCodeCellNode

    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_hidden_cell))
    app.add_node(nodes.citation, override=True, html=(visit_citation, depart_citation))
    app.add_transform(RowHeadings)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
