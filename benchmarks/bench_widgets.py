"""How long the head explorer takes to answer a control change, from the click to the PNG sent.

Usage:
    python benchmarks/bench_widgets.py [--updates 30]

The explorer shows 8 heads and a 10-token sentence (d_model = 64 or 32, so h = 8 stays valid). For each
kind of control change the benchmark sets the control's value, as a click in the front end does, and times
the synchronous callback: embedding, the attention layer, the redraw of the heatmaps (Agg backend), the PNG
encoding and the hand-over of the bytes to the ``ipywidgets.Image``. Each kind cycles through a few values,
so every timed update really changes the picture, and the kinds take turns (one round of each, then
again), so that a change in the machine's speed affects them alike:

- ``mask``:     none -> causal -> padding -> causal + padding -> ...
- ``seed``:     0 -> 1 -> 2 -> ...   (new random weights)
- ``sentence``: three different 10-token sentences in turn (new labels, same layout)
- ``d_model``:  64 -> 32 -> 64 -> ...  (new weights and a new d_k in every panel title)
- ``h``:        8 -> 4, then back to 8, both timed (another number of panels; the figure drawn earlier
  for that layout is reused from the explorer's cache, with the labels and titles redrawn when the
  sentence or d_k changed in between), so every other kind is timed with 8 heads

A first visit to a layout (h panels of n x n, e.g. a sentence of a new length) builds a new figure, which
costs more; the benchmark prints that too, as ``h, first visit``, without counting it in the last line.

The last line is machine-readable: ``median_ms=<the worst median over the five kinds, one decimal>``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time

import matplotlib

matplotlib.use("Agg")

import torch

from mha.widgets import HeadExplorer

SENTENCES = (
    "the cat sat on the mat because it was tired",
    "a small dog ran after a red ball all day",
    "attention lets every word look at every other word now",
)


def time_change(explorer: HeadExplorer, control, value) -> float:
    """Milliseconds from setting ``control`` to ``value`` until the explorer has sent its new PNG."""
    start = time.perf_counter()
    control.value = value
    elapsed = (time.perf_counter() - start) * 1e3
    if explorer.status.value:
        raise RuntimeError(f"the explorer reported a problem: {explorer.status.value}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30, help="timed updates per kind of change (>= 20)")
    args = parser.parse_args()
    if args.updates < 20:
        parser.error("--updates must be at least 20")

    explorer = HeadExplorer(sentence=SENTENCES[0], d_model=64, h=8, mask="none", seed=0)
    c = explorer.controls
    if any(len(sentence.split()) != 10 for sentence in SENTENCES) or explorer.weights.shape != (8, 10, 10):
        raise RuntimeError("the benchmark is meant for 8 heads and 10 tokens")
    kinds = {
        "mask": (c.mask, ["causal", "padding", "causal + padding", "none"]),
        "seed": (c.seed, list(range(1, args.updates + 5))),
        "sentence": (c.sentence, [*SENTENCES[1:], SENTENCES[0]]),
        "d_model": (c.d_model, [32, 64]),
        "h": (c.h, [4, 8]),
    }
    per_round = {"h": 2}  # there and back, so the other kinds always see 8 heads
    medians = {}
    png_bytes = len(bytes(explorer.image.value))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"8 heads x 10 tokens, d_model 64, PNG {png_bytes / 1e3:.0f} kB, updates {args.updates} per kind, "
        f"torch threads {torch.get_num_threads()}, load average {load:.1f}"
    )
    cycles = {name: itertools.cycle(values) for name, (_, values) in kinds.items()}
    for name, (control, values) in kinds.items():  # warm-up: a few values each, as a reader would have
        for _ in values[:4]:
            control.value = next(cycles[name])
    if c.h.value != 8:
        raise RuntimeError("the warm-up must end with 8 heads")
    times = {name: [] for name in kinds}
    for _ in range(args.updates):  # interleaved, so a drift in machine speed hits every kind alike
        for name, (control, _) in kinds.items():
            for _ in range(per_round.get(name, 1)):
                times[name].append(time_change(explorer, control, next(cycles[name])))
    for name, ts in times.items():
        medians[name] = statistics.median(ts)
        print(f"{name:>8}: median {medians[name]:6.1f} ms  (min {min(ts):.1f}, max {max(ts):.1f})")

    first = []  # a layout never drawn before: empty the explorer's cache of figures before each change
    for value in itertools.islice(itertools.cycle([4, 8]), 10):
        explorer._plots.clear()
        first.append(time_change(explorer, c.h, value))
    print(f"h, first visit: median {statistics.median(first):6.1f} ms  (a new figure; not in median_ms)")
    print(f"median_ms={max(medians.values()):.1f}")


if __name__ == "__main__":
    main()
