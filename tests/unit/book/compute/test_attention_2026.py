"""book.compute.attention_2026 and book.figures.attention_2026: the recall experiment, the top-k rule and the
sparse-attention figure's indexer; the figures draw what they are given; and the figure's port,
ports/sparse.js, equal to the indexer in mini-racer."""

from __future__ import annotations

import math

import pytest
import torch

import mha
from book.compute.attention_2026 import (
    INDEX_SHAPE,
    INDEX_STREAM,
    MEMORIES,
    associative_recall,
    index_selection,
    index_weights,
    select_top_k,
)
from mha.costs.sparse import causal_pairs
from tests.port_cases import SPARSE_SWEEP


@pytest.mark.parametrize("seed", [0, 1])
def test_select_top_k_is_the_latent_layer_s_choice(seed):
    """On the layer's own index scores, the rule gives the layer's selected keys (ties to the earlier key)."""
    torch.manual_seed(seed)
    layer = mha.MultiHeadLatentAttention(32, 4, kv_rank=12, d_nope=8, d_rope=4, q_rank=16, index_heads=2,
                                         index_dim=8, top_k=3).double()  # fmt: skip
    x = torch.randn(2, 9, 32, dtype=torch.float64)
    steps = {}  # the layer's intermediates, from its forward
    layer(x, mha.causal_mask(9), record=steps)
    assert torch.equal(select_top_k(steps["index_scores"], 3, mha.causal_mask(9)), steps["selected"])


def test_select_top_k_keeps_the_earlier_of_equal_scores_and_only_visible_keys():
    scores = torch.tensor([[1.0, 2.0, 2.0, 2.0, 0.0]])
    assert select_top_k(scores, 2).tolist() == [[False, True, True, False, False]]
    visible = torch.tensor([[True, False, True, True, True]])
    assert select_top_k(scores, 2, visible).tolist() == [[False, False, True, True, False]]
    assert select_top_k(scores, 9, visible).tolist() == visible.tolist()
    with pytest.raises(ValueError, match="top_k"):
        select_top_k(scores, 0)


def test_index_selection_is_the_indexer_formula_under_a_causal_mask():
    sentence = "the cat sat on the mat"
    scores, selected = index_selection(sentence, 2, seed=4)
    n = 6
    assert scores.shape == selected.shape == (n, n) and scores.dtype == torch.float64
    assert torch.isinf(scores[~mha.causal_mask(n)]).all() and torch.isfinite(scores[mha.causal_mask(n)]).all()
    assert selected.sum(-1).tolist() == [1, 2, 2, 2, 2, 2]
    W = index_weights(4)  # the formula by hand, one head at a time
    from book.compute.explorer import embed_tokens, split_tokens

    x = embed_tokens(split_tokens(sentence), INDEX_SHAPE["d_model"], dtype=torch.float64)
    h_i, d_i = INDEX_SHAPE["index_heads"], INDEX_SHAPE["index_dim"]
    k = x @ W["W_ik"].T
    expected = torch.zeros(n, n, dtype=torch.float64)
    for j in range(h_i):
        q_j = x @ W["W_iq"][j * d_i : (j + 1) * d_i].T
        expected += (x @ W["W_iw"][j]).unsqueeze(-1) * h_i**-0.5 * torch.relu(q_j @ k.T / d_i**0.5)
    torch.testing.assert_close(scores[mha.causal_mask(n)], expected[mha.causal_mask(n)], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="no tokens"):
        index_selection("  ", 2)
    with pytest.raises(ValueError, match="seed"):
        index_selection("a", 1, seed=-1)


def test_recall_a_cache_keeps_every_pair_and_a_state_does_not_past_its_width():
    for m in (4, 64):
        assert associative_recall(m, 16, memory="KV cache") == 1.0
    for memory in ("linear attention", "delta rule"):
        few, many = associative_recall(4, 32, memory=memory), associative_recall(256, 32, memory=memory)
        assert few >= 0.75 and many < 0.35, (memory, few, many)
    # orthogonal-enough keys: one pair, and the delta rule replaces a repeated key's value exactly
    assert associative_recall(1, 8, memory="delta rule") == 1.0
    with pytest.raises(ValueError, match="memory must be one of"):
        associative_recall(4, 8, memory="cache")
    with pytest.raises(ValueError, match="pairs"):
        associative_recall(0, 8, memory=MEMORIES[0])


# -- ports/sparse.js: book.compute.attention_2026 and mha.costs.sparse ---------------------------------------


def test_sparse_weights_are_python_s_exactly(ports):
    got = ports.run(
        "(shape, stream) => mhaFrontEnd.indexWeights(shape, stream, 11)", INDEX_SHAPE, INDEX_STREAM
    )
    for mine, theirs in zip(got, index_weights(11).values(), strict=True):
        assert torch.equal(torch.tensor(mine, dtype=torch.float64), theirs)


def test_sparse_equal_python(ports):
    """The scores within float64 rounding, the kept keys exactly, the pair counts exactly."""
    spec = {"index_shape": INDEX_SHAPE, "index_stream": INDEX_STREAM}
    got = ports.run("(all, spec) => all.map(s => mhaFrontEnd.sparseCompute(s, spec))", SPARSE_SWEEP, spec)
    for s, result in zip(SPARSE_SWEEP, got, strict=True):
        n = len(result["tokens"])
        k = n if s["top_k"] is None else min(s["top_k"], n)
        scores, selected = index_selection(s["sentence"], k, seed=s["seed"])
        js = torch.tensor(
            [[-math.inf if v is None else v for v in row] for row in result["scores"]], dtype=torch.float64
        )
        visible = torch.isfinite(scores)
        assert torch.equal(torch.isfinite(js), visible), s
        torch.testing.assert_close(js[visible], scores[visible], rtol=0, atol=1e-12)
        assert torch.equal(torch.tensor(result["selected"]), selected), s
        assert result["kept"] == causal_pairs(n, k) == int(selected.sum()), s
        assert result["pairs"] == causal_pairs(n) and result["k"] == k, s
