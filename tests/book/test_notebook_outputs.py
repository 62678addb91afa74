"""Stored notebook outputs must read the same on every machine: made on portable kernels, no printed float
round-off.

Which run proves what (CONTRIBUTING.md): `make notebooks` executes the chapters on portable kernels and one
thread (scripts/execute_notebooks.py records them in each notebook's metadata, and the first test here checks
the record); `make test` executes them once more under nbval on the test machine's own kernels and threads
and compares every output with the stored one. Outputs that two kinds of kernel print alike, and that print
no float round-off (the scan below), read the same on every machine.

The last digits of a float32 difference depend on the CPU's kernels (AVX2, AVX-512, AMX), the thread count
and the summation order, so a cell that prints ``max |a - b| = 8.9e-08`` passes strict nbval on one machine
and fails on the next. A cell shows agreement as a stated tolerance ("equal within 1e-6: True"), a bound,
or an exact comparison instead (CONTRIBUTING.md). This scan reads the committed outputs and names every
cell that prints a measured difference in the round-off range: a number below 1e-5 (or a zero) in
scientific notation, in a line (or a table) that speaks of a difference. A tolerance written before the
number ("within 1e-6", "≤ 1e-6", "atol=1e-6") is allowed.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from scripts.execute_notebooks import PORTABLE
from tests import ROOT

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))

SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d*)?[eE][-+]?\d+)")
DIFFERENCE = re.compile(
    r"diff|\bgap\b|max\s*\||\|[^|\n]*\s-\s[^|\n]*\||\berror\b|differ|off by|deviat", re.IGNORECASE
)
TOLERANCE_BEFORE = re.compile(r"(within|≤|<=|<|\btol\w*|atol|rtol|bound|eps)\s*[=:]?\s*\(?$", re.IGNORECASE)
ROUND_OFF = 1e-5
# A figure's embedded data (JSON, base64 weights) is read by the page's script, not printed: base64 such
# as "/0e7" would read as a number in the round-off range.
SCRIPT = re.compile(r"<script\b.*?</script>", re.DOTALL | re.IGNORECASE)


def round_off_printed(text: str, *, table: bool = False) -> list[str]:
    """The lines of ``text`` that print a measured difference in the round-off range.

    ``table``: the text is one table (HTML or a DataFrame's plain text), whose header may name the
    difference while the cells below it hold the numbers, so the whole text is the context.
    """
    flagged = []
    speaks_of_difference = bool(DIFFERENCE.search(text))
    for line in text.splitlines():
        if not (speaks_of_difference if table else DIFFERENCE.search(line)):
            continue
        for match in SCIENTIFIC.finditer(line):
            if float(match.group(1)) >= ROUND_OFF:
                continue
            if TOLERANCE_BEFORE.search(line[: match.start()]):
                continue  # a stated tolerance or bound, not a measured value
            flagged.append(line.strip())
            break
    return flagged


def outputs_of(cell) -> list[tuple[str, bool]]:
    """Each output of a code cell as ``(text, is_table)``."""
    texts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            texts.append((output["text"], False))
        data = output.get("data", {})
        if "text/html" in data:
            texts.append((SCRIPT.sub("", data["text/html"]), True))
        elif "text/plain" in data:
            plain = data["text/plain"]
            texts.append((plain, plain.count("\n") > 1))
    return texts


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_stored_outputs_were_made_on_portable_kernels(path):
    made = nbformat.read(path, as_version=4).metadata.get("mha", {}).get("executed_with")
    assert made == PORTABLE, (
        f"{path.name}: its outputs were made with {made}, not on portable kernels {PORTABLE}: "
        f"`make notebooks NB=chapters/{path.name}` re-executes it"
    )


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_stored_output_prints_round_off(path):
    cells = nbformat.read(path, as_version=4).cells
    found = [
        f"cell {index} (execution count {cell.get('execution_count')}): {line}"
        for index, cell in enumerate(cells)
        if cell.cell_type == "code"
        for text, table in outputs_of(cell)
        for line in round_off_printed(text, table=table)
    ]
    assert not found, (
        f"{path.name} prints float round-off, whose digits differ between machines; print agreement "
        "within a stated tolerance instead:\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    "text",
    [
        "max |view + transpose - per head| = 8.9e-08",
        "fed (n, B, d): max |ours - theirs| = 4.4e-16",
        "decoded vs full: diff 0.0e+00",
        "the two paths differ by 3e-07",
        "largest error 1.2E-06 after 100 steps",
    ],
)
def test_the_scan_flags_a_printed_difference(text):
    assert round_off_printed(text) == [text]


@pytest.mark.parametrize(
    "text",
    [
        "view + transpose: equal to per head within 1e-6: True",
        "max |ours - theirs| ≤ 1e-12: True",
        "assert_close(a, b, atol=1e-05) passed; max |a - b| = 0.98",
        "largest weight on any key other than token 4: 2.04e-106",  # a value, not a difference
        "MiniLMConfig(d_model=384, eps=1e-12)",
        "max |view alone - per head| = 1.3",
    ],
)
def test_the_scan_allows_tolerances_values_and_large_differences(text):
    assert round_off_printed(text) == []


def test_the_scan_reads_a_table_whose_header_names_the_difference():
    html = "<table><tr><th>max |decoded - full pass|</th></tr>\n<tr><td>1.8e-07</td></tr></table>"
    assert round_off_printed(html, table=True) == ["<tr><td>1.8e-07</td></tr></table>"]
    assert round_off_printed(html.replace("1.8e-07", "True"), table=True) == []


def test_the_scan_reads_what_an_html_output_shows_not_its_script_data():
    """A figure's inline data (base64 weights may hold "/0e7") is not printed text; a table next to it is."""
    data = '<script type="application/json">{"error": "{error}", "data": "h/QOH+1B7/0e7+Ys"}</script>'
    shown = "<table><tr><th>error</th></tr>\n<tr><td>3e-07</td></tr></table>"
    cell = {"outputs": [{"output_type": "display_data", "data": {"text/html": data + "\n" + shown}}]}
    [(html, table)] = outputs_of(cell)
    assert table and round_off_printed(html, table=True) == ["<tr><td>3e-07</td></tr></table>"]
    assert round_off_printed(data, table=True) == [data]  # what the scan would flag if it read the data
