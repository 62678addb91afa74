"""Tests of book.compute.since_2017 and mha.compute.tensor_parallel: blockwise attention, the largest tensor,
masks and receptive fields of local/global stacks, and heads split across processes; and the window explorer's
port, ports/windows.js, equal to layer_masks and receptive_fields in mini-racer."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F

import mha
from book.compute.since_2017 import (
    blockwise_attention,
    largest_tensor_bytes,
    layer_masks,
    receptive_fields,
)
from tests.port_cases import WINDOW_SWEEP

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


# -- the forgotten correction of the exercise ----------------------------------------------------------------


def test_the_buggy_accumulator_is_right_with_one_block_and_drifts_with_more():
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 4, 256, 16, dtype=torch.float64) for _ in range(3))  # (B, h, n, d_k)
    exact = F.scaled_dot_product_attention(q, k, v)
    errors = []
    for blocks in (1, 2, 4, 8, 16, 32):
        buggy = blockwise_attention(q, k, v, block_q=256, block_k=256 // blocks, correct=False)
        right = blockwise_attention(q, k, v, block_q=256, block_k=256 // blocks)
        torch.testing.assert_close(right, exact, atol=1e-12, rtol=0)
        errors.append((buggy - exact).abs().mean().item())
    assert errors[0] < 1e-12 < 1e-3 < errors[1]  # one key block: no maximum to raise, nothing to forget
    assert all(a < b for a, b in itertools.pairwise(errors[1:]))  # more blocks, more rises


def test_blockwise_correct_must_be_a_bool():
    q = torch.randn(1, 1, 4, 2)
    with pytest.raises(TypeError, match="correct must be a bool"):
        blockwise_attention(q, q, q, correct=1)


# -- rotary frequencies and their scalings ----------------------------------------------------------------


def test_windows_equal_python(ports):
    got = ports.run("all => all.map(mhaFrontEnd.windowsCompute)", WINDOW_SWEEP)
    for s, result in zip(WINDOW_SWEEP, got, strict=True):
        masks = layer_masks(
            s["n"], window=s["window"], layers=s["layers"], global_period=s["global_period"] or None
        )
        assert torch.equal(torch.tensor(result["masks"]), masks), s
        assert torch.equal(torch.tensor(result["seen"]), receptive_fields(masks)), s
        assert result["cached"] == int(masks[:, -1].sum()) and result["full"] == s["n"] * s["layers"], s
        kept = [s["n"] if m[-1].all() else min(s["n"], s["window"]) for m in masks]  # a global row sees all
        assert result["cached"] == sum(kept), s
