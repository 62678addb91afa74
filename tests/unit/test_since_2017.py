"""Tests of mha.compute.since_2017 and mha.compute.tensor_parallel: blockwise attention, the largest tensor,
masks and receptive fields of local/global stacks, and heads split across processes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import mha
from mha.compute.since_2017 import blockwise_attention, largest_tensor_bytes, layer_masks, receptive_fields
from mha.compute.tensor_parallel import check_divisible, shard_heads, tensor_parallel_forward

SIZES = [(7, 7, 3, 2), (64, 64, 16, 16), (33, 50, 8, 13)]  # n_q, n_k, block_q, block_k


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize(("n_q", "n_k", "block_q", "block_k"), SIZES)
def test_blockwise_equals_torch_sdpa(is_causal, n_q, n_k, block_q, block_k):
    torch.manual_seed(n_q + n_k)
    q = torch.randn(2, 3, n_q, 8, dtype=torch.float64)  # (B, h, n_q, d_k)
    k = torch.randn(2, 3, n_k, 8, dtype=torch.float64)  # (B, h, n_k, d_k)
    v = torch.randn(2, 3, n_k, 5, dtype=torch.float64)  # (B, h, n_k, d_v)
    ours = blockwise_attention(q, k, v, is_causal=is_causal, block_q=block_q, block_k=block_k)
    theirs = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
    torch.testing.assert_close(ours, theirs, atol=1e-12, rtol=0)


def test_blockwise_survives_large_scores_in_float32():
    """The running maximum keeps exp() in range where a naive exp(scores) overflows."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 40, 8) * s for s in (30.0, 30.0, 1.0))  # scores in the hundreds
    ours = blockwise_attention(q, k, v, block_q=8, block_k=8)
    assert torch.isfinite(ours).all()
    naive = torch.exp(q @ k.transpose(-2, -1) / 8**0.5)  # (B, h, n, n)
    assert not torch.isfinite(naive).all()  # exp overflows float32 without the maximum subtracted
    exact = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
    torch.testing.assert_close(ours.double(), exact, atol=1e-2, rtol=0)  # scores of ~300 in float32


@pytest.mark.parametrize("n", [256, 512])
def test_blockwise_never_materialises_the_scores(n):
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, n, 16) for _ in range(3))  # (B, h, n, d_k)
    blockwise = largest_tensor_bytes(lambda: blockwise_attention(q, k, v, block_q=32, block_k=32))
    explicit = largest_tensor_bytes(lambda: mha.scaled_dot_product_attention(q, k, v))
    assert explicit == 1 * 2 * n * n * 4  # the (B, h, n, n) weights, float32
    assert blockwise == q.nbytes  # the output, (B, h, n, d_v); a tile is 1 * 2 * 32 * 32 * 4 bytes
    assert blockwise < explicit


def test_largest_tensor_bytes_is_exact_and_checks_its_argument():
    x = torch.zeros(3)
    assert largest_tensor_bytes(lambda: torch.ones(10, 20, dtype=torch.float64) + x.sum()) == 10 * 20 * 8
    with pytest.raises(TypeError, match="fn"):
        largest_tensor_bytes(3)


def test_blockwise_rejects_bad_shapes():
    q = torch.randn(1, 2, 4, 8)
    with pytest.raises(ValueError, match="k must have shape"):
        blockwise_attention(q, torch.randn(1, 2, 4, 6), torch.randn(1, 2, 4, 8))
    with pytest.raises(ValueError, match="q must have shape"):
        blockwise_attention(q[0], q, q)
    with pytest.raises(TypeError, match=r"v must be a torch\.Tensor"):
        blockwise_attention(q, q, [1])
    with pytest.raises(ValueError, match="block_k"):
        blockwise_attention(q, q, q, block_k=0)


def test_layer_masks_follow_the_model_config_rule():
    masks = layer_masks(10, window=3, layers=6, global_period=3)
    assert masks.shape == (6, 10, 10)
    for i in range(6):
        expected = mha.causal_mask(10) if (i + 1) % 3 == 0 else mha.causal_mask(10, window=3)
        assert torch.equal(masks[i], expected), i
    assert torch.equal(layer_masks(5, window=2, layers=2)[1], mha.causal_mask(5, window=2))
    with pytest.raises(ValueError, match="global_period"):
        layer_masks(5, window=2, layers=2, global_period=1)
    with pytest.raises(ValueError, match="window"):
        layer_masks(5, window=0, layers=2)


def test_receptive_fields_grow_by_window_minus_one_per_local_layer():
    n, w = 40, 4
    seen = receptive_fields(layer_masks(n, window=w, layers=5))
    for depth in range(1, 6):
        reach = seen[depth - 1, n - 1].nonzero().flatten()
        assert reach.min().item() == n - 1 - depth * (w - 1) and reach.max().item() == n - 1
    # a global layer makes every earlier input visible at once
    seen = receptive_fields(layer_masks(n, window=w, layers=2, global_period=2))
    assert torch.equal(seen[1], mha.causal_mask(n))
    with pytest.raises(TypeError, match="masks"):
        receptive_fields(torch.ones(2, 3, 3))
    with pytest.raises(ValueError, match="masks"):
        receptive_fields(torch.ones(2, 3, 4, dtype=torch.bool))


def _layer(**options):
    torch.manual_seed(0)
    attn = mha.MultiHeadAttention(32, 4, n_kv_heads=2, **options).double()  # float64: exact comparisons
    with torch.no_grad():
        for p in attn.parameters():
            p.normal_(0, 0.3)
    return attn


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"rope_theta": 10000.0, "qk_norm": True, "sinks": True},
        {"bias": False, "window": 3, "softcap": 5.0},
    ],
    ids=["plain", "rope-qknorm-sinks", "window-softcap"],
)
@pytest.mark.parametrize("world_size", [1, 2])
def test_shards_sum_to_the_whole_layer(options, world_size):
    attn = _layer(**options)
    x = torch.randn(2, 6, 32, dtype=torch.float64)  # (B, n, d_model)
    mask = mha.causal_mask(6)
    whole, _ = attn(x, mask=mask)
    with torch.no_grad():
        parts = sum(shard_heads(attn, r, world_size)(x, mask=mask)[0] for r in range(world_size))
    torch.testing.assert_close(parts, whole, atol=1e-12, rtol=0)
    assert shard_heads(attn, 0, world_size).h == 4 // world_size


def test_bad_world_sizes_and_ranks_name_themselves():
    attn = _layer()  # h = 4, h_kv = 2
    with pytest.raises(ValueError, match=r"world_size=3 must divide h=4"):
        check_divisible(attn, 3)
    with pytest.raises(ValueError, match=r"world_size=4 must divide h_kv \(n_kv_heads\)=2"):
        tensor_parallel_forward(attn, torch.randn(1, 3, 32, dtype=torch.float64), world_size=4)
    with pytest.raises(ValueError, match="rank"):
        shard_heads(attn, 2, 2)
    with pytest.raises(TypeError, match="attn"):
        check_divisible(torch.nn.Linear(2, 2), 2)
    with pytest.raises(ValueError, match="x must be"):
        tensor_parallel_forward(attn, torch.randn(1, 3, 16))


@pytest.mark.slow  # starts two processes that import torch
def test_two_processes_with_gloo_equal_one_process():
    attn = _layer(rope_theta=10000.0, qk_norm=True)
    x = torch.randn(2, 5, 32, dtype=torch.float64)  # (B, n, d_model)
    mask = mha.causal_mask(5)
    out, all_reduces = tensor_parallel_forward(attn, x, world_size=2, mask=mask)
    whole, _ = attn(x, mask=mask)
    torch.testing.assert_close(out, whole, atol=1e-12, rtol=0)
    assert all_reduces == [1, 1]
