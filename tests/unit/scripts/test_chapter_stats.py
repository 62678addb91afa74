"""scripts/chapter_stats.py's counts of a chapter (teaching.md's tables against the chapters:
tests/book/test_editions.py)."""

from __future__ import annotations

import nbformat
import pytest

from scripts import chapter_stats, tag_slides
from scripts.chapter_stats import FIRST_READING, STUDY, Stats
from scripts.tag_slides import References
from tests import ROOT

CELL = """\
# A chapter: its title

(the-label)=
Four words of prose.

$$
x = 1
$$

```{exercise} Two words
:label: the-ex

Three more words, $$y$$ not display.

$$
y = 2
$$
```

```{solution} the-ex
:class: dropdown

Solutions are not counted at all.
```

```python
code = 1
```
"""


def test_a_chapters_words_leave_out_mysts_syntax_and_the_solutions(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(CELL), nbformat.v4.new_code_cell("# set-up")]
    path = tmp_path / "a_chapter.ipynb"
    nbformat.write(nb, path)
    stats = chapter_stats.chapter_stats(path, tag_slides.References(ROOT))
    assert stats.title == "A chapter: its title" and stats.exercises == 1
    assert stats.equations == 2, "the $$ blocks, in the exercise too, not the solution's or an inline $$"
    # the title (5, its # too), the prose (4), the equation's $$ lines and x = 1 (2 + 3), the exercise's
    # text (6) and equation (2 + 3), the code block's first line and code (1 + 3): not the directives' fences
    # and options, nor the target
    assert stats.words == 5 + 4 + 2 + 3 + 6 + 2 + 3 + 1 + 3
    assert stats.code_cells == 0, "the set-up cell is not counted"


def test_the_syntax_lines_are_fences_options_and_targets():
    text = "(t)=\n```{note} A\n:class: tip\n\nBody.\n```\n\n```\nbare\n```\n\n```python\nx\n```\n"
    lines = chapter_stats._syntax_lines(text, list(chapter_stats.myst.walk(text)))
    assert sorted(lines) == [0, 1, 2, 3, 5, 7, 9, 13], "the blank line after options goes with them"


WIDGET = {"application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "Explorer()"}


def chapter() -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        md("(start)=\n# A tiny chapter\n\nFour words of prose."),  # the label is MyST syntax: no word
        code("import mha"),  # the set-up cell: not shown
        md("$$\nx = 1\n$$\n\n$$\ny = 2\n$$"),  # two display equations; their lines count as words too
        code("plot()", outputs=[nbformat.v4.new_output("display_data", data={"image/png": "AA=="})]),
        code("explorer()", outputs=[nbformat.v4.new_output("display_data", data=WIDGET)]),
        md(":::{exercise}\n:label: one\nTry it.\n:::\n\n:::{solution} one\nA long hidden answer here.\n:::"),
        code("assert True", metadata={"tags": ["solution-check"]}),  # a solution's folded check
    ]
    return nbformat.v4.new_notebook(cells=cells)


def test_the_counts_follow_the_rule(tmp_path):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "references.bib").write_text("", encoding="utf-8")  # References reads the citations
    path = tmp_path / "chapters" / "tiny.ipynb"
    nbformat.write(chapter(), path)
    stats = chapter_stats.chapter_stats(path, References(tmp_path))
    assert (stats.chapter, stats.title) == ("tiny", "A tiny chapter")
    # "# A tiny chapter" (4) + "Four words of prose." (4) + the equations' "$$ x = 1 $$ $$ y = 2 $$" (10)
    # + "Try it." (2): the solution's body and the directive lines are not read
    assert stats.words == 4 + 4 + 10 + 2
    assert (stats.equations, stats.code_cells, stats.figures, stats.interactive) == (2, 2, 1, 1)
    assert stats.exercises == 1 and stats.slides >= 1


def test_the_reading_time_adds_each_item_at_its_pace_and_rounds_to_5_minutes():
    stats = Stats(
        "c", "C", words=2380, equations=2, code_cells=3, figures=1, interactive=1, exercises=9, slides=0
    )
    assert stats.reading_minutes == (
        pytest.approx(10 + 3 * 1.0 + 2 * 0.5 + 1.0 + 2.0),
        pytest.approx(2380 / 175 + 3 * 2.0 + 2 * 1.0 + 2.0 + 5.0),
    )
    assert stats.minutes(FIRST_READING) < stats.minutes(STUDY)
    assert stats.rounded_minutes == (15, 30)  # 17 and 28.6 minutes
    assert Stats("c", "C", 10, 0, 0, 0, 0, 0, 0).rounded_minutes == (5, 5)  # never under 5


def test_sections_add_up_to_the_chapter_and_a_cell_splits_at_its_heading(tmp_path):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        md("# Title\n\nOpening words."),
        code("import mha"),  # the set-up cell: counted nowhere
        md("## One\n\nFirst section."),
        code("plot()", outputs=[nbformat.v4.new_output("display_data", data={"image/png": "AA=="})]),
        md("Still one.\n\n## Two\n\nSecond section, longer."),  # its first line is section One's
        code("x = 1"),
    ]
    path = tmp_path / "c.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    one, two = (chapter_stats.section_stats(path, [h]) for h in ("One", "Two"))
    opening = chapter_stats.section_stats(path, [""])
    assert (opening.words, opening.code_cells) == (4, 0)  # "# Title" and "Opening words."
    assert (one.words, one.code_cells, one.figures) == (2 + 2 + 2, 1, 1)
    assert (two.words, two.code_cells, two.figures) == (2 + 3, 1, 0)
    both = chapter_stats.section_stats(path, ["", "One", "Two"])
    assert both.words == opening.words + one.words + two.words and both.code_cells == 2
    with pytest.raises(ValueError, match="Three"):
        chapter_stats.section_stats(path, ["Three"])


def test_the_budget_counts_markdown_words_printed_words_and_shown_code_lines(tmp_path):
    """The reading budget's rule: every Markdown word (syntax too); the words of streams, text/plain and
    HTML as text, but nothing of a picture or an interactive figure's root; code lines of shown cells only."""
    md, code, out = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell, nbformat.v4.new_output
    root = '<div class="mha-explorer"><script type="application/json">{"a": 1}</script></div>'
    stream = out("stream", name="stdout", text="a b")
    html = out("display_data", data={"text/html": "<p>three <b>html</b> words</p>"})
    picture = out("display_data", data={"image/png": "AA==", "text/plain": "<Figure>"})
    figure = out("display_data", data={"text/html": root, "text/plain": "Explorer()"})
    result = out("execute_result", data={"text/plain": "1"})
    cells = [
        md("# Title\n\n(label)=\nFour words of prose."),  # 7 whitespace-separated words
        code("setup()", metadata={"tags": ["remove-input"]}, outputs=[stream]),
        code("a = 1\nb = 2", outputs=[html]),
        code("plot()", outputs=[picture]),
        code("explorer()", outputs=[figure]),
        code("x", metadata={"tags": ["hide-cell"]}, outputs=[result]),
    ]
    path = tmp_path / "chapter.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert chapter_stats.budget(path) == {"markdown_words": 7, "output_words": 6, "code_lines": 4}
    assert all(not p.stem.startswith("appendix_") for p in chapter_stats.main_chapters())
