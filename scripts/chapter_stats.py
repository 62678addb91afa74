"""Per-chapter counts and reading times for teaching.md (`python -m scripts.chapter_stats`).

Counted from the committed notebooks, in the order of _toc.yml:

* prose words: the words of the Markdown cells a reader reads, exercises included, solutions (the bodies of
  ``{solution}`` directives) and MyST syntax (directive fences and options, labels, a code block's fences
  but its language) excluded, as the book's parser reads it (scripts/myst.py);
* display equations: ``$$`` blocks in that prose;
* code cells shown: code cells less the set-up cell and the folded checks of solutions (tagged
  ``solution-check``);
* figures: outputs with a picture (image/png); interactive figures: widget outputs (explorer, stepper,
  calculator), counted once each whatever static views they carry;
* exercises: ``{exercise}`` directives;
* slides: the slides and sub-slides of the chapter's deck (scripts/tag_slides.py).

Reading time is a range, from a first reading to a newcomer's study, rounded to 5 minutes. Prose is read at
238 words a minute at the fast end, the mean silent reading rate of adults for English non-fiction in
Brysbaert's meta-analysis of 190 studies (2019, Journal of Memory and Language 109, 104047), and at 175 words
a minute at the slow end, the lower end of the range (175-300) in which most adults fall there. Everything
else a reader meets is given a time of its own, an assumption of this book rather than a measurement: per
code cell shown (reading the code and what it prints; at the slow end, predicting the output first) 1 to 2
minutes, per display equation 0.5 to 1 minute, per figure 1 to 2 minutes, per interactive figure (trying its
controls) 2 to 5 minutes. Exercises are not included. With ``--markdown`` it prints the two tables
that teaching.md shows; with ``--path``, the same ranges for the sections of intro.md's short path
(:func:`section_stats` counts any sections of a chapter).

With ``--budget`` it prints the three numbers the book's reading budget is set in (:func:`budget`), per
main chapter (the chapters of _toc.yml but the appendices, ``appendix_*``) and in all: the
whitespace-separated words of every Markdown cell; the words of the printed output (streams, ``text/plain``,
and HTML other than an interactive figure's root, as text), outputs with a picture excluded; and the lines of
code cells shown (not tagged ``remove-input``, ``hide-input``, ``remove-cell`` or ``hide-cell``).
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import nbformat

from _ext.figure_roots import figure_roots
from scripts import ROOT, myst
from scripts.build_slides import chapters
from scripts.tag_slides import References, slide_notebook


@dataclass(frozen=True)
class Pace:
    """Minutes per item at one end of the range (see the module's docstring for where each comes from)."""

    words_per_minute: float
    code_cell: float
    equation: float
    figure: float
    interactive: float


FIRST_READING = Pace(words_per_minute=238, code_cell=1.0, equation=0.5, figure=1.0, interactive=2.0)
STUDY = Pace(words_per_minute=175, code_cell=2.0, equation=1.0, figure=2.0, interactive=5.0)

MATH_BLOCKS = {"math_block", "math_block_label"}  # a display equation: $$ ... $$


@dataclass
class Stats:
    chapter: str
    title: str
    words: int
    equations: int
    code_cells: int
    figures: int
    interactive: int
    exercises: int
    slides: int

    def minutes(self, pace: Pace) -> float:
        """Reading time at ``pace``, not rounded."""
        return (
            self.words / pace.words_per_minute
            + self.code_cells * pace.code_cell
            + self.equations * pace.equation
            + self.figures * pace.figure
            + self.interactive * pace.interactive
        )

    @property
    def reading_minutes(self) -> tuple[float, float]:
        """(first reading, a newcomer's study), in minutes."""
        return self.minutes(FIRST_READING), self.minutes(STUDY)

    @property
    def rounded_minutes(self) -> tuple[int, int]:
        return tuple(max(5, 5 * round(m / 5)) for m in self.reading_minutes)


def chapter_stats(path: Path, refs: References) -> Stats:
    nb = nbformat.read(path, as_version=4)
    title, *counts = _counts(nb.cells)
    deck = slide_notebook(nb, refs, path.parent)
    slides = sum(c.metadata["slideshow"]["slide_type"] in ("slide", "subslide") for c in deck.cells)
    return Stats(path.stem, title.strip(), *counts, slides)


def section_stats(path: Path, headings: list[str]) -> Stats:
    """The counts of the ``##`` sections of the chapter at ``path`` with these headings (their text after
    ``## ``; ``""`` for the opening before the first section), as :func:`chapter_stats` counts a chapter
    (no slides). A Markdown cell that opens a section in its middle counts its text before the heading with
    the section before."""
    nb = nbformat.read(path, as_version=4)
    cells, heading, found = [], "", {""}
    for cell in nb.cells:
        parts = [cell]
        if cell.cell_type == "markdown":
            pieces = re.split(r"^(?=## )", cell.source, flags=re.M)
            parts = [nbformat.v4.new_markdown_cell(piece) for piece in pieces if piece]
        for part in parts:
            if part.cell_type == "markdown" and part.source.startswith("## "):
                heading = part.source.splitlines()[0][3:].strip()
                found.add(heading)
            if heading in headings:
                cells.append(part)
    setup = next(c for c in nb.cells if c.cell_type == "code")
    if missing := set(headings) - found:
        raise ValueError(f"{path.stem} has no section {sorted(missing)}")
    title, *counts = _counts([c for c in cells if c is not setup], skip_first_code=False)
    return Stats(path.stem, title.strip(), *counts, 0)


def _counts(cells: list, *, skip_first_code: bool = True) -> tuple[str, int, int, int, int, int, int]:
    """``(title, words, equations, code cells, figures, interactive, exercises)`` of these cells; the first
    code cell is the set-up cell, not counted, unless ``skip_first_code`` is false."""
    words = equations = exercises = code_cells = figures = interactive = 0
    title = ""
    first_code = skip_first_code
    for cell in cells:
        if cell.cell_type == "markdown":
            exercises += len(myst.directives(cell.source, "exercise"))
            text = myst.without(cell.source, "solution")
            found = list(myst.walk(text))
            equations += sum(token.type in MATH_BLOCKS for token, _ in found)
            syntax = _syntax_lines(text, found)
            words += sum(len(line.split()) for i, line in enumerate(text.splitlines()) if i not in syntax)
            title = title or _h1(myst.tokens(text))
        elif cell.cell_type == "code":
            if first_code or myst.SOLUTION_CHECK in myst.tags(cell):
                first_code = False
                continue
            code_cells += 1
            for out in cell.outputs:
                data = out.get("data", {})
                if "application/vnd.jupyter.widget-view+json" in data:
                    interactive += 1
                elif "image/png" in data:
                    figures += 1
    return title, words, equations, code_cells, figures, interactive, exercises


def _syntax_lines(text: str, found: list) -> set[int]:
    """The lines of ``text`` that hold MyST's syntax rather than words (``found``: the tokens of ``text``,
    :func:`myst.walk`): a directive's fences and options, a target, a code block's fences but its language."""
    lines, syntax = text.splitlines(), set()
    for token, first in found:
        if token.map is None or token.type not in ("fence", "colon_fence", "myst_target"):
            continue
        start, end = first + token.map[0], first + token.map[1]
        if token.type == "myst_target":
            syntax.add(start)
            continue
        if myst.directive(token):
            syntax |= set(range(start, start + 1 + myst.read_body(token.content)[2]))  # fence, options
        elif not token.info.strip():
            syntax.add(start)
        if end - 1 > start and set(lines[end - 1].strip()) == {token.markup[0]}:  # its closing fence
            syntax.add(end - 1)
    return syntax


def _h1(tokens: list) -> str:
    """The text of the first top-level heading (``# ...``) of a Markdown source's tokens, or ""."""
    for token, following in itertools.pairwise(tokens):
        if token.type == "heading_open" and token.tag == "h1" and token.level == 0:
            return following.content
    return ""


HIDDEN_CODE = {"remove-input", "hide-input", "remove-cell", "hide-cell"}  # a code cell the page does not show
BUDGET = {"markdown_words": 26_000, "output_words": 9_000, "code_lines": 1_800}  # the main chapters, in all


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _output_words(output: dict) -> int:
    """The words a reader reads in one output: none for a picture or an interactive figure's root."""
    if output.get("output_type") == "stream":
        return len(str(output.get("text", "")).split())
    data = output.get("data", {})
    if any(kind.startswith("image/") for kind in data):
        return 0
    html = "".join(data.get("text/html", ""))
    if html:
        if figure_roots(html):
            return 0
        parser = _Text()
        parser.feed(html)
        return len(" ".join(parser.parts).split())
    return len("".join(data.get("text/plain", "")).split())


def budget(path: Path) -> dict[str, int]:
    """A chapter's three numbers of the reading budget (the module's docstring has the rule)."""
    nb = nbformat.read(path, as_version=4)
    counts = dict.fromkeys(BUDGET, 0)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            counts["markdown_words"] += len(cell.source.split())
        elif cell.cell_type == "code" and not HIDDEN_CODE & set(cell.metadata.get("tags", [])):
            counts["code_lines"] += len(cell.source.splitlines())
        if cell.cell_type == "code":
            counts["output_words"] += sum(_output_words(output) for output in cell.get("outputs", []))
    return counts


def main_chapters() -> list[Path]:
    """The chapters of _toc.yml the budget counts: all but the appendices."""
    return [path for path in chapters() if not path.stem.startswith("appendix_")]


def all_stats() -> list[Stats]:
    refs = References()
    return [chapter_stats(p, refs) for p in chapters()]


def markdown(stats: list[Stats]) -> str:
    """The two tables of teaching.md, each chapter by its short title (up to a colon): what a lecturer plans
    with (reading time, exercises, slides), then what the reading time is computed from."""

    def table(columns: list[str], cells) -> list[str]:
        rows = ["| chapter | " + " | ".join(columns) + " |", "| --- |" + " ---: |" * len(columns)]
        for s in stats:
            link = f"{{doc}}`{s.title.split(':')[0].strip()} <chapters/{s.chapter}>`"
            rows.append(f"| {link} | " + " | ".join(cells(s)) + " |")
        return rows

    def plan(s: Stats) -> list[str]:
        low, high = s.rounded_minutes
        return [f"{low}–{high} min", str(s.exercises), str(s.slides)]

    def counts(s: Stats) -> list[str]:
        return [f"{s.words:,}", str(s.equations), str(s.code_cells), str(s.figures), str(s.interactive)]

    first = table(["reading", "exercises", "slides"], plan)
    second = table(["words", "equations", "code cells", "figures", "interactive"], counts)
    return "\n".join([*first, "", *second])


SHORT_PATH = "## A short path: three hours"  # the section of intro.md that plans a reader's three hours
_PATH_ITEM = re.compile(r"^\d+\. \{doc\}`[^`<]*<chapters/(\w+)>`: (.*?) \((\d+)–(\d+) min\)\.?$", re.M)


def short_path(intro: str) -> list[tuple[str, list[str], tuple[int, int]]]:
    """The items of intro.md's short path: ``(chapter, headings, (fast, slow) minutes as stated)``, the
    headings as :func:`section_stats` takes them (``"the opening"`` is ``""``)."""
    section = intro.split(SHORT_PATH, 1)[1].split("\n## ", 1)[0]
    items = []
    for chapter, sections, fast, slow in _PATH_ITEM.findall(re.sub(r"\n +", " ", section)):
        headings = re.findall(r"the opening|\*([^*]+)\*", sections)  # the opening's group is ""
        items.append((chapter, headings, (int(fast), int(slow))))
    return items


def path_stats(intro: str) -> list[tuple[Stats, tuple[int, int]]]:
    """Each item of the short path, counted (:func:`section_stats`), with the minutes it states."""
    folder = {path.stem: path for path in chapters()}
    return [(section_stats(folder[c], headings), stated) for c, headings, stated in short_path(intro)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the table of teaching.md")
    parser.add_argument("--path", action="store_true", help="the minutes of intro.md's short path")
    parser.add_argument(
        "--budget", action="store_true", help="the reading budget's three numbers per chapter"
    )
    args = parser.parse_args(argv)
    if args.budget:
        rows = {path.stem: budget(path) for path in main_chapters()}
        print(f"{'chapter':22}" + "".join(f"{name:>16}" for name in BUDGET))
        for stem, counts in rows.items():
            print(f"{stem:22}" + "".join(f"{counts[name]:>16,}" for name in BUDGET))
        total = {name: sum(counts[name] for counts in rows.values()) for name in BUDGET}
        print(f"{'in all':22}" + "".join(f"{total[name]:>16,}" for name in BUDGET))
        print(f"{'budget':22}" + "".join(f"{BUDGET[name]:>16,}" for name in BUDGET))
        return 0
    if args.path:
        items = path_stats((ROOT / "intro.md").read_text(encoding="utf-8"))
        for s, (fast, slow) in items:
            low, high = s.rounded_minutes
            print(f"{s.chapter:20} {low}–{high} min (intro.md says {fast}–{slow})")
        print(f"{'in all':20} {sum(s.reading_minutes[1] for s, _ in items):.0f} min at the slow end")
        return 0
    stats = all_stats()
    if args.markdown:
        print(markdown(stats))
        return 0
    for s in stats:
        low, high = s.reading_minutes
        print(f"{s.chapter:20} {low:5.1f} to {high:5.1f} min  {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
