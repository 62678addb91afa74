"""_ext/harness_comments.py: the test harness's ``# nbval`` comments leave the code a page shows, and the
cells' ``tag_nbval-*`` classes go with them (tests/book/test_site_harness.py checks the built pages)."""

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

from _ext.harness_comments import strip_from_cells, strip_harness_comments


def test_stripping_keeps_the_code_and_drops_the_comment_with_its_continuation():
    source = "# nbval-ignore-output: ids change\n# on every run.\nexplorer = f()  # a comment\nexplorer"
    assert strip_harness_comments(source) == "explorer = f()  # a comment\nexplorer"
    plain = "x = 1\n# a reader's comment\ny = 2"
    assert strip_harness_comments(plain) == plain


def test_a_comment_after_the_harness_s_code_is_the_reader_s_and_stays():
    source = "  #nbval-skip: slow\nx = 1\n# kept: code came between"
    assert strip_harness_comments(source) == "x = 1\n# kept: code came between"


def cell(source: str, classes: list[str]) -> nodes.container:
    """A code cell as myst-nb puts it in the doctree: the cell, its source container, its literal block."""
    shown = nodes.container(nb_element="cell_code_source")
    shown += nodes.literal_block(source, source)
    outer = nodes.container(nb_element="cell_code", classes=classes)
    outer += shown
    return outer


def test_each_cell_loses_the_comment_from_its_shown_code_and_the_tags_from_its_classes():
    doctree = new_document("chapter", get_default_settings(Parser))
    doctree += cell(
        "# nbval-ignore-output: a timing\nt = time()", ["cell", "tag_nbval-ignore-output", "tag_x"]
    )
    doctree += cell("y = 2", ["cell"])
    strip_from_cells(None, doctree)
    tagged, plain = doctree.children
    assert tagged["classes"] == ["cell", "tag_x"] and plain["classes"] == ["cell"]
    blocks = [block for block in doctree.findall(nodes.literal_block)]
    assert [block.astext() for block in blocks] == ["t = time()", "y = 2"]
    assert blocks[0].rawsource == "t = time()"
