"""Every exercise of every chapter has its solution checked by a folded, executed cell that its tags name.

After each ``{exercise}`` (and its folded ``{solution}``) comes, before the next exercise, exactly one code
cell tagged ``solution-check`` (and ``hide-cell``: folded on the site), which was executed without error and
whose first line names the exercise: ``# Check of the solution to "<its title>"`` (or the title's part before
a colon). No other cell carries the tag, and no solution asserts a result in Markdown (``x == y   # True``):
the check cell prints it. Under "Exercises", the one cell tagged ``exercise-preamble`` says how the solutions
are given. The student edition, the PDF and the decks find these cells by their tags (CONTRIBUTING.md).
"""

import re

import nbformat
import pytest

from scripts import myst
from scripts.build_slides import chapters

CHAPTERS = chapters()
ASSERTED = re.compile(r"#\s*(True|False)\b")
NAMES = re.compile(r'^# Check of the solution to "(?P<title>[^"]+)"')


def _exercises(path) -> list[dict]:
    """Per exercise, in order: its title, its solution's text, and the cells up to the next exercise."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "markdown":
            if found:
                found[-1]["cells"].append(cell)
            continue
        for block in myst.blocks(cell.source):
            if block.kind == "directive" and block.name == "exercise":
                found.append({"title": block.arg, "solution": "", "cells": []})
            elif block.kind == "directive" and block.name == "solution":
                found[-1]["solution"] += block.body
        if found:
            found[-1]["cells"].append(cell)
    return found


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_solutions_assert_nothing_in_markdown(path):
    exercises = _exercises(path)
    assert len(exercises) >= 3 and all(e["solution"] for e in exercises), path.stem
    for exercise in exercises:
        assert not ASSERTED.search(exercise["solution"]), (
            f"{path.stem}, {exercise['title']!r}: a result asserted in Markdown; run it in a check cell"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_has_one_tagged_check_folded_and_executed(path):
    for exercise in _exercises(path):
        where = f"{path.stem}, {exercise['title']!r}"
        checks = [c for c in exercise["cells"] if myst.SOLUTION_CHECK in myst.tags(c)]
        assert len(checks) == 1, f"{where}: {len(checks)} cells tagged solution-check after the exercise"
        (check,) = checks
        named = NAMES.match(check.source)
        assert named, f"{where}: the check's first line does not name its exercise"
        title = exercise["title"]
        assert named["title"] in (title, title.split(":")[0]), f"{where}: it names {named['title']!r}"
        folded = check.cell_type == "code" and "hide-cell" in myst.tags(check)
        assert folded, f"{where}: the check is not a folded code cell"
        assert check.execution_count is not None and check.outputs, f"{where}: not run"
        assert all(o.output_type != "error" for o in check.outputs), where


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_check_of_a_solution_is_tagged_and_only_those(path):
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        is_check = cell.cell_type == "code" and cell.source.lstrip().startswith("# Check of the solution")
        tagged = myst.SOLUTION_CHECK in myst.tags(cell)
        assert is_check == tagged, f"{path.stem}, cell {index}: tagged {tagged}, a check {is_check}"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_exercises_open_with_one_tagged_preamble(path):
    cells = nbformat.read(path, as_version=4).cells
    tagged = [i for i, c in enumerate(cells) if myst.EXERCISE_PREAMBLE in myst.tags(c)]
    assert len(tagged) == 1, f"{path.stem}: {len(tagged)} cells tagged exercise-preamble"
    (i,) = tagged
    before = myst.blocks(cells[i - 1].source)
    assert cells[i].cell_type == "markdown" and before[-1].text == "## Exercises", path.stem
    assert "{exercise}" in cells[i + 1].source and "{exercise}" not in cells[i].source, path.stem
