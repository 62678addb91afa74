"""Regenerate the toy models and metrics of the appendix "Heads in toy models" (summarised in chapter 1).

Usage::

    python -m book.chapters.train_heads [--out DIR] [--jobs N]

It trains every run of :func:`book.chapters.training.grid_configs` (tasks x numbers of heads x seeds), one
thread per run in ``N`` processes, and writes ``heads_runs.json`` and ``heads_weights.safetensors`` into
``DIR`` (by default the package's ``book/chapters/data``, where the chapters load them). The same PyTorch
build gives the same files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from book.chapters.training import regenerate


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, train, write the files and print the wall time."""
    parser = argparse.ArgumentParser(
        prog="python -m book.chapters.train_heads", description=__doc__.splitlines()[0]
    )
    default_out = Path(__file__).resolve().parent / "data"
    parser.add_argument("--out", default=str(default_out), help=f"output directory (default: {default_out})")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes, one thread each (default: 2)")
    args = parser.parse_args(argv)
    results = regenerate(args.out, jobs=args.jobs)
    n = len(results["runs"])
    print(f"{n} runs in {results['wall_seconds']:.0f} s with {args.jobs} processes; wrote {args.out}")


if __name__ == "__main__":
    main()
