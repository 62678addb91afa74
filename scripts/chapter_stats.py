"""Per-chapter counts and reading times for teaching.md (`python scripts/chapter_stats.py`).

Counted from the committed notebooks, in the order of _toc.yml:

* prose words: the words of the Markdown cells a reader reads, exercises included, solutions (the bodies of
  ``{solution}`` directives) and MyST syntax (directive fences and options, labels) excluded;
* code cells shown: code cells less the set-up cell and the folded ``hide-cell`` checks of solutions;
* figures: outputs with a picture (image/png); interactive figures: widget outputs (explorer, stepper,
  calculator), counted once each whatever static views they carry;
* exercises: ``{exercise}`` directives;
* slides: the slides and sub-slides of the chapter's deck (scripts/tag_slides.py).

Reading time = prose words / 200 words a minute + 0.5 min per code cell shown (read the code and its
printed output) + 1 min per figure or interactive figure, rounded to the nearest 5 minutes. The 200
words a minute is slower than for plain prose (about 240) because the text is technical and has equations.
With ``--markdown`` it prints the table that teaching.md shows.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_slides import chapters
from tag_slides import References, slide_notebook

WORDS_PER_MINUTE = 200
MINUTES_PER_CODE_CELL = 0.5
MINUTES_PER_FIGURE = 1.0

_SOLUTION = re.compile(r"^(`{3,})\{solution\}.*?^\1\s*$", re.M | re.S)
_MYST_LINE = re.compile(r"^(`{3,}|:{3,})(\{[\w:-]+\}.*)?$|^:[\w-]+:.*$|^\([\w-]+\)=\s*$")


@dataclass
class Stats:
    chapter: str
    title: str
    words: int
    code_cells: int
    figures: int
    interactive: int
    exercises: int
    slides: int

    @property
    def reading_minutes(self) -> float:
        return (
            self.words / WORDS_PER_MINUTE
            + self.code_cells * MINUTES_PER_CODE_CELL
            + (self.figures + self.interactive) * MINUTES_PER_FIGURE
        )

    @property
    def rounded_minutes(self) -> int:
        return max(5, 5 * round(self.reading_minutes / 5))


def chapter_stats(path: Path, refs: References) -> Stats:
    nb = nbformat.read(path, as_version=4)
    words = exercises = code_cells = figures = interactive = 0
    title = ""
    first_code = True
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            exercises += len(re.findall(r"^`{3,}\{exercise\}", cell.source, re.M))
            text = _SOLUTION.sub("", cell.source)
            lines = [line for line in text.splitlines() if not _MYST_LINE.match(line.strip())]
            words += len(" ".join(lines).split())
            title = title or next((line[2:] for line in lines if line.startswith("# ")), "")
        elif cell.cell_type == "code":
            if first_code or "hide-cell" in cell.metadata.get("tags", []):
                first_code = False
                continue
            code_cells += 1
            for out in cell.outputs:
                data = out.get("data", {})
                if "application/vnd.jupyter.widget-view+json" in data:
                    interactive += 1
                elif "image/png" in data:
                    figures += 1
    deck = slide_notebook(nb, refs, path.parent)
    slides = sum(c.metadata["slideshow"]["slide_type"] in ("slide", "subslide") for c in deck.cells)
    return Stats(path.stem, title.strip(), words, code_cells, figures, interactive, exercises, slides)


def all_stats() -> list[Stats]:
    refs = References()
    return [chapter_stats(p, refs) for p in chapters()]


def markdown(stats: list[Stats]) -> str:
    columns = ["chapter", "prose words", "code cells", "figures", "interactive figures", "exercises"]
    rows = [
        "| " + " | ".join([*columns, "slides", "reading"]) + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in stats:
        rows.append(
            f"| {{doc}}`chapters/{s.chapter}` | {s.words:,} | {s.code_cells} | {s.figures} | {s.interactive} "
            f"| {s.exercises} | {s.slides} | about {s.rounded_minutes} min |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the table of teaching.md")
    args = parser.parse_args(argv)
    stats = all_stats()
    if args.markdown:
        print(markdown(stats))
        return 0
    for s in stats:
        print(f"{s.chapter:20} {s.reading_minutes:5.1f} min  {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
