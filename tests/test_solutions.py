"""Exercise solutions assert no result in Markdown: a result is printed by a folded, executed check cell.

A solution that says what a computation gives (``x == y   # True``, or "the folded cell prints ...") is
followed, before the next exercise, by a code cell that starts with ``# Check of the solution to "<the
exercise's title>"`` and a period (or a colon and a note), is tagged ``hide-cell`` (folded on the site;
scripts/student_edition.py removes it) and was executed without error. CONTRIBUTING.md states the rule
for every chapter; CHECKED lists the chapters this test holds to it so far (the_code.ipynb still asserts
two results in a comment).
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = [
    "why_multiple_heads",
    "the_code_in_practice",
    "trained_heads",
    "induction_heads",
    "appendix_toy_heads",
]
EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\} (?P<title>.+)$", re.M)
SOLUTION = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}.*?\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
ASSERTED = re.compile(r"#\s*(True|False)\b")
CHECK = re.compile(r'^# Check of the solution to "(?P<title>.+?)"[.:]')


def _exercises(path):
    """Per exercise, in order: its title, its solution's text, and the code cells up to the next one."""
    found = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":  # exercises and solutions in the order they appear
            matches = sorted(
                [*EXERCISE.finditer(cell.source), *SOLUTION.finditer(cell.source)], key=re.Match.start
            )
            for match in matches:
                if match.re is EXERCISE:
                    found.append({"title": match["title"], "solution": "", "cells": []})
                else:
                    found[-1]["solution"] += match["body"]
        elif found:
            found[-1]["cells"].append(cell)
    return found


@pytest.mark.parametrize("name", CHECKED)
def test_solutions_assert_nothing_in_markdown(name):
    exercises = _exercises(ROOT / "chapters" / f"{name}.ipynb")
    assert len(exercises) >= 3 and all(e["solution"] for e in exercises), name
    for exercise in exercises:
        assert not ASSERTED.search(exercise["solution"]), (
            f"{name}, {exercise['title']!r}: a result asserted in Markdown; run it in a check cell"
        )


@pytest.mark.parametrize("name", CHECKED)
def test_a_solution_that_points_to_a_check_has_one_folded_and_executed(name):
    for exercise in _exercises(ROOT / "chapters" / f"{name}.ipynb"):
        checks = [c for c in exercise["cells"] if CHECK.match(c.source)]
        if "folded cell" not in exercise["solution"]:
            continue
        assert len(checks) == 1, f"{name}, {exercise['title']!r}: no check cell after the solution"
        (check,) = checks
        assert CHECK.match(check.source)["title"] == exercise["title"], name
        assert "hide-cell" in check.metadata.get("tags", []), f"{name}, {exercise['title']!r}: not folded"
        assert check.execution_count is not None and check.outputs, f"{name}: {exercise['title']!r} not run"
        assert all(o.output_type != "error" for o in check.outputs), name
