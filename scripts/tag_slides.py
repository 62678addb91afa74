"""Shape a chapter notebook into a lecture deck: split its Markdown, make MyST plain Markdown, tag slides.

`make slides` (scripts/build_slides.py) runs this on copies of the chapters; the committed notebooks are never
changed, so the decks follow the chapters whenever they are rebuilt. Everything is derived from the
notebook's structure, by these rules:

* Markdown cells are split into blocks (a heading, a paragraph, a list, a table, a code fence, a display
  equation, a directive), one cell each, so that each block can be placed on its own. The blocks are those
  myst-parser's tokens give (scripts/myst.py), as the book's build reads the same Markdown.
* The H1 opens the title slide; each H2 opens a slide (``slide``), each H3 a vertical sub-slide
  (``subslide``). A block that would overflow the current (sub-)slide starts a new ``subslide``; the budget
  is a rough count of lines (prose wrapped at 95 characters, code and text outputs line by line, a figure
  or an interactive figure as a large fixed block).
* Prose paragraphs longer than 70 words go to the speaker notes (``notes``, press S in the deck), and
  their first sentence, if short, stays on the slide: the slide keeps the headings, equations, lists,
  tables, code, outputs and figures.
* ``skip``: the set-up and import cells (code before the first H2), cells tagged ``solution-check`` (the
  folded checks of exercise solutions), ``hide-cell`` or ``remove-cell``, and every ``{solution}`` directive.
* Each exercise gets a sub-slide of its own, without its solution (and without the cell tagged
  ``exercise-preamble``, which speaks of the book's folded solutions).
* Code: comments for the test harness (``# nbval-...`` and the comment lines that continue them) are left
  out; a cell of more than 8 lines of code shows only its output on the slide, its code goes to the speaker
  notes (a cell without output goes to the notes whole).
* Each figure (a picture, or an interactive figure: an output :func:`is_figure`) starts a sub-slide of its
  own, so that it can be drawn large: the deck's template scales a picture up to 1.3 times (10 pt labels at
  100 dpi become about 18 px) within the slide.
* The title slide holds the chapter's number and title, the book's title and version, the chapter's first
  sentence(s) and its sections.
* Text outputs longer than 14 lines are cut to their first 10 lines plus a line saying how many were left
  out; ``hide-output``/``remove-output`` cells show no output, ``hide-input``/``remove-input`` cells no code.
* MyST that nbconvert cannot render becomes Markdown: ``{cite}`` and ``{cite:t}`` become author-year text
  from references.bib, ``{doc}`` a chapter's title, ``{ref}``/``{numref}`` the heading or exercise they
  point to, ``{literalinclude}`` with ``:pyobject:`` the included code, ``(label)=`` targets disappear.

A Chinese chapter (``zh/chapters/``, ``lang="zh"``) follows the same rules, with the deck's own words in
Chinese (scripts/texts.py's ``ui``), its words counted as Chinese is read (two characters a word), and a
character as wide as two letters when a line's length is estimated.

Run by hand to see the shape of the decks: ``python -m scripts.tag_slides chapters/*.ipynb`` prints, per
chapter, the slide type of every cell of the prepared copy.
"""

from __future__ import annotations

import argparse
import ast
import copy
import math
import re
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import nbformat

from _ext.harness_comments import strip_harness_comments  # the site leaves out the same lines
from scripts import myst
from scripts.texts import ui

ROOT = Path(__file__).resolve().parents[1]

SLIDE_LINES = 22  # lines of text that fit on a 1280 x 800 slide under its heading
FIGURE_LINES = 22  # a matplotlib figure or an interactive figure takes a slide of its own
CODE_MAX_LINES = 8  # longer cells show their output only; the code goes to the speaker notes
NOTES_WORDS = 70  # prose paragraphs longer than this go to the speaker notes
OUTPUT_MAX_LINES, OUTPUT_KEEP_LINES = 14, 10
SKIP_TAGS = {myst.SOLUTION_CHECK, "hide-cell", "remove-cell"}
NO_OUTPUT_TAGS = {"hide-output", "remove-output"}
NO_INPUT_TAGS = {"hide-input", "remove-input"}

# An output that is a figure: a picture, or an interactive figure (its static page, text/html).
FIGURE_TYPES = {"image/png", "image/svg+xml", "text/html"}
RAW_BLOCKS = {"fence", "code_block", "math_block", "amsmath"}  # shown as written: no role to resolve
_WIDE = re.compile(
    r"[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]"
)
LANGUAGES = ("en", "zh")


# ---------------------------------------------------------------------------------------------------------
# Cross-references: labels, chapter titles and citations, read from the book's own files
# ---------------------------------------------------------------------------------------------------------


class References:
    """What a role points to: chapter titles by file stem, labelled headings and exercises, citations."""

    def __init__(self, root: Path = ROOT, *, lang: str = "en"):
        self.lang = lang  # the language of the chapters and of the deck's own words
        self.titles: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        chapters = root / "chapters" if lang == "en" else root / lang / "chapters"
        for path in sorted(chapters.glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            pending = None  # a target's label, waiting for the heading it names
            for cell in nb.cells:
                if cell.cell_type != "markdown":
                    continue
                for block in myst.blocks(cell.source):
                    if block.kind == "heading" and block.level == 1 and path.stem not in self.titles:
                        self.titles[path.stem] = _heading(block)
                    if block.kind == "myst_target":
                        pending = block.name
                    elif block.kind == "heading" and pending:
                        self.labels[pending], pending = _heading(block), None
                    elif block.kind == "directive" and block.name == "exercise":
                        label = myst.options(block.body)[0].get("label")
                        if label:
                            self.labels[label] = ui('exercise "{title}"', lang).format(title=block.arg)
        self.citations = _read_bib(root / "references.bib")

    def role(self, role: str, body: str) -> str:
        text, _, target = body.partition(" <")
        if target:  # {doc}`text <target>`
            return text
        if role == "doc":
            return f"*{self.titles.get(Path(body).stem, body)}*"
        if role in ("ref", "numref"):
            return self.labels.get(body, body)
        if role in ("cite", "cite:p", "cite:t"):
            keys = [k.strip() for k in body.split(",")]
            found = [self.citations.get(k, (k, "")) for k in keys]
            if role == "cite:t":
                return "; ".join(f"{who} ({year})" for who, year in found)
            return "(" + "; ".join(f"{who}, {year}" for who, year in found) + ")"
        if role == "math":
            return f"${body}$"
        return f"`{body}`"

    def inline(self, text: str) -> str:
        """``text`` with each of its roles (:func:`myst.roles`) written as Markdown."""
        out, done = [], 0
        for role in myst.roles(text):
            out += [text[done : role.start], self.role(role.name, role.content)]
            done = role.end
        return "".join(out) + text[done:]


def _heading(block: myst.Block) -> str:
    """A heading's text, without its ``#`` marks."""
    return block.text.strip().lstrip("#").strip()


def _read_bib(path: Path) -> dict[str, tuple[str, str]]:
    """key -> (first author's last name, plus "et al." or the second author, year)."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(path)).entries.items():
        people = entry.persons.get("author", [])
        last = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
        who = " and ".join(last) if len(last) <= 2 else f"{last[0]} et al."
        out[key] = (who or key, entry.fields.get("year", ""))
    return out


# ---------------------------------------------------------------------------------------------------------
# Markdown: MyST to plain Markdown, cut into blocks
# ---------------------------------------------------------------------------------------------------------


def _pyobject(path: Path, name: str) -> str:
    """The source of a function, class or method (``Class.method``) of a Python file."""
    source = path.read_text()
    nodes: Iterable[ast.AST] = ast.parse(source).body
    node = None
    for part in name.split("."):
        node = next(n for n in nodes if getattr(n, "name", None) == part)
        nodes = node.body
    lines = source.splitlines()
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    return textwrap.dedent("\n".join(lines[start : node.end_lineno]))


def _directive(name: str, arg: str, body: str, refs: References, base: Path) -> list[str]:
    """One MyST directive as Markdown blocks (an empty list drops it)."""
    options, content = myst.options(body)
    if name == "solution":
        return []
    if name == "exercise":
        return [
            ui("**Exercise: {title}**", refs.lang).format(title=refs.inline(arg)),
            *split_markdown(content, refs, base),
        ]
    if name == "literalinclude":
        code = (base / arg).read_text()
        if "pyobject" in options:
            code = _pyobject(base / arg, options["pyobject"])
        return [f"```{options.get('language', '')}\n{code.rstrip()}\n```"]
    if name == "math":
        return [f"$$\n{content}\n$$"]
    if name in ("code-cell", "code-block", "code"):
        return [f"```{arg}\n{content}\n```"]
    title = refs.inline(arg) or name.capitalize()
    return [f"**{title}**", *split_markdown(content, refs, base)]


def split_markdown(source: str, refs: References, base: Path) -> list[str]:
    """Cut MyST Markdown into plain-Markdown blocks: headings, paragraphs, lists, tables, fences, maths."""
    out = []
    for block in myst.blocks(source, loose_lists=True):
        if block.kind == "myst_target":  # (label)= : the deck has no cross-reference to land on it
            continue
        if block.kind == "directive":
            out += _directive(block.name, block.arg, block.body, refs, base)
        elif block.kind in RAW_BLOCKS:
            out.append(block.text)
        else:
            out.append(refs.inline(block.text))
    return [b for b in out if b.strip()]


# ---------------------------------------------------------------------------------------------------------
# Sizes and slide types
# ---------------------------------------------------------------------------------------------------------


def _width(text: str) -> int:
    """The width of ``text`` in letters: a Chinese character is as wide as two."""
    return len(text) + len(_WIDE.findall(text))


def _text_lines(text: str, width: int) -> int:
    return sum(max(1, math.ceil(_width(line) / width)) for line in text.splitlines() or [""])


def _words(text: str, lang: str) -> int:
    """Words to read: in Chinese, two characters make a word (and the Latin words count as words)."""
    if lang == "en":
        return len(text.split())
    return len(_WIDE.findall(text)) // 2 + len(_WIDE.sub(" ", text).split())


def _exercise_prefixes() -> tuple[str, ...]:
    """How an exercise's title block starts, in each language: ``**Exercise: `` (tag_slides writes it)."""
    return tuple(ui("**Exercise: {title}**", lang).split("{title}")[0] for lang in LANGUAGES)


def _is_prose(block: str) -> bool:
    """A paragraph of text: not a heading, table, fence, display equation, quote, list or exercise."""
    return [b.kind for b in myst.blocks(block)] == ["paragraph"] and not block.lstrip().startswith(
        _exercise_prefixes()
    )


def _lead(paragraph: str) -> str:
    """The first sentence of a paragraph, if it is short and ends outside an equation; else ""."""
    m = re.match(r"^(.+?[.!?:])\s+(?=[A-Z*(`])", paragraph, re.S) or re.match(
        r"^(.+?[。！？：])(?=.)", paragraph, re.S
    )
    if not m or _width(m.group(1)) > 220 or m.group(1).count("$") % 2:
        return ""
    return m.group(1)


def _cut_output(text: str, lang: str = "en") -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) <= OUTPUT_MAX_LINES:
        return text
    kept = "\n".join(lines[:OUTPUT_KEEP_LINES])
    return (
        f"{kept}\n"
        + ui("… ({count} more lines in the book)", lang).format(count=len(lines) - OUTPUT_KEEP_LINES)
        + "\n"
    )


def is_figure(output) -> bool:
    """Whether a code cell's output is a figure: a picture, or an interactive figure's page (text/html)."""
    return output.output_type in ("display_data", "execute_result") and bool(
        FIGURE_TYPES & set(output.get("data", {}))
    )


def has_figure(cell) -> bool:
    """Whether a code cell's outputs hold a figure (:func:`is_figure`)."""
    return any(is_figure(out) for out in cell.get("outputs", []))


def _prepare_code(cell, lang: str = "en") -> int:
    """Trim a code cell for a slide, in place; return its height in lines."""
    tags = set(cell.metadata.get("tags", []))
    if tags & NO_OUTPUT_TAGS:
        cell.outputs = []
    if tags & NO_INPUT_TAGS:
        cell.source = ""
    cell.source = strip_harness_comments(cell.source)
    if not cell.source.strip():
        cell.metadata["transient"] = {"remove_source": True}  # nbconvert's templates then show no input
    height = _text_lines(cell.source, 100) if cell.source else 0
    text = ""
    for out in cell.outputs:
        if out.output_type == "stream":
            text += out.text
        elif is_figure(out):
            height += FIGURE_LINES
        elif "text/plain" in out.get("data", {}):
            text += out.data["text/plain"] + "\n"
    # merge the cell's streams (as the book does) so that the cut sees the whole printed text
    streams = [o for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"]
    if streams:
        merged = copy.deepcopy(streams[0])
        merged.text = _cut_output("".join(o.text for o in streams), lang)
        first = cell.outputs.index(streams[0])
        cell.outputs = [o for o in cell.outputs if o not in streams]
        cell.outputs.insert(first, merged)
    return height + min(_text_lines(text, 110), OUTPUT_KEEP_LINES + 1)


def title_slide(nb: nbformat.NotebookNode, refs: References, *, number: int | None, book: str) -> list[str]:
    """Markdown blocks under the H1: the book and chapter, the chapter's first sentences, its sections."""
    sections, lead = [], ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for block in myst.blocks(cell.source):
            exercises = ui("Exercises", refs.lang).lower()
            if block.kind == "heading" and block.level == 2 and _heading(block).lower() != exercises:
                sections.append(refs.inline(_heading(block)))
        if not lead:
            blocks = [b for b in split_markdown(cell.source, refs, Path(".")) if _is_prose(b)]
            if blocks:
                end = r"(?<=[.!?])\s+(?=[A-Z*(`])" + ("" if refs.lang == "en" else r"|(?<=[。！？])")
                sentences = [t for t in re.split(end, " ".join(blocks[0].split())) if t]
                lead = sentences[0]
                if len(sentences) > 1 and _width(lead) + _width(sentences[1]) < 260:
                    lead += (" " if refs.lang == "en" else "") + sentences[1]
    out = [
        ui("*Chapter {number} of {book}*", refs.lang).format(number=number, book=book)
        if number
        else f"*{book}*"
    ]
    if lead:
        out.append(lead)
    if sections:
        out.append(ui("**In this chapter:** ", refs.lang) + " · ".join(sections[:8]))
    return out


def slide_notebook(
    nb: nbformat.NotebookNode, refs: References, base: Path, *, number: int | None = None, book: str = ""
) -> nbformat.NotebookNode:
    """A copy of a chapter shaped into a deck (see the module docstring for the rules).

    ``number`` and ``book`` (the chapter's number, the book's title and version) go on the title slide.
    """
    out = nbformat.v4.new_notebook(metadata=copy.deepcopy(nb.metadata))
    used = 0  # lines used on the current (sub-)slide
    seen_h2 = in_exercises = False
    title = title_slide(nb, refs, number=number, book=book or "Multi-Head Attention, interactively")

    def add(cell, slide_type: str, height: int):
        nonlocal used
        if slide_type in ("slide", "subslide"):
            used = 0
        elif slide_type == "-" and used > 3 and used + height > SLIDE_LINES:
            slide_type, used = "subslide", 0
        if slide_type not in ("skip", "notes"):
            used += height
        cell.metadata["slideshow"] = {"slide_type": slide_type}
        out.cells.append(cell)

    for cell in nb.cells:
        if cell.cell_type == "code":
            code = copy.deepcopy(cell)
            tags = set(code.metadata.get("tags", []))
            if tags:  # nbconvert writes tags into class names: the harness's are left out too
                code.metadata["tags"] = [t for t in code.metadata["tags"] if not t.startswith("nbval")]
            if not seen_h2 or tags & SKIP_TAGS or in_exercises:
                add(code, "skip", 0)
                continue
            figure = None
            shown = not (tags & NO_INPUT_TAGS) and strip_harness_comments(code.source).strip()
            if has_figure(code) and (shown or any(not is_figure(o) for o in code.outputs)):
                figure = copy.deepcopy(code)  # the figure on a sub-slide of its own, below the code and text
                figure.source, figure.metadata["transient"] = "", {"remove_source": True}
                figure["id"] = f"{code.get('id', 'cell')}-figure"[-64:]
                figure.outputs = [o for o in code.outputs if is_figure(o)]
                code.outputs = [o for o in code.outputs if not is_figure(o)]
            height = _prepare_code(code, refs.lang)
            if code.source.count("\n") + 1 > CODE_MAX_LINES:  # the code to the notes, the output on the slide
                notes = nbformat.v4.new_markdown_cell(f"```python\n{code.source}\n```")
                height -= _text_lines(code.source, 100)
                code.source, code.metadata["transient"] = "", {"remove_source": True}
                if not code.outputs:
                    add(notes, "notes", 0)
                    if figure is not None:
                        add(figure, "subslide", FIGURE_LINES)
                    continue
                add(code, "subslide" if has_figure(code) and used > 3 else "-", height)
                add(notes, "notes", 0)
                if figure is not None:
                    add(figure, "subslide", FIGURE_LINES)
                continue
            add(code, "subslide" if has_figure(code) and used > 3 else "-", height)
            if figure is not None:
                add(figure, "subslide", FIGURE_LINES)
            continue
        if cell.cell_type != "markdown":
            continue
        if myst.EXERCISE_PREAMBLE in myst.tags(cell):  # about the book's folded solutions
            add(copy.deepcopy(cell), "skip", 0)
            continue
        for block in split_markdown(cell.source, refs, base):
            md = nbformat.v4.new_markdown_cell(block)
            words = _words(block, refs.lang)
            if block.startswith("# "):
                add(md, "slide", 2)
                for line in title:
                    add(nbformat.v4.new_markdown_cell(line), "-", 2)
                title = []
            elif block.startswith("## "):
                seen_h2 = True
                in_exercises = block[3:].strip().lower() == ui("Exercises", refs.lang).lower()
                add(md, "slide", 2)
            elif block.startswith(("### ", *_exercise_prefixes())):
                add(md, "subslide", 2)
            elif block.startswith(("```", "~~~")) and block.count("\n") - 1 > CODE_MAX_LINES:
                lines = block.count("\n") - 1
                add(
                    nbformat.v4.new_markdown_cell(
                        ui("*The code ({lines} lines) is in the speaker notes.*", refs.lang).format(
                            lines=lines
                        )
                    ),
                    "-",
                    2,
                )
                add(md, "notes", 0)
            elif not seen_h2 and _is_prose(block):
                add(md, "notes", 0)  # the introduction: its first sentences are on the title slide
            elif _is_prose(block) and words > NOTES_WORDS:
                if lead := _lead(block):  # the first sentence on the slide, the paragraph in the notes
                    add(nbformat.v4.new_markdown_cell(lead + " …"), "-", _text_lines(lead, 95) + 1)
                add(md, "notes", 0)
            else:
                add(md, "-", _text_lines(block, 95) + 1)
    return out


def summary(nb: nbformat.NotebookNode) -> str:
    """One line per cell of a prepared deck: its slide type and its first characters."""
    rows = []
    for i, cell in enumerate(nb.cells):
        kind = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        first = cell.source.strip().split("\n")[0][:70]
        rows.append(f"{i:3d} {cell.cell_type[:4]} {kind:9s} {first}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    refs = References()
    for path in args.notebooks:
        nb = slide_notebook(nbformat.read(path, as_version=4), refs, path.parent)
        kinds = [c.metadata["slideshow"]["slide_type"] for c in nb.cells]
        counts = {k: kinds.count(k) for k in ("slide", "subslide", "-", "notes", "skip")}
        print(f"== {path}: {counts}\n{summary(nb)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
