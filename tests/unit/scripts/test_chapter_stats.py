"""scripts/chapter_stats.py's counts of a chapter (teaching.md's tables against the chapters:
tests/book/test_editions.py)."""

from __future__ import annotations

import nbformat

from scripts import chapter_stats, tag_slides
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
