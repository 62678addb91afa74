"""The rules of scripts/tag_slides.py, which shape a chapter into a lecture deck: on a notebook made here, and
on every chapter (the decks themselves, built and opened in Chromium: tests/browser/test_slides.py)."""

from __future__ import annotations

import nbformat

from scripts import build_slides, tag_slides
from tests import ROOT

CHAPTERS = build_slides.chapters()


def _shaped():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    long = " ".join(["Words of prose."] * 40)
    check = code("# Check of the solution", metadata={"tags": ["solution-check"]})  # skipped by its tag
    printed = code(
        "print(many)", outputs=[nbformat.v4.new_output("stream", text="".join(f"{i}\n" for i in range(40)))]
    )
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# Title\n\nWhat this teaches {cite}`vaswani2017attention`."),
        code("# Set-up"),
        md(f"## A section\n\n{long}\n\n$$\nx^2\n$$"),
        printed,
        md("### A subsection\n\n- one\n- two"),
        md("## Exercises"),
        md("Each solution is folded.", metadata={"tags": ["exercise-preamble"]}),
        md("```{exercise} Try it\n:label: t-ex\n\nDo it.\n```\n\n"
           "```{solution} t-ex\n:class: dropdown\n\nSECRET answer.\n```"),
        check,
    ]  # fmt: skip
    return tag_slides.slide_notebook(nb, tag_slides.References(ROOT), ROOT / "chapters")


def test_tagging_rules():
    nb = _shaped()
    kinds = [(c.metadata["slideshow"]["slide_type"], c.source.split("\n")[0][:20]) for c in nb.cells]
    assert kinds[0] == ("slide", "# Title")
    title = [c.source for c in nb.cells[1:4]]  # the title slide: the book, the first sentence, the sections
    assert title[0].startswith("*") and "Vaswani et al., 2017" in title[1] and "…" not in title[1]
    assert title[2] == "**In this chapter:** A section"
    assert ("skip", "# Set-up") in kinds
    assert ("slide", "## A section") in kinds and ("subslide", "### A subsection") in kinds
    assert ("notes", "Words of prose. Word") in kinds  # the long paragraph, in full
    assert ("-", "Words of prose. …") in kinds  # its first sentence on the slide
    assert ("subslide", "**Exercise: Try it**") in kinds
    assert ("skip", "Each solution is fol") in kinds
    assert ("skip", "# Check of the solut") in kinds
    assert not any("SECRET" in c.source for c in nb.cells)
    printed = next(c for c in nb.cells if c.source == "print(many)")
    assert printed.outputs[0].text.count("\n") == tag_slides.OUTPUT_KEEP_LINES + 1
    assert "30 more lines" in printed.outputs[0].text


def test_code_on_a_slide_is_short_and_free_of_harness_comments():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    png = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    long = "\n".join(f"x{i} = {i}" for i in range(12))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        md("# T"),
        md("## S"),
        code("# nbval-ignore-output: ids change\n# on every run.\nwidget", outputs=[png]),
        code(long, outputs=[nbformat.v4.new_output("stream", text="done\n")]),
        md(f"```python\n{long}\n```"),
    ]
    shaped = tag_slides.slide_notebook(nb, tag_slides.References(ROOT), ROOT / "chapters")
    shown = [c for c in shaped.cells if c.metadata["slideshow"]["slide_type"] not in ("notes", "skip")]
    assert not any("nbval" in c.source for c in shaped.cells)
    assert all(c.source.count("\n") < tag_slides.CODE_MAX_LINES for c in shown), [c.source for c in shown]
    figure = next(c for c in shown if any("image/png" in o.get("data", {}) for o in c.get("outputs", [])))
    assert figure.metadata["slideshow"]["slide_type"] == "subslide" and figure.source == ""
    assert "```python\nx0 = 0" in "".join(
        c.source for c in shaped.cells if c.metadata["slideshow"]["slide_type"] == "notes"
    )


def test_chapters_become_lecture_shaped_decks():
    refs = tag_slides.References(ROOT)
    for path in CHAPTERS:
        nb = tag_slides.slide_notebook(nbformat.read(path, as_version=4), refs, path.parent)
        kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
        h2 = [c for c in nb.cells if c.source.startswith("## ")]
        assert all(c.metadata["slideshow"]["slide_type"] == "slide" for c in h2), path.stem
        assert kinds.count("slide") >= 4, path.stem
        assert not any("{solution}" in c.source or "{cite" in c.source for c in nb.cells), path.stem
        first_code = next(c for c in nb.cells if c.cell_type == "code")
        assert first_code.metadata["slideshow"]["slide_type"] == "skip", "the set-up cell is shown"


def test_roles_become_markdown_where_the_parser_reads_roles_and_nowhere_else():
    refs = tag_slides.References(ROOT)
    text = (
        "See {cite:t}`vaswani2017attention` and {math}`h = 8`,\nthen {doc}`the code <the_code>`; "
        "write ``{ref}`a-label` `` for a reference."
    )
    assert refs.inline(text) == (
        "See Vaswani et al. (2017) and $h = 8$,\nthen the code; write ``{ref}`a-label` `` for a reference."
    )
    assert refs.inline("No role here: {ref} alone.") == "No role here: {ref} alone."


def test_prose_is_a_paragraph_as_the_parser_reads_it():
    prose = ["A sentence.", "|x| is the size of x.", "#1 is a rank, not a heading.", "**Bold** words."]
    others = ["# A heading", "- a\n- list", "1. a list", "| a |\n| - |\n| 1 |", "> a quote", "$$\nx\n$$"]
    others += ["```\ncode\n```", "**Exercise: Try it**"]
    assert [tag_slides._is_prose(b) for b in prose] == [True] * len(prose)
    assert [tag_slides._is_prose(b) for b in others] == [False] * len(others)
