"""book.smollm2.census: the pure functions of the census (no model), and the shipped results."""

from __future__ import annotations

import importlib.metadata

import pytest
import torch

from book.smollm2.census import (
    KINDS,
    RULES,
    SENTENCES,
    classify,
    copy_accuracy,
    group_divergence,
    induction_score,
    jensen_shannon,
    load_results,
    repeated_random,
    text_scores,
    within_and_across,
)
from mha.pretrained import smollm2


def _pattern(n: int, kind: str) -> torch.Tensor:
    """``(n, n)`` causal weights of one pure pattern: all on position 0, or on the previous token."""
    a = torch.zeros(n, n)
    a[0, 0] = 1.0
    for i in range(1, n):
        a[i, 0 if kind == "sink" else i - 1] = 1.0
    return a


def test_text_scores_read_a_sink_and_a_previous_token_head():
    attention = torch.stack([_pattern(6, "sink"), _pattern(6, "previous")])[None]  # (1, 2, 6, 6)
    scores = text_scores(attention)
    assert scores["sink"].tolist() == [[1.0, pytest.approx(1 / 5)]]  # row 1's previous token is position 0
    assert scores["previous"].tolist() == [[pytest.approx(1 / 5), 1.0]]
    assert scores["entropy"].abs().max() < 1e-6  # one-hot rows
    uniform = torch.tril(torch.ones(5, 5)) / torch.arange(1, 6)[:, None]
    assert text_scores(uniform[None, None])["entropy"].item() == pytest.approx(1.0)


def test_induction_score_is_the_weight_on_the_token_after_the_earlier_occurrence():
    length = 5
    a = torch.zeros(2 * length, 2 * length)
    a[:, 0] = 1.0
    for k in range(1, length - 1):
        a[length + k] = 0.0
        a[length + k, k + 1] = 1.0
    assert induction_score(a[None, None]).item() == 1.0
    assert induction_score(torch.stack([_pattern(10, "sink")])[None]).item() == 0.0


def test_classify_takes_the_first_rule_met_else_mixed():
    names = {score for _, score, _ in RULES}
    scores = {name: torch.zeros(1, 3) for name in names}
    scores["induction"][0, 0] = scores["sink"][0, 0] = 0.9  # induction comes first
    scores["sink"][0, 1] = 0.9
    assert classify(scores) == [["induction", "sink", "mixed"]]
    assert set(KINDS) == {kind for kind, _, _ in RULES} | {"mixed"}


def test_jensen_shannon_is_zero_for_equal_rows_and_one_bit_for_disjoint_rows():
    p, q = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    assert jensen_shannon(p, p).item() == pytest.approx(0.0, abs=1e-6)
    assert jensen_shannon(p, q).item() == pytest.approx(1.0)


def test_heads_alike_within_a_group_and_apart_across_groups_are_found():
    sink, previous = _pattern(6, "sink"), _pattern(6, "previous")
    attention = torch.stack([sink, sink, previous, previous])[None]  # (1, 4, 6, 6): groups {0, 1}, {2, 3}
    divergence = group_divergence(attention, 2)
    assert divergence.shape == (1, 4, 4) and torch.allclose(divergence, divergence.transpose(1, 2))
    within, across = within_and_across(divergence, 2)
    assert within.item() == pytest.approx(0.0, abs=1e-6) and across.item() > 0.5


def test_copy_accuracy_counts_each_copy_apart():
    ids = [5, 6, 7, 5, 6, 7]
    logits = torch.zeros(6, 10)
    logits[3, 6] = logits[4, 7] = 1.0  # the second copy predicted, the first not
    assert copy_accuracy(logits, ids) == (0.0, 1.0)


def test_random_tokens_are_written_twice_and_avoid_control_tokens():
    texts = repeated_random(3, 8, seed=1)
    assert len(texts) == 3 and all(t[:8] == t[8:] for t in texts)
    assert min(min(t) for t in texts) >= 17 and texts == repeated_random(3, 8, seed=1)


def test_shipped_results_are_one_consistent_timed_run_of_the_installed_model():
    results = load_results()
    metadata = results["metadata"]
    assert metadata["model_package_version"] == importlib.metadata.version(smollm2.MODEL_PACKAGE)
    for part in ("census", "sink", "ablation", "induction"):
        assert results["seconds"][part] > 0 and results["cpu_seconds"][part] > 0
    assert sum(results["seconds"].values()) <= metadata["wall_seconds"]
    assert results["corpus"]["sentences"] == list(SENTENCES)
    assert sum(results["counts"].values()) == 270
    scores = {name: torch.tensor(values) for name, values in results["scores"].items()}
    assert classify(scores) == results["labels"]
    assert results["ablation"]["passes"] == 270 + 90 + 1


def test_the_shipped_induction_scores_are_what_the_model_computes(smollm2):
    from book.smollm2.census import _run

    scores = torch.stack([induction_score(_run(smollm2, ids)[1]) for ids in repeated_random()]).mean(0)
    shipped = torch.tensor(load_results()["scores"]["induction"])
    assert torch.allclose(scores, shipped, atol=2e-3)
