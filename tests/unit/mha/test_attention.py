"""mha.scaled_dot_product_attention against PyTorch's fused kernel, plus its properties and errors."""

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import mha

TOL = {"atol": 1e-10, "rtol": 1e-10}


def rand(*shape):
    return torch.randn(*shape, dtype=torch.float64)


@pytest.mark.parametrize("batch", [(), (3,), (2, 4)])
@pytest.mark.parametrize(("n_q", "n_k", "d_k", "d_v"), [(1, 1, 1, 1), (5, 5, 8, 8), (3, 7, 4, 6)])
def test_matches_torch_sdpa_without_mask(batch, n_q, n_k, d_k, d_v):
    q, k, v = rand(*batch, n_q, d_k), rand(*batch, n_k, d_k), rand(*batch, n_k, d_v)
    out, weights = mha.scaled_dot_product_attention(q, k, v)
    assert out.shape == (*batch, n_q, d_v)
    assert weights.shape == (*batch, n_q, n_k)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v), **TOL)


def test_weights_are_softmax_of_scaled_scores():
    q, k, v = rand(2, 4, 8), rand(2, 6, 8), rand(2, 6, 3)
    _, weights = mha.scaled_dot_product_attention(q, k, v)
    expected = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1)
    torch.testing.assert_close(weights, expected, **TOL)


@pytest.mark.parametrize("seed", range(5))
def test_matches_torch_sdpa_with_random_mask_and_fully_masked_rows(seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = rand(2, 3, 6, 8), rand(2, 3, 9, 8), rand(2, 3, 9, 5)
    mask = torch.rand(2, 1, 6, 9, generator=g) > 0.5
    mask[0, 0, 2] = False  # a query with nothing to attend to
    out, weights = mha.scaled_dot_product_attention(q, k, v, mask)
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, reference, **TOL)
    assert not weights[~mask.expand_as(weights)].any(), "masked keys must get weight exactly 0"
    assert torch.equal(out[0, :, 2], torch.zeros(3, 5, dtype=torch.float64))


def test_causal_mask_matches_torch_is_causal():
    q, k, v = rand(2, 7, 4), rand(2, 7, 4), rand(2, 7, 4)
    out, _ = mha.scaled_dot_product_attention(q, k, v, mha.causal_mask(7))
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), **TOL)


@settings(max_examples=60, deadline=None)
@given(
    n_q=st.integers(1, 6),
    n_k=st.integers(1, 6),
    d=st.integers(1, 8),
    seed=st.integers(0, 2**16),
    masked=st.booleans(),
)
def test_weights_are_distributions(n_q, n_k, d, seed, masked):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(2, n, d, generator=g, dtype=torch.float64) for n in (n_q, n_k, n_k))
    mask = torch.rand(2, n_q, n_k, generator=g) > 0.4 if masked else None
    _, weights = mha.scaled_dot_product_attention(q, k, v, mask)
    assert (weights >= 0).all()
    expected = torch.ones(2, n_q, dtype=torch.float64) if mask is None else mask.any(-1).double()
    torch.testing.assert_close(weights.sum(-1), expected, **TOL)


@settings(max_examples=30, deadline=None)
@given(n_k=st.integers(2, 8), seed=st.integers(0, 2**16))
def test_permuting_keys_and_values_together_changes_nothing(n_k, seed):
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(3, n, 4, generator=g, dtype=torch.float64) for n in (5, n_k, n_k))
    perm = torch.randperm(n_k, generator=g)
    out, weights = mha.scaled_dot_product_attention(q, k, v)
    out_p, weights_p = mha.scaled_dot_product_attention(q, k[:, perm], v[:, perm])
    torch.testing.assert_close(out_p, out, **TOL)
    torch.testing.assert_close(weights_p, weights[..., perm], **TOL)


def test_fully_masked_rows_have_finite_gradients():
    q, k, v = (rand(2, 4, 3).requires_grad_() for _ in range(3))
    mask = torch.ones(4, 4, dtype=torch.bool)
    mask[1] = False
    out, weights = mha.scaled_dot_product_attention(q, k, v, mask)
    (out.sum() + weights.sum()).backward()
    for name, t in (("q", q), ("k", k), ("v", v)):
        assert torch.isfinite(t.grad).all(), name
    assert torch.equal(q.grad[:, 1], torch.zeros(2, 3, dtype=torch.float64))


def test_dropout_zeroes_weights_scales_the_rest_and_returns_undropped_weights():
    """With the identity as values, the output is the dropped weight matrix itself: every entry is either 0
    or the weight divided by 1 - p, about a fraction p are 0, and the returned weights are the undropped
    ones."""
    torch.manual_seed(0)
    n, p = 64, 0.5
    q, k = rand(1, n, 8), rand(1, n, 8)
    v = torch.eye(n, dtype=torch.float64)[None]  # (1, n_k, d_v = n_k): out = attended weights
    plain_out, plain_weights = mha.scaled_dot_product_attention(q, k, v)
    out, weights = mha.scaled_dot_product_attention(q, k, v, dropout_p=p)
    torch.testing.assert_close(weights, plain_weights, **TOL)
    kept = out != 0
    torch.testing.assert_close(out[kept], plain_weights[kept] / (1 - p), **TOL)
    assert abs((~kept).double().mean().item() - p) < 0.05  # 4,096 independent draws
    torch.testing.assert_close(plain_out, plain_weights, **TOL)


@pytest.mark.parametrize(
    ("args", "error", "words"),
    [
        ((rand(2, 3), rand(2, 4), rand(2, 3)), ValueError, "d_k"),
        ((rand(2, 3), rand(4, 3), rand(5, 3)), ValueError, "n_k"),
        ((rand(3), rand(4, 3), rand(4, 3)), ValueError, "q must have at least 2"),
        (([[1.0]], rand(1, 1), rand(1, 1)), TypeError, "q must be a torch.Tensor"),
        ((torch.ones(2, 3, dtype=torch.long), rand(2, 3), rand(2, 3)), TypeError, "q must be a floating"),
        ((rand(2, 3), rand(2, 3).float(), rand(2, 3)), TypeError, "k has dtype"),
        ((rand(2, 2, 3), rand(3, 2, 3), rand(3, 2, 3)), ValueError, "leading dimensions"),
    ],
)
def test_bad_inputs_raise_clear_errors(args, error, words):
    with pytest.raises(error, match=words):
        mha.scaled_dot_product_attention(*args)


@pytest.mark.parametrize("dropout_p", [-0.1, 1.0])
def test_bad_dropout_raises(dropout_p):
    with pytest.raises(ValueError, match="dropout_p must lie in"):
        mha.scaled_dot_product_attention(rand(2, 3), rand(2, 3), rand(2, 3), dropout_p=dropout_p)


@pytest.mark.parametrize(
    ("mask", "error", "words"),
    [
        (torch.ones(3, 4), TypeError, "torch.bool"),
        (torch.ones(3, 5, dtype=torch.bool), ValueError, r"cannot broadcast to \(\.\.\., n_q, n_k\)"),
        (torch.ones(1, 1, 3, 4, dtype=torch.bool), ValueError, "mask of shape"),
        ([[True]], TypeError, "mask must be a boolean torch.Tensor"),
    ],
)
def test_bad_masks_raise_clear_errors(mask, error, words):
    with pytest.raises(error, match=words):
        mha.scaled_dot_product_attention(rand(2, 3, 8), rand(2, 4, 8), rand(2, 4, 8), mask)
