"""The data behind the chapter on all-MiniLM-L6-v2's heads: census, single-head ablations, greedy pruning.

Regenerate ``mha/chapters/data/minilm_heads.json`` (deterministic up to floating-point rounding; about ten
minutes on 2 cores, almost all of it greedy pruning)::

    python -m mha.chapters.minilm_heads

The sentences and paraphrase pairs are ``mha/chapters/data/minilm_corpus.json``, written for the book:
``sentences`` feed the census (:func:`mha.pretrained.heads.head_census`), ``paraphrase_pairs`` the
ablations and the pruning (:mod:`mha.pretrained.heads`). The chapter reads both files with
:func:`load_corpus` and :func:`load_head_results` and recomputes nothing slow.

Shape legend:
    L  number of layers, 6
    h  heads per layer, 12
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from importlib import resources
from pathlib import Path

import torch

from mha.pretrained.heads import (
    BROAD_ENTROPY,
    MIN_SHARE,
    PATTERNS,
    classify_heads,
    greedy_pruning,
    head_census,
    single_head_ablation,
)
from mha.pretrained.minilm import MODEL_PACKAGE, MiniLMEncoder, load_minilm, model_version

CORPUS_FILE = "minilm_corpus.json"
RESULTS_FILE = "minilm_heads.json"
COMMAND = "python -m mha.chapters.minilm_heads"
DIGITS = 6  # decimals kept in the JSON file


def _data_file(name: str):
    return resources.files("mha.chapters") / "data" / name


def load_corpus() -> dict:
    """The book's sentences and paraphrase pairs.

    Returns:
        ``{"sentences": [str, ...], "paraphrase_pairs": [(str, str), ...], ...}`` (plus a description and
        the licence).
    """
    corpus = json.loads(_data_file(CORPUS_FILE).read_text(encoding="utf-8"))
    corpus["paraphrase_pairs"] = [tuple(pair) for pair in corpus["paraphrase_pairs"]]
    return corpus


def load_head_results() -> dict:
    """The shipped results of :func:`compute_results` (see :func:`main` to regenerate them)."""
    return json.loads(_data_file(RESULTS_FILE).read_text(encoding="utf-8"))


def _rounded(values):
    """Tensors and floats to nested lists of floats with :data:`DIGITS` decimals."""
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if isinstance(values, list):
        return [_rounded(v) for v in values]
    return round(float(values), DIGITS)


def compute_results(encoder: MiniLMEncoder, corpus: dict, *, steps: int | None = None) -> dict:
    """Run the census, the single-head ablations and greedy pruning.

    Args:
        encoder: an encoder from :func:`mha.pretrained.load_minilm`.
        corpus: :func:`load_corpus`'s result.
        steps: heads to remove in greedy pruning; ``None`` removes all.

    Returns:
        A JSON-ready dict: ``census`` (each pattern, ``L x h``), ``labels`` (``L x h``) and their ``counts``,
        ``single_ablation`` (``L x h`` cosine and paraphrase accuracy with one head off), ``pruning`` (the
        greedy curve) and ``ranking`` (heads, most important first: the reverse of the removal order), and
        ``seconds`` spent on each part.
    """
    sentences, pairs = corpus["sentences"], corpus["paraphrase_pairs"]
    seconds = {}
    start = time.perf_counter()
    census = head_census(encoder, sentences)
    labels = classify_heads(census)
    seconds["census"] = time.perf_counter() - start

    start = time.perf_counter()
    single = single_head_ablation(encoder, pairs)
    seconds["single_ablation"] = time.perf_counter() - start

    start = time.perf_counter()
    pruning = greedy_pruning(encoder, pairs, steps=steps)
    seconds["pruning"] = time.perf_counter() - start

    removed = [list(pair) for pair in pruning["removed"]]
    return {
        "patterns": list(PATTERNS),
        "census": {name: _rounded(values) for name, values in census.items()},
        "classification": {"min_share": MIN_SHARE, "broad_entropy": BROAD_ENTROPY},
        "labels": labels,
        "counts": dict(Counter(label for row in labels for label in row).most_common()),
        "single_ablation": {
            "cosine": _rounded(single["cosine"]),
            "paraphrase_accuracy": _rounded(single["paraphrase_accuracy"]),
            "intact_paraphrase_accuracy": _rounded(single["intact_paraphrase_accuracy"]),
        },
        "pruning": {
            "metric": "mean cosine between pruned and intact sentence embeddings of the paraphrase sentences",
            "removed": removed,
            "cosine": _rounded(pruning["cosine"]),
            "paraphrase_accuracy": _rounded(pruning["paraphrase_accuracy"]),
        },
        "ranking": removed[::-1],
        "seconds": {name: round(s, 1) for name, s in seconds.items()},
    }


def main(argv: list[str] | None = None) -> None:
    """Compute the results and write them to ``mha/chapters/data/minilm_heads.json`` (or ``--output``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=None, help="heads to prune (default: all)")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "data" / RESULTS_FILE)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    encoder = load_minilm()
    results = compute_results(encoder, load_corpus(), steps=args.steps)
    metadata = {
        "command": COMMAND + (f" --steps {args.steps}" if args.steps is not None else ""),
        "model_package": MODEL_PACKAGE,
        "model_package_version": model_version(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "threads": torch.get_num_threads(),
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    args.output.write_text(json.dumps({"metadata": metadata, **results}, indent=1) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {args.output} in {metadata['wall_seconds']} s\n")


if __name__ == "__main__":
    main()
