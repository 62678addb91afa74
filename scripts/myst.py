"""The chapters' MyST Markdown and their cell tags, read as the book's build reads them.

Markdown is parsed by myst-parser's markdown-it parser with the book's extensions (``_config.yml``'s
``myst_enable_extensions``), the one Jupyter Book uses, so a directive, a fence, an equation or a label is
what the site makes of it, not what a regular expression guesses; the scripts read Markdown only through
this module. :func:`tokens` gives markdown-it's tokens of a source and :func:`inline` those of a line of text
(a title); :func:`walk` gives the tokens of a source and of its directives' content, each with the line it is
on. :func:`blocks` gives a source's top-level blocks with their source lines; :func:`directives` and
:func:`without` find and remove a directive (``{exercise}``, ``{solution}``) whatever its fence (three or
more backticks, or colons), :func:`directive` reads a directive's name and argument, and :func:`options` and
:func:`read_body` its options as MyST's directive parser reads them. :func:`roles` finds the roles of a text
where they are written, :func:`tables` the cells of its tables.

Cells are known by their tags (CONTRIBUTING.md): :data:`SOLUTION_CHECK` marks the folded code cell that runs
the check of an exercise's solution, :data:`EXERCISE_PREAMBLE` the Markdown cell that says, under "Exercises",
how the solutions are given. The student edition, the PDF and the lecture decks read them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import yaml
from docutils.parsers.rst import Directive
from markdown_it.token import Token
from myst_parser.parsers.directives import parse_directive_text

SOLUTION_CHECK = "solution-check"  # a folded code cell that checks an exercise's solution
EXERCISE_PREAMBLE = "exercise-preamble"  # a Markdown cell that says how the solutions are given

_DIRECTIVE_FENCES = ("fence", "colon_fence")


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


def tokens(source: str) -> list[Token]:
    """markdown-it's tokens of ``source``: its blocks, in order, nested ones too (a list's items, a table's
    cells), each text's own tokens the ``children`` of an ``inline`` token; a directive is one ``fence`` or
    ``colon_fence`` token, its content unparsed (:func:`walk` parses it)."""
    return _parser().parse(source)


def inline(text: str) -> list[Token]:
    """The inline tokens of a line of text, such as a heading's or a directive's title (``text``,
    ``code_inline``, ``math_inline``, ``myst_role``, ``link_open``, ...)."""
    (line,) = _parser().parseInline(text)
    return line.children or []


def directive(token: Token) -> tuple[str, str] | None:
    """A directive's name and argument (``{exercise} Predict, then check``), or ``None`` for any other token
    (a code fence among them)."""
    if token.type not in _DIRECTIVE_FENCES or not token.info.startswith("{") or "}" not in token.info:
        return None
    name, _, arg = token.info[1:].partition("}")
    return name, arg.strip()


def walk(source: str, line: int = 0) -> Iterator[tuple[Token, int]]:
    """Every token of ``source`` and, parsed in turn, of each of its directives' content (options and
    body), with the line that the token's ``map`` counts from (``line`` for ``source``'s own)."""
    for token in tokens(source):
        yield token, line
        if directive(token) and token.map:
            yield from walk(token.content, line + token.map[0] + 1)


@dataclass(frozen=True)
class Block:
    """A top-level block of a Markdown source.

    ``kind`` is markdown-it's token type without ``_open`` (``heading``, ``paragraph``, ``bullet_list``,
    ``table``, ``fence``, ``math_block``, ``myst_target``, ...) or ``directive``; ``text`` is the block's
    source lines; ``start`` and ``end`` its line numbers (from 0, ``end`` excluded). A directive has its
    ``name``, its argument ``arg`` and its ``body`` (options and content, as written); a heading its
    ``level``; a target (``(label)=``) its label as ``name``; a comment (``% ...``, ``myst_line_comment``) its
    lines' text after the ``%`` as ``body``, one line each.
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
    out, inside = [], None  # inside: the level of a loose list's items' blocks, while in one
    for token in tokens(source):
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
        elif found := directive(token):
            name, arg = found
            out.append(Block("directive", text, start, end, name=name, arg=arg, body=token.content))
        elif token.type == "myst_target":
            out.append(Block(kind, text, start, end, name=token.content))
        elif token.type == "myst_line_comment":
            out.append(Block(kind, text, start, end, body=token.content))
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


def tables(source: str) -> list[list[list[str]]]:
    """The tables of ``source``, in order: each a list of rows (its header row first), each row its cells'
    text as written (an escaped ``\\|`` read as ``|``)."""
    found, inside = [], False
    for token in tokens(source):
        if token.type in ("table_open", "table_close"):
            inside = token.type == "table_open"
            found += [[]] if inside else []
        elif inside and token.type == "tr_open":
            found[-1].append([])
        elif inside and token.type == "inline":  # a cell's text
            found[-1][-1].append(token.content)
    return found


class _EveryOption(dict):
    """A directive's option spec that takes every option, its value as written (MyST checks none)."""

    def __bool__(self) -> bool:
        return True

    def __missing__(self, name: str):
        return lambda value: value or ""


class _AnyDirective(Directive):
    """What MyST needs to know of a directive to read its options: a directive with any options, one argument
    and content."""

    option_spec = _EveryOption()
    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True


def read_body(body: str) -> tuple[dict[str, str], str, int]:
    """A directive's body as MyST's directive parser reads it: its options (``:name: value`` lines, or a YAML
    block between ``---`` lines), its content after them, and the content's first line in ``body``."""
    parsed = parse_directive_text(_AnyDirective, "", body)
    return dict(parsed.options), "\n".join(parsed.body), parsed.body_offset


def options(body: str) -> tuple[dict[str, str], str]:
    """A directive's options and the content after them (:func:`read_body`), the content's blank lines at
    either end left out."""
    found, content, _ = read_body(body)
    return found, content.strip("\n")


@dataclass(frozen=True)
class Role:
    """A role of a text (``{ref}`the scaling <the-math-scaling>```) and where it is: ``text[start:end]``."""

    name: str
    content: str  # what the backticks hold (a line break read as a space)
    start: int
    end: int


def roles(text: str) -> list[Role]:
    """The roles of ``text`` that the parser reads as roles (not one inside inline code or a code block), in
    order, each with where it is written."""
    found, at = [], 0  # at: where the text after the last role found starts
    for token in tokens(text):
        for child in token.children or []:
            if child.type == "myst_role":
                found.append(_written(text, child, at))
                at = found[-1].end
    return found


def _written(text: str, token: Token, at: int) -> Role:
    """Where ``text`` holds the role that ``token`` is, at ``at`` or after it: its name in braces, a run of
    backticks, its content and as many backticks again."""
    name = token.meta["name"]
    start = text.find(f"{{{name}}}`", at)
    while start >= 0:
        opening = start + len(name) + 2
        ticks = len(text[opening:]) - len(text[opening:].lstrip("`"))
        body = opening + ticks
        close = text.find("`" * ticks, body + 1)
        if close >= 0 and text[body:close].split() == token.content.split():
            return Role(name, token.content, start, close + ticks)
        start = text.find(f"{{{name}}}`", start + 1)
    raise ValueError(f"the role {{{name}}}`{token.content}` is not in the text after position {at}")
