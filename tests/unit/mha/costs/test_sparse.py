"""mha.costs.sparse: the pairs and multiply-adds of sparse attention, checked against the layer's choice."""

from __future__ import annotations

import pytest
import torch

import mha
from mha.costs.sparse import causal_pairs, sparse_attention_macs


@pytest.mark.parametrize(("n", "k"), [(1, 1), (5, 2), (9, 3), (9, 9), (9, 20)])
def test_causal_pairs_count_the_latent_layer_s_selected_keys(n, k):
    torch.manual_seed(n + k)
    layer = mha.MultiHeadLatentAttention(16, 2, kv_rank=8, d_nope=4, d_rope=2, q_rank=8, index_heads=2,
                                         index_dim=4, top_k=k)  # fmt: skip
    steps = {}  # the layer's intermediates, from its forward
    layer(torch.randn(1, n, 16), mha.causal_mask(n), record=steps)
    selected = steps["selected"]
    assert causal_pairs(n, k) == int(selected.sum())
    assert causal_pairs(n) == n * (n + 1) // 2 == int(mha.causal_mask(n).sum())


def test_sparse_attention_macs_adds_the_indexer_to_the_kept_pairs():
    macs = sparse_attention_macs(10, pair_macs=100, top_k=4, index_heads=2, index_dim=3)
    assert macs.dense == 55 * 100
    assert macs.attention == (1 + 2 + 3 + 4 * 7) * 100
    assert macs.indexer == 55 * 2 * (3 + 1)
    assert macs.sparse == macs.attention + macs.indexer
    dense = sparse_attention_macs(10, pair_macs=100, top_k=10, index_heads=2, index_dim=3)
    assert dense.attention == dense.dense  # k >= n: every pair kept, the indexer pure overhead
    with pytest.raises(ValueError, match="pair_macs"):
        sparse_attention_macs(10, pair_macs=0, top_k=4, index_heads=2, index_dim=3)
    with pytest.raises(ValueError, match="top_k"):
        causal_pairs(10, 0)
