"""The Chinese prose's typography: what a Chinese reader sees as a slip in the sources of zh/.

Fast: it reads the Markdown of zh/*.md and of the Chinese notebooks' Markdown cells (code, inline code and
maths each read as one word). Full-width quotes carry their own spacing, so no space stands beside one
(只有“cat”和“dog”例外, not 只有 “cat” 和 “dog” 例外), except where Markdown needs it (a list's "- ", a
table's "| "); a percentage is written without a space (99%, not 99 %); and two parenthetical remarks never
stand side by side (张量（tensor）（键就是值…）): one is folded into the other or into the sentence.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests import ROOT

ZH = ROOT / "zh"
SOURCES = sorted(ZH.glob("*.md")) + sorted((ZH / "chapters").glob("*.ipynb"))

_CODE = re.compile(r"`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$", re.S)  # inline code and maths
_FENCE = re.compile(r"(`{3,}|~{3,})(\{[^}]*\})?(.*)")  # a fence of code, or of a directive ({exercise}...)
_OPTION = re.compile(r":\w[\w-]*:")  # a directive's option (:label: ...)


def prose(text: str) -> str:
    """``text`` without its code blocks and maths; a directive's fences and options go, its content stays
    (an exercise, a solution or a note is prose too)."""
    kept, fences = [], []  # the open fences, innermost last: (its backticks, whether it opens code)
    for line in text.split("\n"):
        fence = _FENCE.fullmatch(line.strip())
        closes = fence and fences and fence.group(1) == fences[-1][0] and not (fence[2] or fence[3].strip())
        in_code = bool(fences) and fences[-1][1]
        if closes:
            fences.pop()
        elif fence and not in_code:
            fences.append((fence.group(1), fence.group(2) is None))
        elif not in_code and not (fences and _OPTION.match(line)):
            kept.append(line)
    return _CODE.sub("x", "\n".join(kept))


RULES = {
    "a space before a full-width quote": re.compile(r"(?<=[^\s|\-]) +(?=[“”])"),
    "a space after a full-width quote": re.compile(r"(?<=[“”]) +(?=[^\s|])"),
    "a space before %": re.compile(r"(?<=\d) +%"),
    "two parentheses side by side": re.compile(r"）\s*（"),
}


def _texts(path: Path) -> list[tuple[str, str]]:
    """(where, Markdown without code and maths) for a page, or for each Markdown cell of a notebook."""
    if path.suffix == ".md":
        found = [(path.name, path.read_text(encoding="utf-8"))]
    else:
        cells = nbformat.read(path, as_version=4).cells
        found = [
            (f"{path.name} cell {i}", c.source) for i, c in enumerate(cells) if c.cell_type == "markdown"
        ]
    return [(where, prose(text)) for where, text in found]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ZH)))
def test_the_chinese_prose_has_no_space_beside_a_quote_or_a_percent_sign(path):
    problems = [
        f"{where}: {rule}: {text[max(0, m.start() - 12) : m.end() + 12]!r}"
        for where, text in _texts(path)
        for rule, pattern in RULES.items()
        for m in pattern.finditer(text)
    ]
    assert not problems, "\n".join(problems)


def test_the_prose_of_a_directive_is_read_and_code_is_not():
    text = "```{exercise} 题目\n:label: ex\n\n只有 “cat” 例外\n```\n\n```python\nx = “a”\n```\n后文"
    assert prose(text) == "\n只有 “cat” 例外\n\n后文"


def test_the_rules_find_what_they_are_for():
    bad = "只有 “cat” 和 “dog” 例外，达到 99 % 的步数，张量（tensor）（键就是值）"
    assert {rule for rule, pattern in RULES.items() if pattern.search(bad)} == set(RULES)
    good = "- “典型配置”：只有“cat”和“dog”例外，达到 99% 的步数\n| 如“头 1”“每个头” |"
    assert not any(pattern.search(good) for pattern in RULES.values())
