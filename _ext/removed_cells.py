"""Sphinx extension of the book's editions: the code cells with a given tag removed from the pages.

An edition that must not show some cells names their tags in ``mha_removed_tags`` (by default none, so the
extension does nothing), and when Sphinx has read a notebook this removes every code cell (the container that
myst-nb marks ``nb_element="cell_code"``, with a class ``tag_<tag>`` for each of the cell's tags) that has one
of them. The student edition (scripts/student_edition.py) removes the cells tagged ``solution-check`` (the
folded checks of the exercises' solutions, CONTRIBUTING.md) from the copies of the chapters it builds from;
this is its second guard, in case a copy kept one. It adds the extension to its configuration, with
``_ext`` in ``sphinx.local_extensions``, as ``_config.yml`` names the book's other extensions.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx


def remove_tagged_cells(app: Sphinx, doctree: nodes.document) -> None:
    """Remove from ``doctree`` every code cell tagged with one of ``mha_removed_tags``."""
    classes = {f"tag_{tag}" for tag in app.config.mha_removed_tags}
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") == "cell_code" and classes & set(cell["classes"]):
            cell.parent.remove(cell)


def setup(app: Sphinx) -> dict:
    app.add_config_value("mha_removed_tags", [], "env")
    app.connect("doctree-read", remove_tagged_cells)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
