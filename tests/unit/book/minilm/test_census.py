"""book.minilm.census: the shipped census of MiniLM's heads, its corpus and the model's lineage."""

from __future__ import annotations

import importlib.metadata
import json

import pytest
import torch

from book.minilm.census import LINEAGE, load_corpus, load_head_results
from mha.pretrained import minilm
from mha.pretrained.heads import (
    classify_heads,
)
from mha.pretrained.minilm import (
    MINILM,
)


def test_shipped_head_results_say_how_long_each_part_took_and_where():
    results = load_head_results()
    metadata = results["metadata"]
    assert metadata["machine"] and metadata["threads"] >= 1 and len(metadata["load_average_at_end"]) == 3
    for part in ("census", "single_ablation", "pruning"):
        assert results["seconds"][part] > 0 and results["cpu_seconds"][part] > 0
    assert sum(results["seconds"].values()) <= metadata["wall_seconds"]


@pytest.mark.usefixtures("minilm")  # reads the model's config.json
def test_the_lineage_is_what_the_shipped_config_says():
    # all-MiniLM-L6-v2 was fine-tuned from nreimers/MiniLM-L6-H384-uncased (its config's _name_or_path),
    # which is microsoft/MiniLM-L12-H384-uncased with every second layer dropped: 6 layers, half of 12.
    config = json.loads((minilm.model_dir() / "config.json").read_text())
    distilled, cut, fine_tuned = LINEAGE
    assert config["_name_or_path"] == cut.name
    assert fine_tuned.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert fine_tuned.n_layers == cut.n_layers == config["num_hidden_layers"] == MINILM.n_layers
    assert 2 * cut.n_layers == distilled.n_layers
    assert {c.d_model for c in LINEAGE} == {config["hidden_size"]} == {MINILM.d_model}


def test_corpus_is_large_and_varied_enough():
    corpus = load_corpus()
    assert len(corpus["sentences"]) >= 50 and len(set(corpus["sentences"])) == len(corpus["sentences"])
    assert len(corpus["paraphrase_pairs"]) >= 30
    assert all(a != b for a, b in corpus["paraphrase_pairs"])


def test_shipped_head_results_are_one_consistent_run_of_the_installed_model():
    """The shipped census, ablations and pruning hang together (what `make minilm-heads` wrote); that they are
    what the model computes, the chapter "What trained heads do" checks live under nbval (the census, and
    the pruning's first three steps)."""
    results = load_head_results()
    installed = importlib.metadata.version(minilm.MODEL_PACKAGE)  # read, not loaded: no `minilm` fixture
    assert results["metadata"]["model_package_version"] == installed
    assert sum(results["counts"].values()) == 72
    census = {name: torch.tensor(values) for name, values in results["census"].items()}
    assert classify_heads(census) == results["labels"]
    pruning = results["pruning"]
    assert len(pruning["removed"]) == 72 and len(pruning["cosine"]) == 73
    assert pruning["passes"] == sum(72 - k for k in range(72)) == 2628  # step k scores the heads left
    assert results["single_ablation"]["passes"] == 72
    assert results["ranking"] == pruning["removed"][::-1]
    single = torch.tensor(results["single_ablation"]["cosine"])  # (L, h)
    first = divmod(int(single.argmax()), 12)  # greedy's first step is the best single ablation
    assert list(first) == pruning["removed"][0]
