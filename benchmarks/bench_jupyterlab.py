"""How long the live widgets take in a real JupyterLab, from a reader's control change to the new picture.

Usage:
    python -m benchmarks.bench_jupyterlab [--changes 20]

Starts JupyterLab with the notebook of the JupyterLab test (scripts/lab.py: a head explorer, a stage stepper,
a cost calculator, the MiniLM box and the decoder box), opens it in headless Chromium, runs all cells, then
changes each control ``--changes`` times as a reader does and times, in the page, how long it takes until the
canvas is redrawn (``el.mha.draws`` grows) and, for the figures that also ask Python, until Python's answer is
drawn (``el.mha.received`` grows). The explorer and the calculator draw a change at once from their ports; the
stepper draws the stages it was sent. Every change really changes the figure (the values cycle).
tests/browser/test_jupyterlab.py checks that each change is drawn and answered; this only times it, on
whatever the machine is doing.

The last line is machine-readable: ``first_picture_ms=<the worst median over the controls, one decimal>``
(goal: at most 50 ms), the time to the first picture after a change.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from scripts import chromium
from scripts.lab import TIMED_CHANGE, open_notebook, running_lab

EXPLORER, STEPPER = ".jp-OutputArea .mha-explorer", ".jp-OutputArea .mha-stepper"
CALCULATOR = ".jp-OutputArea .mha-calculator"
MASKS = ["causal", "padding", "causal + padding", "none"]
# control -> (figure, setting, the value of the i-th change): each differs from the one before
CONTROLS = {
    "explorer h": (EXPLORER, "h", lambda i: (8, 4)[i % 2]),
    "explorer seed": (EXPLORER, "seed", lambda i: 1 + i),
    "explorer mask": (EXPLORER, "mask", lambda i: MASKS[i % 4]),
    "stepper stage": (STEPPER, "stage", lambda i: (i * 5 + 1) % 13),
    "calculator context": (CALCULATOR, "context", lambda i: 1024 + i),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=20, help="changes of each control")
    args = parser.parse_args()
    if chromium.CHROMIUM is None:
        raise SystemExit("Debian's chromium is needed: apt-get install chromium")
    with tempfile.TemporaryDirectory() as root, running_lab(Path(root)) as lab, sync_playwright() as p:
        browser = chromium.launch(p)
        tab = open_notebook(browser, lab)
        times = {name: [] for name in CONTROLS}
        for i in range(args.changes):  # the controls take turns, so a change in the machine's speed hits all
            for name, (root_selector, setting, value) in CONTROLS.items():
                times[name].append(tab.evaluate(TIMED_CHANGE, [root_selector, setting, value(i)]))
        browser.close()
    first = {}
    print(f"JupyterLab, control change -> picture, median over {args.changes} changes:")
    for name, ts in times.items():
        if isinstance(ts[0], list):  # [the page's first picture, Python's answer drawn]
            first[name] = statistics.median(t[0] for t in ts)
            python = statistics.median(t[1] for t in ts)
            print(f"{name:>20}: {first[name]:7.1f} ms  (Python's answer drawn at {python:.1f} ms)")
        else:
            first[name] = statistics.median(ts)
            print(f"{name:>20}: {first[name]:7.1f} ms")
    print(f"first_picture_ms={max(first.values()):.1f}")


if __name__ == "__main__":
    main()
