"""scripts/zh_checks.py: what a translation keeps, read from a unit's MyST as the book's parser reads it (the
checks on the Chinese book itself: tests/book/test_translation.py)."""

from __future__ import annotations

from scripts import zh_checks

UNIT = """\
(the-label)=
## The scores, $QK^\\top$

Each of the **1,024** keys (see {ref}`the scaling <the-scaling>`, {cite:t}`a2017, b2018`) meets
`scores = q @ k.T` and $\\sqrt{d_k}$; [the code](the_code.md), ![a picture](img/p.png),
<https://example.org/a> and https://example.org/b as text.

1. first
2. second

$$
x = 1
$$ (eq-one)

```{exercise} Predict 2 things
---
label: the-ex
class: dropdown
---
Write {math}`h = 8` and ``{ref}`not-a-role` `` in a list:

- an item

      indented code
```

```python
print(3)
```
"""


def test_a_unit_is_cut_into_what_a_translation_keeps():
    parts = zh_checks.parse(UNIT)
    assert parts.math == {"QK^\\top", "\\sqrt{d_k}", "x = 1", "h = 8"}
    assert parts.code == {"scores = q @ k.T", "{ref}`not-a-role`", "indented code", "print(3)"}
    assert parts.links == {"the_code.md", "img/p.png", "https://example.org/a", "https://example.org/b"}
    assert parts.references == {"{ref}the-scaling", "{cite:t}a2017", "{cite:t}b2018"}
    assert parts.labels == {"the-label", "eq-one", "the-ex"}
    assert parts.directives == ["{exercise}  [('class', 'dropdown'), ('label', 'the-ex')]"]
    assert parts.headings == [2]


def test_the_prose_holds_the_texts_a_reader_reads_and_its_numbers():
    parts = zh_checks.parse(UNIT)
    assert parts.numbers == {"1024": 1, "2": 1}, "the text's and a title's, not a list's, maths' or code's"
    assert parts.heading_text == ["The scores,  ", "Predict 2 things"]
    assert "Each of the 1,024 keys (see the scaling ," in parts.text, "emphasis marks are not text"
    assert "a picture" in parts.text and "the code" in parts.text and "first" in parts.text
    assert "https" not in parts.text and "print" not in parts.text


def test_dollars_are_maths_where_the_site_reads_maths():
    """MyST reads ``$5 and $`` as an equation (it allows spaces and digits at its ends): so does the check."""
    assert zh_checks.parse("It costs $5 and $10.").math == {"5 and"}
    assert zh_checks.parse("It costs \\$5 and \\$10.").numbers == {"5": 1, "10": 1}


def test_keeps_names_what_the_chinese_lost_or_added():
    english = "Each of the $h$ heads weighs 1,024 keys.\n\n```{note} Why\n:class: tip\n\nSee `x`.\n```"
    good = "$h$ 个头中的每一个都对 1 024 个键加权。\n\n```{note} 为什么\n:class: tip\n\n见 `x`。\n```"
    assert zh_checks.keeps(english, good) == []
    bad = good.replace("`x`", "`y`").replace(":class: tip", ":class: note")
    lost = zh_checks.keeps(english, bad)
    assert lost[0] == "code: only in the English ['x'], only in the Chinese ['y']"
    assert lost[1].startswith("directives and their options: English [\"{note}  [('class', 'tip')]\"]")


def test_a_line_broken_between_chinese_characters_is_found_in_any_paragraph():
    assert zh_checks.broken_lines("第一行在这里\n接着下一行。") == ["第一行在这里 / 接着下一行。"]
    assert zh_checks.broken_lines("- 一个列表项\n  接着写。\n- 另一项") == ["一个列表项 / 接着写。"]
    assert zh_checks.broken_lines("```\n代码里的行\n可以断开\n```") == [], "code is not prose"
