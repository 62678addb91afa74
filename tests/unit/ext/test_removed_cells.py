"""_ext/removed_cells.py: an edition's Sphinx extension that removes the code cells with given tags."""

from __future__ import annotations

from types import SimpleNamespace

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from _ext import removed_cells


def _page() -> nodes.document:
    """A page as myst-nb writes a notebook's: a code cell is a container with its tags as classes."""
    document = new_document("chapter", get_default_settings(Parser))
    section = nodes.section()
    document += section
    for name, tags in [("setup", []), ("check", ["solution-check", "hide-cell"]), ("plot", ["hide-input"])]:
        cell = nodes.container(classes=["cell", *(f"tag_{t}" for t in tags)], nb_element="cell_code")
        cell += nodes.literal_block(text=name)
        section += cell
    section += nodes.container(classes=["tag_solution-check"])  # not a code cell: kept
    return document


def _shown(document: nodes.document) -> list[str]:
    return [c.astext() or ",".join(c["classes"]) for c in document.findall(nodes.container)]


def test_the_cells_tagged_as_configured_go_and_the_others_stay():
    document = _page()
    app = SimpleNamespace(config=SimpleNamespace(mha_removed_tags=["solution-check"]))
    removed_cells.remove_tagged_cells(app, document)
    assert _shown(document) == ["setup", "plot", "tag_solution-check"]


def test_by_default_no_cell_goes():
    document = _page()
    removed_cells.remove_tagged_cells(SimpleNamespace(config=SimpleNamespace(mha_removed_tags=[])), document)
    assert _shown(document) == ["setup", "check", "plot", "tag_solution-check"]


def test_setup_registers_the_option_and_runs_when_a_page_is_read():
    calls = []
    app = SimpleNamespace(
        add_config_value=lambda *args: calls.append(("config", *args)),
        connect=lambda *args: calls.append(("connect", *args)),
    )
    metadata = removed_cells.setup(app)
    assert calls == [
        ("config", "mha_removed_tags", [], "env"),
        ("connect", "doctree-read", removed_cells.remove_tagged_cells),
    ]
    assert metadata["parallel_read_safe"] and metadata["parallel_write_safe"]
