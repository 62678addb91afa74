"""mha.MultiHeadAttention against torch.nn.MultiheadAttention, its properties, and its errors."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import mha

TOL = {"atol": 1e-6, "rtol": 0}  # the bound; in float64 the actual gap is ~1e-15


def rand(*shape):
    return torch.randn(*shape, dtype=torch.float64)


def torch_pair(d_model, h, *, bias=True):
    """A torch.nn.MultiheadAttention in float64, and our copy of it."""
    theirs = nn.MultiheadAttention(d_model, h, bias=bias, batch_first=True, dtype=torch.float64).eval()
    if bias:  # PyTorch initialises the biases to 0; make them count
        with torch.no_grad():
            theirs.in_proj_bias.normal_()
            theirs.out_proj.bias.normal_()
    return theirs, mha.MultiHeadAttention.from_torch(theirs)


def torch_forward(theirs, query, key, value, mask):
    # nn.MultiheadAttention's boolean attn_mask means the opposite: True = may NOT attend. It also wants a
    # 3-D mask of shape (B * h, n_q, n_k) or a 2-D one of shape (n_q, n_k).
    attn_mask = None
    if mask is not None:
        B, n_q, n_k = query.size(0), query.size(1), key.size(1)
        attn_mask = ~mask.expand(B, theirs.num_heads, n_q, n_k).reshape(B * theirs.num_heads, n_q, n_k)
    return theirs(query, key, value, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)


CASES = [
    # d_model, h, B, n_q, n_k, cross-attention
    (1, 1, 1, 1, 1, False),
    (8, 1, 2, 5, 5, False),
    (8, 2, 3, 4, 4, False),
    (12, 3, 1, 6, 6, False),
    (16, 4, 2, 3, 7, True),
    (32, 8, 2, 9, 4, True),
    (64, 16, 1, 5, 5, False),
]
MASKS = ["none", "causal", "padding", "causal+padding", "random"]


def make_mask(kind, B, n_q, n_k):
    if kind == "none":
        return None
    lengths = [max(1, n_k - b) for b in range(B)]
    return {
        "causal": lambda: mha.causal_mask(n_q, n_k),
        "padding": lambda: mha.padding_mask(lengths, n_k),
        "causal+padding": lambda: mha.causal_mask(n_q, n_k) & mha.padding_mask(lengths, n_k),
        "random": lambda: torch.rand(B, 1, n_q, n_k) > 0.3,
    }[kind]()


@pytest.mark.parametrize(("d_model", "h", "B", "n_q", "n_k", "cross"), CASES)
@pytest.mark.parametrize("mask_kind", MASKS)
@pytest.mark.parametrize("bias", [True, False])
def test_matches_torch_multihead_attention(d_model, h, B, n_q, n_k, cross, mask_kind, bias):
    theirs, ours = torch_pair(d_model, h, bias=bias)
    query = rand(B, n_q, d_model)
    key = rand(B, n_k, d_model) if cross else query
    value = rand(B, n_k, d_model) if cross else query
    mask = make_mask(mask_kind, B, n_q, n_k)
    if mask is not None:  # torch.nn.MultiheadAttention gives NaN on fully masked rows; keep one key open
        mask = mask.clone() if mask.dim() == 4 else mask.expand(B, 1, n_q, n_k).clone()
        mask[..., 0] = True

    out, weights = ours(query, key, value, mask=mask)
    ref_out, ref_weights = torch_forward(theirs, query, key, value, mask)
    assert out.shape == (B, n_q, d_model)
    assert weights.shape == (B, h, n_q, n_k)
    torch.testing.assert_close(out, ref_out, **TOL)
    torch.testing.assert_close(weights, ref_weights, **TOL)


@pytest.mark.parametrize(("d_model", "h", "B", "n_q", "n_k", "cross"), CASES)
@pytest.mark.parametrize("mask_kind", MASKS)
def test_fused_path_matches_explicit_path(d_model, h, B, n_q, n_k, cross, mask_kind):
    ours = mha.MultiHeadAttention(d_model, h).double()
    query = rand(B, n_q, d_model)
    key = rand(B, n_k, d_model) if cross else None
    mask = make_mask(mask_kind, B, n_q, n_k)  # fully masked rows included: both give zeros
    out, _weights = ours(query, key, mask=mask)
    fused, none = ours(query, key, mask=mask, need_weights=False)
    assert none is None
    torch.testing.assert_close(fused, out, **TOL)


def test_fully_masked_rows_give_zero_attention_and_bias_only_output():
    ours = mha.MultiHeadAttention(8, 2).double()
    x = rand(2, 4, 8)
    mask = mha.padding_mask([4, 0], 4)  # the second sequence is all padding
    out, weights = ours(x, mask=mask)
    assert torch.equal(weights[1], torch.zeros(2, 4, 4, dtype=torch.float64))
    # zero heads -> W_o(0) = its bias: no NaN, no silent average of the values
    torch.testing.assert_close(out[1], ours.W_o.bias.expand(4, 8), **TOL)
    fused, _ = ours(x, mask=mask, need_weights=False)
    torch.testing.assert_close(fused, out, **TOL)


@pytest.mark.parametrize(("h", "n_kv_heads"), [(4, 4), (4, 2), (4, 1), (8, 2), (6, 3)])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_grouped_query_attention_matches_references(h, n_kv_heads, mask_kind):
    d_model, B, n = 24, 2, 5
    ours = mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads).double()
    d_k = d_model // h
    assert ours.W_k.out_features == ours.W_v.out_features == n_kv_heads * d_k
    x = rand(B, n, d_model)
    mask = make_mask(mask_kind, B, n, n)
    out, weights = ours(x, mask=mask)

    # Reference 1: repeat each key/value head for its group of query heads, then plain SDPA.
    q = ours.W_q(x).view(B, n, h, d_k).transpose(1, 2)
    k = ours.W_k(x).view(B, n, n_kv_heads, d_k).transpose(1, 2)
    v = ours.W_v(x).view(B, n, n_kv_heads, d_k).transpose(1, 2)
    group = h // n_kv_heads
    k_rep = torch.stack([k[:, i // group] for i in range(h)], dim=1)
    v_rep = torch.stack([v[:, i // group] for i in range(h)], dim=1)
    heads = F.scaled_dot_product_attention(q, k_rep, v_rep, attn_mask=mask)
    reference = ours.W_o(heads.transpose(1, 2).reshape(B, n, d_model))
    torch.testing.assert_close(out, reference, **TOL)
    # Reference 2: PyTorch's own GQA support.
    heads_gqa = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    torch.testing.assert_close(heads_gqa, heads, **TOL)
    # Query heads in one group see the same keys, so weights differ only through their queries.
    assert weights.shape == (B, h, n, n)
    fused, _ = ours(x, mask=mask, need_weights=False)
    torch.testing.assert_close(fused, out, **TOL)


@pytest.mark.parametrize("d_model", [8, 24, 64])
def test_parameter_count_does_not_depend_on_h(d_model):
    divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
    for h in divisors:
        n_params = sum(p.numel() for p in mha.MultiHeadAttention(d_model, h).parameters())
        assert n_params == 4 * d_model**2 + 4 * d_model, h
    no_bias = mha.MultiHeadAttention(d_model, divisors[-1], bias=False)
    assert sum(p.numel() for p in no_bias.parameters()) == 4 * d_model**2


def test_single_head_equals_single_head_attention():
    ours = mha.MultiHeadAttention(8, 1).double()
    x = rand(3, 5, 8)
    out, weights = ours(x)
    head, expected_weights = mha.scaled_dot_product_attention(ours.W_q(x), ours.W_k(x), ours.W_v(x))
    torch.testing.assert_close(weights[:, 0], expected_weights, **TOL)
    torch.testing.assert_close(out, ours.W_o(head), **TOL)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 8), cut=st.integers(0, 7), seed=st.integers(0, 2**16))
def test_causal_outputs_ignore_the_future(n, cut, seed):
    cut = min(cut, n - 1)
    torch.manual_seed(seed)
    ours = mha.MultiHeadAttention(8, 2).double()
    x = rand(2, n, 8)
    changed = x.clone()
    changed[:, cut + 1 :] = rand(2, n - cut - 1, 8)
    out, _ = ours(x, mask=mha.causal_mask(n))
    out_changed, _ = ours(changed, mask=mha.causal_mask(n))
    torch.testing.assert_close(out_changed[:, : cut + 1], out[:, : cut + 1], **TOL)


@settings(max_examples=25, deadline=None)
@given(n_k=st.integers(2, 7), seed=st.integers(0, 2**16))
def test_permuting_keys_and_values_changes_nothing(n_k, seed):
    torch.manual_seed(seed)
    ours = mha.MultiHeadAttention(12, 3).double()
    query, memory = rand(2, 4, 12), rand(2, n_k, 12)
    perm = torch.randperm(n_k)
    out, weights = ours(query, memory)
    out_p, weights_p = ours(query, memory[:, perm])
    torch.testing.assert_close(out_p, out, **TOL)
    torch.testing.assert_close(weights_p, weights[..., perm], **TOL)


def test_weights_are_distributions_for_every_head():
    ours = mha.MultiHeadAttention(16, 4).double()
    x = rand(3, 6, 16)
    mask = mha.causal_mask(6) & mha.padding_mask([6, 3, 0], 6)
    _, weights = ours(x, mask=mask)
    assert (weights >= 0).all()
    expected = mask.expand(3, 4, 6, 6).any(-1).double()
    torch.testing.assert_close(weights.sum(-1), expected, atol=1e-12, rtol=0)


@pytest.mark.parametrize("need_weights", [True, False])
def test_gradients_flow_without_nan_even_with_fully_masked_rows(need_weights):
    ours = mha.MultiHeadAttention(8, 2).double()
    x = rand(2, 4, 8).requires_grad_()
    mask = mha.padding_mask([4, 0], 4)
    out, _ = ours(x, mask=mask, need_weights=need_weights)
    out.square().sum().backward()
    assert torch.isfinite(x.grad).all()
    for name, p in ours.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert ours.W_q.weight.grad.abs().sum() > 0


def test_dropout_is_active_in_training_only():
    ours = mha.MultiHeadAttention(8, 2, dropout=0.5).double()
    x = rand(1, 6, 8)
    ours.train()
    first, _ = ours(x)
    second, _ = ours(x)
    assert not torch.allclose(first, second)
    ours.eval()
    torch.testing.assert_close(ours(x)[0], ours(x)[0], atol=0, rtol=0)


def test_from_torch_accepts_sequence_first_modules_and_copies_settings():
    theirs = nn.MultiheadAttention(8, 2, dropout=0.25)  # batch_first=False, float32
    ours = mha.MultiHeadAttention.from_torch(theirs)
    assert (ours.d_model, ours.h, ours.dropout, ours.training) == (8, 2, 0.25, True)
    theirs.eval()
    ours.eval()
    x = torch.randn(3, 5, 8)  # (B, n, d_model)
    ref, _ = theirs(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))  # (n, B, d_model)
    torch.testing.assert_close(ours(x)[0], ref.transpose(0, 1), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [({"kdim": 4}, "kdim"), ({"add_bias_kv": True}, "add_bias_kv"), ({"add_zero_attn": True}, "add_zero")],
)
def test_from_torch_rejects_what_it_cannot_represent(kwargs, words):
    with pytest.raises(ValueError, match=words):
        mha.MultiHeadAttention.from_torch(nn.MultiheadAttention(8, 2, **kwargs))


def test_from_torch_rejects_other_modules():
    with pytest.raises(TypeError, match=r"torch\.nn\.MultiheadAttention"):
        mha.MultiHeadAttention.from_torch(nn.Linear(4, 4))


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        ((10, 3), {}, ValueError, "d_model=10 must be divisible by the number of heads h=3"),
        ((8, 4), {"n_kv_heads": 3}, ValueError, "h=4 must be divisible by n_kv_heads=3"),
        ((8, 0), {}, ValueError, "h must be a positive int"),
        ((8.0, 2), {}, TypeError, "d_model must be a positive int"),
        ((8, 2), {"dropout": 1.0}, ValueError, "dropout"),
    ],
)
def test_bad_constructor_arguments(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        mha.MultiHeadAttention(*args, **kwargs)


def test_bad_forward_inputs_raise_clear_errors():
    ours = mha.MultiHeadAttention(8, 2)
    x = torch.randn(2, 5, 8)
    cases = [
        ((torch.randn(5, 8),), {}, ValueError, r"query must have shape \(B, n_q, d_model=8\)"),
        ((torch.randn(2, 5, 6),), {}, ValueError, r"query must have shape \(B, n_q, d_model=8\)"),
        ((x, torch.randn(2, 4, 6)), {}, ValueError, r"key must have shape \(B, n_k, d_model=8\)"),
        ((x, torch.randn(3, 4, 8)), {}, ValueError, "same batch size B"),
        ((x, torch.randn(2, 4, 8), torch.randn(2, 3, 8)), {}, ValueError, "same length n_k"),
        ((x, x.double()), {}, TypeError, "key has dtype torch.float64"),
        ((x.double(),), {}, TypeError, "module's parameters have dtype torch.float32"),
        ((x.long(),), {}, TypeError, "query must be a floating-point tensor"),
        (("x",), {}, TypeError, "query must be a torch.Tensor"),
        ((x,), {"mask": torch.ones(5, 5)}, TypeError, "mask must have dtype torch.bool"),
        ((x,), {"mask": torch.ones(4, 5, dtype=torch.bool)}, ValueError, r"\(B, h, n_q, n_k\)"),
        ((x,), {"mask": torch.ones(3, 1, 5, 5, dtype=torch.bool)}, ValueError, "cannot broadcast"),
        ((x,), {"mask": torch.ones(1, 1, 1, 5, 5, dtype=torch.bool)}, ValueError, "cannot broadcast"),
    ]
    for args, kwargs, error, words in cases:
        for need_weights in (True, False):
            with pytest.raises(error, match=words):
                ours(*args, need_weights=need_weights, **kwargs)


def test_mixed_devices_are_named():
    # Only one device here; a meta tensor stands in for "another device" with the same check.
    ours = mha.MultiHeadAttention(8, 2)
    x = torch.randn(1, 3, 8)
    with pytest.raises(TypeError, match="key is on device meta"):
        ours(x, torch.empty(1, 3, 8, device="meta"))


def test_every_small_configuration_runs():
    for d_model, h in itertools.product([4, 6, 8], [1, 2, 3, 4]):
        if d_model % h:
            continue
        out, weights = mha.MultiHeadAttention(d_model, h)(torch.randn(1, 3, d_model))
        assert out.shape == (1, 3, d_model) and weights.shape == (1, h, 3, 3)


def test_repr_names_the_configuration():
    assert "d_model=8, h=4, n_kv_heads=2, d_k=2" in repr(mha.MultiHeadAttention(8, 4, n_kv_heads=2))
