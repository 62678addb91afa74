"""book.smollm2.stored: the SmolLM2 figure's stored prompts (8-bit weights), their scores and the scores' port
(book/smollm2/static/ports/smollm2.js, in mini-racer)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from py_mini_racer import MiniRacer

from book.smollm2.census import HELD_OUT, induction_score, load_results, repeated_random, text_scores
from book.smollm2.stored import (
    ENCODING,
    PROMPTS,
    RANDOM_TOKENS,
    SCALE,
    dequantise,
    load_stored,
    prompt_scores,
    stored_prompts,
)
from book.widgets.frontend import static_file


def _causal(L: int, h: int, n: int, seed: int = 0) -> torch.Tensor:
    """``(L, h, n, n)`` random causal weights, rows summing to 1."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(L, h, n, n, generator=g, dtype=torch.float64)
    logits = logits.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return logits.softmax(-1)


def test_stored_prompts_round_trip_within_half_a_step():
    prompts = [
        {"name": "a", "about": "", "text": "x", "ids": [5, 6, 5, 6], "tokens": ["a", "b", "a", "b"]},
        {"name": "b", "about": "", "text": "y", "ids": [1, 2, 3], "tokens": ["c", "d", "e"]},
    ]
    attentions = [_causal(2, 3, 4), _causal(2, 3, 3, seed=1)]
    stored = stored_prompts(prompts, attentions, kv_heads=1)
    assert (stored["layers"], stored["heads"], stored["scale"], stored["encoding"]) == (2, 3, SCALE, ENCODING)
    for got, expected in zip(dequantise(stored), attentions, strict=True):
        assert np.abs(got - expected.numpy()).max() <= 0.5 / SCALE + 1e-12
    assert stored["prompts"][1]["scores"]["induction"] is None  # no token repeats
    with pytest.raises(ValueError, match="shape"):
        stored_prompts(prompts, attentions[::-1], kv_heads=1)
    with pytest.raises(ValueError, match="encoding"):
        dequantise({**stored, "encoding": "raw"})


def test_prompt_scores_are_the_census_scores_on_a_text_written_twice():
    ids = [7, 3, 9, 4, 8, 7, 3, 9, 4, 8]  # five tokens twice, none repeated within a copy
    attention = _causal(2, 3, len(ids))
    scores = prompt_scores(attention, ids)
    census = text_scores(attention)
    for name in ("sink", "previous"):
        np.testing.assert_allclose(scores[name], census[name].numpy(), atol=1e-3)
    # the census skips the second copy's first and last rows: over the same rows the two agree
    rows = list(range(6, 9))  # T + k, k = 1 .. T - 2
    expected = torch.stack([attention[..., i, i - 5 + 1] for i in rows], -1).mean(-1)
    np.testing.assert_allclose(induction_score(attention), expected.float(), atol=1e-6)
    full = torch.stack([attention[..., i, i - 5 + 1] for i in range(5, 10)], -1).mean(-1)
    np.testing.assert_allclose(scores["induction"], full.numpy(), atol=1e-3)
    with pytest.raises(ValueError, match="n = 10"):
        prompt_scores(attention, ids[:-1])


def test_the_port_of_prompt_scores_gives_pythons_scores():
    js = MiniRacer()
    js.eval(static_file("ports/smollm2.js"))
    for ids in ([7, 3, 9, 4, 8, 7, 3, 9, 4, 8], [1, 2, 3, 4], [5, 5, 5, 5, 5]):
        attention = _causal(2, 3, len(ids), seed=len(ids))
        got = json.loads(
            js.eval(f"JSON.stringify(mhaFrontEnd.smolScores({json.dumps(attention.tolist())}, {ids}))")
        )
        expected = prompt_scores(attention, ids)
        for name, values in expected.items():
            if values is None:
                assert got[name] is None
            else:
                np.testing.assert_allclose(got[name], values, atol=1e-3)


def test_the_shipped_prompts_are_the_figures_and_hold_every_head():
    stored, results = load_stored(), load_results()
    names = [p["name"] for p in stored["prompts"]]
    assert names == [name for name, _, _ in PROMPTS] and len(names) >= 6
    assert (stored["layers"], stored["heads"], stored["kv_heads"]) == (30, 9, 3)
    by_name = dict(zip(names, stored["prompts"], strict=True))
    assert by_name["random"]["ids"] == repeated_random()[0][:RANDOM_TOKENS] * 2  # the census's, cut
    assert HELD_OUT.startswith(by_name["held_out"]["text"])
    weights = dequantise(stored)
    for prompt, a in zip(stored["prompts"], weights, strict=True):
        n = len(prompt["tokens"])
        assert a.shape == (30, 9, n, n) and len(prompt["ids"]) == n
        np.testing.assert_allclose(a.sum(-1), 1.0, atol=n / SCALE)  # rows sum to 1 to within the rounding
        assert np.all(np.triu(a, 1) == 0)  # causal
        np.testing.assert_allclose(prompt["scores"]["sink"], a[..., 1:, 0].mean(-1), atol=1 / SCALE)
    # the random tokens written twice: the census's best induction head is the prompt's too
    census = np.array(results["scores"]["induction"])
    random = np.array(by_name["random"]["scores"]["induction"])
    assert np.unravel_index(census.argmax(), census.shape) == np.unravel_index(random.argmax(), random.shape)
    assert stored["source"]["seconds"] > 0


def test_the_shipped_prompts_are_what_the_model_computes(smollm2):
    from mha.pretrained.smollm2 import predict

    stored = load_stored()
    prompt = stored["prompts"][0]
    out = predict(prompt["text"])  # (L, h, n, n)
    assert out["ids"] == prompt["ids"] and out["tokens"] == prompt["tokens"]
    got = dequantise(stored)[0]
    assert np.abs(got - out["attention"].numpy()).max() <= 0.5 / SCALE + 1e-4
