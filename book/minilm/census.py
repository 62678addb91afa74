"""The data behind "What trained heads do" (and chapter 1's look at the same model): where the model comes
from (:data:`LINEAGE`), and the census, single-head ablations and greedy pruning of its heads.

Regenerate ``book/chapters/data/minilm_heads.json`` (deterministic up to floating-point rounding; minutes,
almost all of them greedy pruning: the file records how long each part took, on which machine)::

    python -m book.minilm.census

The sentences and paraphrase pairs are ``book/chapters/data/minilm_corpus.json``, written for the book:
``sentences`` feed the census (:func:`mha.pretrained.heads.head_census`), ``paraphrase_pairs`` the
ablations and the pruning (:mod:`mha.pretrained.heads`). The chapters read both files with
:func:`load_corpus` and :func:`load_head_results` and recompute nothing slow.

Shape legend:
    L  number of layers, 6
    h  heads per layer, 12
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import torch

from book.compute.provenance import machine
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
COMMAND = "python -m book.minilm.census"
DIGITS = 6  # decimals kept in the JSON file


@dataclass(frozen=True)
class Checkpoint:
    """One step in the making of all-MiniLM-L6-v2, with where it is stated."""

    name: str  # the checkpoint's name on the Hugging Face Hub
    n_layers: int  # Transformer layers
    d_model: int  # width
    made: str  # how it was made from the step before
    source: str  # where that is stated


LINEAGE = (
    Checkpoint(
        "microsoft/MiniLM-L12-H384-uncased",
        12,
        384,
        "distilled (deep self-attention distillation) from a UniLMv2 teacher of BERT-base size, 12 x 768",
        "Wang et al. 2020 (MiniLM); the MiniLM README of github.com/microsoft/unilm, English models",
    ),
    Checkpoint(
        "nreimers/MiniLM-L6-H384-uncased",
        6,
        384,
        "the 12-layer model with every second layer dropped",
        "its model card on the Hugging Face Hub; its config.json (_name_or_path: the 12-layer model)",
    ),
    Checkpoint(
        "sentence-transformers/all-MiniLM-L6-v2",
        6,
        384,
        "fine-tuned on about 1B sentence pairs with a contrastive objective",
        "its model card; its config.json, shipped with the weights (_name_or_path: the 6-layer model above)",
    ),
)
"""How all-MiniLM-L6-v2 was made, oldest first: distilled at 12 layers, cut to 6, then fine-tuned."""


def _data_file(name: str):
    return resources.files("book.minilm") / "data" / name


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
        ``single_ablation`` (``L x h`` cosine and paraphrase accuracy with one head off, and the number of
        partial forward passes it ran), ``pruning`` (the greedy curve and its number of partial forward
        passes) and ``ranking`` (heads, most important first: the reverse of the removal order), and
        ``seconds`` spent on each part (wall clock) and ``cpu_seconds`` (the process's CPU time, summed over
        its threads: less sensitive than the wall clock to other work on the machine).
    """
    sentences, pairs = corpus["sentences"], corpus["paraphrase_pairs"]
    seconds, cpu_seconds = {}, {}

    def timed(name, fn, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn(*args, **kwargs)
        seconds[name], cpu_seconds[name] = time.perf_counter() - wall, time.process_time() - cpu
        return result

    census = timed("census", head_census, encoder, sentences)
    labels = classify_heads(census)
    single = timed("single_ablation", single_head_ablation, encoder, pairs)
    pruning = timed("pruning", greedy_pruning, encoder, pairs, steps=steps)

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
            "passes": single["cosine"].numel(),  # one partial forward pass per head
        },
        "pruning": {
            "metric": "mean cosine between pruned and intact sentence embeddings of the paraphrase sentences",
            "removed": removed,
            "cosine": _rounded(pruning["cosine"]),
            "paraphrase_accuracy": _rounded(pruning["paraphrase_accuracy"]),
            "passes": pruning["passes"],
        },
        "ranking": removed[::-1],
        "seconds": {name: round(s, 1) for name, s in seconds.items()},
        "cpu_seconds": {name: round(s, 1) for name, s in cpu_seconds.items()},
    }


def main(argv: list[str] | None = None) -> None:
    """Compute the results and write them to ``book/chapters/data/minilm_heads.json`` (or ``--output``)."""
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
        "machine": machine(),
        # Other work on the machine while this ran: the load average over the last 1, 5 and 15 minutes.
        "load_average_at_end": [round(x, 1) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    args.output.write_text(json.dumps({"metadata": metadata, **results}, indent=1) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {args.output} in {metadata['wall_seconds']} s\n")


if __name__ == "__main__":
    main()
