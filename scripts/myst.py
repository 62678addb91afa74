"""The chapters' MyST Markdown and their cell tags, read as the book's build reads them.

Markdown is parsed by myst-parser's markdown-it parser with the book's extensions (``_config.yml``'s
``myst_enable_extensions``), the one Jupyter Book uses, so a directive, a fence, an equation or a label is
what the site makes of it, not what a regular expression guesses. :func:`blocks` gives a cell's top-level
blocks with their source lines; :func:`directives` and :func:`without` find and remove a directive
(``{exercise}``, ``{solution}``) whatever its fence (three or more backticks, or colons).

Cells are known by their tags (CONTRIBUTING.md): :data:`SOLUTION_CHECK` marks the folded code cell that runs
the check of an exercise's solution, :data:`EXERCISE_PREAMBLE` the Markdown cell that says, under "Exercises",
how the solutions are given. The student edition, the PDF and the lecture decks read them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import yaml

SOLUTION_CHECK = "solution-check"  # a folded code cell that checks an exercise's solution
EXERCISE_PREAMBLE = "exercise-preamble"  # a Markdown cell that says how the solutions are given

_DIRECTIVE_FENCES = ("fence", "colon_fence")
_OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")


def tags(cell) -> set[str]:
    """A notebook cell's tags."""
    return set(cell.get("metadata", {}).get("tags", []))


@functools.cache
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    from scripts import ROOT

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    extensions = set(config.get("parse", {}).get("myst_enable_extensions", []))
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


@dataclass(frozen=True)
class Block:
    """A top-level block of a Markdown source.

    ``kind`` is markdown-it's token type without ``_open`` (``heading``, ``paragraph``, ``bullet_list``,
    ``table``, ``fence``, ``math_block``, ``myst_target``, ...) or ``directive``; ``text`` is the block's
    source lines; ``start`` and ``end`` its line numbers (from 0, ``end`` excluded). A directive has its
    ``name``, its argument ``arg`` and its ``body`` (options and content, as written); a heading its
    ``level``; a target (``(label)=``) its label as ``name``.
    """

    kind: str
    text: str
    start: int
    end: int
    name: str = ""
    arg: str = ""
    body: str = ""
    level: int = 0


def blocks(source: str, *, loose_lists: bool = False) -> list[Block]:
    """The top-level blocks of ``source``, in order (blank lines between them are not blocks).

    With ``loose_lists``, a list whose items are apart by blank lines gives the blocks of its items instead
    (an item's first block starts with its marker, ``- `` or ``1. ``), so each can be placed on its own.
    """
    lines = source.splitlines()
    tokens = _parser().parse(source)
    out, inside = [], None  # inside: the level of a loose list's items' blocks, while in one
    for token in tokens:
        if inside is not None and token.level == 0 and token.nesting < 0:
            inside = None  # the loose list closes
            continue
        if token.nesting < 0 or token.map is None or token.level != (inside or 0):
            continue
        start, end = token.map
        if token.type == "amsmath":  # its map leaves out the \end line
            end = start + token.content.count("\n") + 1
        while end > start + 1 and not lines[end - 1].strip():  # a list's map takes the blank line after it
            end -= 1
        text = "\n".join(lines[start:end])
        kind = token.type.removesuffix("_open")
        if loose_lists and kind in ("bullet_list", "ordered_list") and token.level == 0 and "\n\n" in text:
            inside = 2  # list, item, then the item's blocks
        elif token.type in _DIRECTIVE_FENCES and token.info.startswith("{") and "}" in token.info:
            name, _, arg = token.info[1:].partition("}")
            out.append(Block("directive", text, start, end, name=name, arg=arg.strip(), body=token.content))
        elif token.type == "myst_target":
            out.append(Block(kind, text, start, end, name=token.content))
        elif token.type == "heading_open":
            out.append(Block(kind, text, start, end, level=int(token.tag[1:])))
        else:
            out.append(Block(kind, text, start, end))
    return out


def directives(source: str, name: str) -> list[Block]:
    """Every top-level ``{name}`` directive of ``source``, in order."""
    return [b for b in blocks(source) if b.kind == "directive" and b.name == name]


def without(source: str, name: str) -> str:
    """``source`` with every top-level ``{name}`` directive removed (and the blank lines after it)."""
    lines = source.splitlines()
    for block in reversed(directives(source, name)):
        end = block.end
        while end < len(lines) and not lines[end].strip():
            end += 1
        del lines[block.start : end]
    return "\n".join(lines)


def options(body: str) -> tuple[dict[str, str], str]:
    """A directive's ``:name: value`` options and the content after them."""
    lines, found = body.splitlines(), {}
    i = 0
    while i < len(lines) and (option := _OPTION.match(lines[i])):
        found[option.group(1)] = option.group(2)
        i += 1
    return found, "\n".join(lines[i:]).strip("\n")
