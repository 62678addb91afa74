"""scripts/myst.py: the chapters' MyST read as the book's build reads it, by myst-parser's markdown-it."""

from __future__ import annotations

import pytest

from scripts import myst

PAGE = """\
% a comment
% translation {"en": "x"}
(the-label)=
# Title with {ref}`a target <the-label>`

Text with `code` and $x^2$, then [a link](other.md).

```{exercise} Predict, then check
:label: ex-one

Body.

:::{figure} ../images/p.png
:alt: a picture
:::
```

```python
# not a heading
```
"""


def test_tokens_are_the_sites_and_inline_gives_a_titles():
    types = [t.type for t in myst.tokens(PAGE)]
    assert types[:3] == ["myst_line_comment", "myst_target", "heading_open"]
    assert types.count("heading_open") == 1, "a line in a code fence is no heading"
    title = [(t.type, t.content) for t in myst.inline("Predict $q$, then `check`")]
    assert title == [
        ("text", "Predict "),
        ("math_inline", "q"),
        ("text", ", then "),
        ("code_inline", "check"),
    ]


def test_a_directive_is_read_whatever_its_fence_and_a_code_fence_is_none():
    fences = [t for t in myst.tokens(PAGE) if t.type == "fence"]
    assert [myst.directive(t) for t in fences] == [("exercise", "Predict, then check"), None]
    (colon,) = [t for t in myst.tokens(":::{note}\nHi.\n:::") if t.type == "colon_fence"]
    assert myst.directive(colon) == ("note", "")


def test_walk_reads_a_directives_content_too_with_the_line_it_is_on():
    lines = PAGE.splitlines()
    found = [(t, first) for t, first in myst.walk(PAGE) if myst.directive(t)]
    assert [myst.directive(t)[0] for t, _ in found] == ["exercise", "figure"]
    figure, first = found[1]
    assert lines[first + figure.map[0]] == ":::{figure} ../images/p.png"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (":label: ex-one\n:class: dropdown\n\nBody.\n", ({"label": "ex-one", "class": "dropdown"}, "Body.")),
        ("---\nlabel: ex-two\n---\nBody, no blank line.\n", ({"label": "ex-two"}, "Body, no blank line.")),
        (":nowrap:\n$$x$$\n", ({"nowrap": ""}, "$$x$$")),
        ("Only content.\n\n:not: an option\n", ({}, "Only content.\n\n:not: an option")),
    ],
)
def test_options_are_read_as_myst_reads_them(body, expected):
    assert myst.options(body) == expected


def test_read_body_says_where_the_content_starts():
    options, content, first = myst.read_body(":label: a\n:class: b\n\nBody.\nMore.")
    assert (options, content, first) == ({"label": "a", "class": "b"}, "Body.\nMore.", 3)


def test_roles_are_found_where_they_are_written_but_not_in_code():
    text = "See {ref}`the scaling <the-scaling>`, not ``{ref}`code` ``, and {cite:t}``a`b``\nand {doc}`x\ny`."
    found = myst.roles(text)
    assert [(r.name, r.content) for r in found] == [
        ("ref", "the scaling <the-scaling>"),
        ("cite:t", "a`b"),
        ("doc", "x y"),
    ]
    assert [text[r.start : r.end] for r in found] == [
        "{ref}`the scaling <the-scaling>`",
        "{cite:t}``a`b``",
        "{doc}`x\ny`",
    ]
    assert myst.roles("In a block:\n\n    {ref}`indented code`\n") == []


def test_tables_give_their_rows_and_cells_as_written():
    text = "| 中文 | English |\n| --- | --- |\n| 头 | head; heads |\n| 键 | |\n\n| a \\| b |\n| - |\n| c |\n"
    assert myst.tables(text) == [
        [["中文", "English"], ["头", "head; heads"], ["键", ""]],
        [["a | b"], ["c"]],
    ]


def test_blocks_give_a_comments_lines_as_its_body():
    comment, target, heading, *_ = myst.blocks(PAGE)
    assert (comment.kind, comment.start, comment.end) == ("myst_line_comment", 0, 2)
    assert comment.body.split("\n") == [" a comment", ' translation {"en": "x"}']
    assert (target.name, heading.level) == ("the-label", 1)
