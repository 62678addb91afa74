"""scripts/zh_sync.py's reading of a Markdown page: its sections, their records, its paths (the Chinese book
itself, and the records of a small book: tests/book/test_translation.py)."""

from __future__ import annotations

import pytest

from scripts import zh_sync

PAGE = """\
# Title

Intro.

```{note} A note
# not a section: a heading in a directive
```

````markdown
## nor in a code block
````

(the-label)=
## Part

Text.
"""


def test_a_page_is_cut_before_its_own_headings_a_target_with_its_heading():
    sections = zh_sync.split_sections(PAGE)
    assert [s.splitlines()[0] for s in sections] == ["# Title", "(the-label)="]
    assert "".join(sections) == PAGE


def test_a_chinese_page_is_read_by_its_record_comments():
    page = zh_sync.write_page([({"en": "a"}, "# 标题\n\n正文。"), ({"en": "b", "copy": "c"}, "## Part\n")])
    assert page.startswith('% translation {"en": "a"}\n# 标题')
    assert zh_sync.read_page(page) == [
        ({"en": "a"}, "# 标题\n\n正文。\n\n"),
        ({"en": "b", "copy": "c"}, "## Part\n"),
    ]


def test_only_a_comment_of_the_page_is_a_record():
    page = (
        '% translation {"en": "a"}\n% a comment of the translator\n# 标题\n\n'
        '```text\n% translation {"en": "in code"}\n```\n'
    )
    ((record, text),) = zh_sync.read_page(page)
    assert record == {"en": "a"} and text.startswith("% a comment of the translator\n# 标题")
    with pytest.raises(ValueError, match="text before the first record comment"):
        zh_sync.read_page("# 标题\n" + page)


def test_relocate_moves_the_paths_the_parser_reads_one_folder_deeper():
    english = """\
```{literalinclude} ../mha/attention.py
:pyobject: attend
```

````{exercise} Look
:label: look

:::{figure} images/heads.png
:alt: the heads
:::

See ![one](images/a.png) and ![two](images/a.png), not ![far](https://example.org/b.png).
````

`![code](not/a/path.png)` is code.
"""
    moved = zh_sync.relocate(english)
    assert "```{literalinclude} ../../mha/attention.py\n" in moved
    assert ":::{figure} ../images/heads.png\n" in moved
    assert "![one](../images/a.png) and ![two](../images/a.png)" in moved
    assert "(https://example.org/b.png)" in moved and "`![code](not/a/path.png)`" in moved
    assert zh_sync.relocate(english, depth=2).count("../../../mha/attention.py") == 1
