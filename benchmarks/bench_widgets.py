"""How long the live head explorer's Python side takes to answer a control change.

Usage:
    python -m benchmarks.bench_widgets [--updates 30]

In a live kernel a reader's change arrives as the ``settings`` traitlet; Python merges it, computes the
weights with the real ``mha`` and writes the ``drawn`` traitlet (float32 bytes), which ipywidgets sends to the
page as a binary buffer. This benchmark times that Python side for 8 heads and a 10-token sentence (d_model =
64 or 32, so h = 8 stays valid): :meth:`HeadExplorer.update`, then the serialisation of the payload that
ipywidgets would send (``get_state`` of the traitlets, with the buffers split out). The page's drawing and the
round trip through Jupyter are not included: ``tests/browser/test_jupyterlab.py`` prints those, end to end.
Each kind of change cycles through a few values, so every timed update really changes the weights, and the
kinds take turns, so that a change in the machine's speed affects them alike:

- ``mask``:     none -> causal -> padding -> causal + padding -> ...
- ``seed``:     1 -> 2 -> 3 -> ...   (new random weights)
- ``sentence``: three different 10-token sentences in turn
- ``d_model``:  64 -> 32 -> 64 -> ...  (new weights and a new d_k)
- ``h``:        8 -> 4, then back to 8, both timed, so every other kind is timed with 8 heads

The last line is machine-readable: ``median_ms=<the worst median over the five kinds, one decimal>``
(goal: at most 20 ms).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time

import torch
from ipywidgets.widgets.widget import _remove_buffers

from book.widgets import HeadExplorer

SENTENCES = (
    "the cat sat on the mat because it was tired",
    "a small dog ran after a red ball all day",
    "attention lets every word look at every other word now",
)


def time_change(explorer: HeadExplorer, changes: dict) -> float:
    """Milliseconds from a change of settings until the message for the page is ready."""
    start = time.perf_counter()
    explorer.update(**changes)
    _, buffer_paths, buffers = _remove_buffers(explorer.get_state(["settings", "drawn"]))
    elapsed = (time.perf_counter() - start) * 1e3
    if explorer.message or ["drawn", "weights"] not in buffer_paths or len(buffers) != len(buffer_paths):
        raise RuntimeError(f"unexpected payload: message {explorer.message!r}, buffers {buffer_paths}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=30, help="timed updates per kind of change (>= 20)")
    args = parser.parse_args()
    if args.updates < 20:
        parser.error("--updates must be at least 20")

    explorer = HeadExplorer(sentence=SENTENCES[0], d_model=64, h=8, mask="none", seed=0)
    if any(len(sentence.split()) != 10 for sentence in SENTENCES) or explorer.weights.shape != (8, 10, 10):
        raise RuntimeError("the benchmark is meant for 8 heads and 10 tokens")
    kinds = {
        "mask": ["causal", "padding", "causal + padding", "none"],
        "seed": list(range(1, args.updates + 5)),
        "sentence": [*SENTENCES[1:], SENTENCES[0]],
        "d_model": [32, 64],
        "h": [4, 8],
    }
    per_round = {"h": 2}  # there and back, so the other kinds always see 8 heads
    payload = len(explorer.drawn["weights"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"8 heads x 10 tokens, d_model 64, weights {payload} bytes (float32), "
        f"updates {args.updates} per kind, "
        f"torch threads {torch.get_num_threads()}, load average {load:.1f}"
    )
    cycles = {name: itertools.cycle(values) for name, values in kinds.items()}
    for name, values in kinds.items():  # warm-up: a few values each, as a reader would have
        for _ in values[:4]:
            explorer.update(**{name: next(cycles[name])})
    if explorer.settings["h"] != 8:
        raise RuntimeError("the warm-up must end with 8 heads")
    times = {name: [] for name in kinds}
    for _ in range(args.updates):  # interleaved, so a drift in machine speed hits every kind alike
        for name in kinds:
            for _ in range(per_round.get(name, 1)):
                times[name].append(time_change(explorer, {name: next(cycles[name])}))
    medians = {}
    for name, ts in times.items():
        medians[name] = statistics.median(ts)
        print(f"{name:>8}: median {medians[name]:6.2f} ms  (min {min(ts):.2f}, max {max(ts):.2f})")
    print(f"median_ms={max(medians.values()):.1f}")


if __name__ == "__main__":
    main()
