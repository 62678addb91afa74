"""mha.MultiHeadAttention against torch.nn.MultiheadAttention, its properties, and its errors; today's layers
as its parts: decoding with every part against the full pass, the fused path against the explicit one, the
work of a decoding step, the record, and bad parts. And the page's port of the forward between the projections
and W_o, ports/layers.js (with F.linear), equal to it in mini-racer."""

import itertools

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import mha
from mha.bands import NoBand
from mha.gates import NoGate, OutputGate
from mha.masks import causal_mask
from mha.multihead import KeysAsValues, split_heads
from mha.positional import NoPositions, Rotary
from mha.scores import Sinks, SoftCap
from tests.unit.mha.parts import D_K, D_MODEL, H_KV, OPTIONS, H, inputs, layer, named, norms, recorded, v_norm

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


# -- today's layers: the 2017 layer's parts, each option one part (tests/unit/mha/parts.py) ----------

RECORDED = ["q", "k", "v", "cache", "q_heads", "k_heads", "v_heads", "scores", "scaled_scores", "weights",
            "heads", "concat", "out"]  # fmt: skip  # forward's record, in the order of computation


def test_the_2017_layer_is_every_default_part():
    attn = mha.MultiHeadAttention(8, 2)
    defaults = {"positions": NoPositions, "q_norm": nn.Identity, "k_norm": nn.Identity, "v_norm": nn.Identity,
                "scores": nn.Identity, "softmax": nn.Softmax, "band": NoBand, "gate": NoGate}  # fmt: skip
    assert {name: type(getattr(attn, name)) for name in defaults} == defaults
    assert set(mha.multihead.PARTS) == set(defaults)
    assert set(attn.state_dict()) == {f"W_{p}.{w}" for p in "qkvo" for w in ("weight", "bias")}


def test_head_dim_sets_the_head_width_apart_from_d_model_over_h():
    attn = layer()
    assert attn.d_k == D_K != D_MODEL // H
    assert attn.W_q.weight.shape == (H * D_K, D_MODEL) and attn.W_o.weight.shape == (D_MODEL, H * D_K)
    assert attn.W_k.weight.shape == attn.W_v.weight.shape == (H_KV * D_K, D_MODEL)
    steps = recorded(attn, inputs())
    assert steps["q_heads"].shape == (2, H, 9, D_K) and steps["concat"].shape == (2, 9, H * D_K)
    assert steps["out"].shape == (2, 9, D_MODEL)
    assert mha.MultiHeadAttention(10, 3, head_dim=4).d_k == 4  # h need not divide d_model


def test_qk_norm_divides_each_head_by_its_rms_and_multiplies_by_a_weight():
    attn = layer(**norms())
    steps = recorded(attn, inputs())
    normed = {"q": steps["q_heads"], "k": steps["cache"].k}  # no positions: the normed heads themselves
    for name, heads, norm in (("q", H, attn.q_norm), ("k", H_KV, attn.k_norm)):
        x = split_heads(steps[name], heads)  # (B, heads, n, d_k)
        expected = x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * norm.weight
        torch.testing.assert_close(normed[name], expected, rtol=0, atol=1e-12)


def test_weightless_and_value_norms_divide_by_the_rms_only():
    attn = layer(**norms(weighted=False), **v_norm())
    assert set(attn.state_dict()) == {f"W_{p}.{w}" for p in "qkvo" for w in ("weight", "bias")}  # no weights
    steps = recorded(attn, inputs())
    normed = {"q": steps["q_heads"], "k": steps["cache"].k, "v": steps["cache"].v}
    for name, heads in (("q", H), ("k", H_KV), ("v", H_KV)):
        x = split_heads(steps[name], heads)  # (B, heads, n, d_k)
        expected = x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()
        torch.testing.assert_close(normed[name], expected, rtol=0, atol=1e-12)


def test_keys_as_values_take_the_key_projection_before_its_norm_and_rotation():
    attn = layer(kind=KeysAsValues, **v_norm(), **norms(), positions=Rotary(10.0))
    assert attn.W_v is attn.W_k and sum(p.numel() for p in attn.parameters()) == sum(
        p.numel() for name, p in attn.named_parameters() if not name.startswith("W_v")
    )
    steps = recorded(attn, inputs())
    torch.testing.assert_close(steps["v"], steps["k"], rtol=0, atol=0)  # the one projection
    k = split_heads(steps["k"], H_KV)  # (B, h_kv, n, d_k), the raw key projection
    value = k / (k.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()  # v_norm of the raw keys
    torch.testing.assert_close(steps["cache"].v, value, rtol=0, atol=1e-12)
    torch.testing.assert_close(
        steps["v_heads"], value.repeat_interleave(H // H_KV, dim=1), rtol=0, atol=1e-12
    )
    assert not torch.allclose(steps["k_heads"], steps["v_heads"])  # the keys are normed with a weight, turned


def test_a_decoding_step_with_keys_as_values_works_on_the_new_token_only():
    """The cache keeps the normed, rotated keys and the normed values apart (as transformers' does), so a step
    normalises and turns one token, whether 1 or 1,000 tokens are cached."""
    attn = layer(kind=KeysAsValues, **v_norm(), **norms(), positions=Rotary(10.0))
    rows = {}  # part -> the number of tokens it worked on, in the step

    def count(name):  # a forward hook: how many tokens the part's input holds (the keys, for positions)
        def hook(module, args, out):
            tokens = args[1] if name == "positions" else args[0]  # positions(q, k, start): k
            rows[name] = rows.get(name, 0) + tokens.size(-2)

        return hook

    for name in ("k_norm", "v_norm", "positions"):
        getattr(attn, name).register_forward_hook(count(name))
    x = torch.randn(1, 1001, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    work = {}
    for cached in (1, 1000):
        _, _, cache = attn.decode(x[:, :cached])
        rows.clear()
        out, _, cache = attn.decode(x[:, cached : cached + 1], cache)
        work[cached] = dict(rows)
        full, _ = attn(x[:, : cached + 1], mask=mha.causal_mask(cached + 1))
        torch.testing.assert_close(out[:, 0], full[:, -1], rtol=0, atol=1e-12)
    assert work[1] == work[1000] == {"k_norm": 1, "v_norm": 1, "positions": 1}
    assert cache.k.shape == cache.v.shape == (1, H_KV, 1001, D_K)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_the_fused_path_equals_the_explicit_one(name):
    attn, x = named(name), inputs()
    for mask in (None, mha.causal_mask(9), mha.padding_mask([9, 5], 9)):
        explicit, _ = attn(x, mask=mask)
        fused, none = attn(x, mask=mask, need_weights=False)
        assert none is None
        torch.testing.assert_close(fused, explicit, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", list(OPTIONS))
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("prompt", [1, 5])
def test_decoding_with_every_part_equals_the_full_causal_pass(name, need_weights, prompt):
    attn, x = named(name), inputs()
    B, n = x.shape[:2]
    full, weights = attn(x, mask=mha.causal_mask(n))
    out, w, cache = attn.decode(x[:, :prompt], need_weights=need_weights)
    outs = [out]
    for t in range(prompt, n):
        out, w, cache = attn.decode(x[:, t : t + 1], cache, need_weights=need_weights)
        outs.append(out)
        if need_weights:  # the weights on the keys the cache still held, and this token's
            held = w.size(-1)
            torch.testing.assert_close(w[:, :, 0], weights[:, :, t, t + 1 - held : t + 1], rtol=0, atol=1e-12)
            assert not weights[:, :, t, : t + 1 - held].any()  # what the cache dropped, no query sees again
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)
    window, chunk = getattr(attn.band, "w", None), getattr(attn.band, "c", None)
    kept = window or (n % chunk if chunk else n)  # a window's keys, or the current chunk's
    assert cache.k.shape == cache.v.shape == (B, H_KV, kept, D_K) and cache.start == n - kept
    assert cache.nbytes == 2 * B * H_KV * kept * D_K * 8  # float64; keys and values, with keys as values too


def test_the_repr_names_the_parts():
    text = repr(named("all"))
    assert "d_k=8" in text and "scale=0.3" in text
    for part in (
        "Rotary(theta=100, fraction=1, style='half-split')",
        "Window(w=4)",
        "Sinks()",
        "SoftCap(cap=5)",
    ):
        assert part in text, part
    assert "NoBand" in repr(layer()) and "Identity" in repr(layer())


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        ((24, 4), {"band": 3}, TypeError, "band must be an nn.Module"),
        ((24, 5), {}, ValueError, "d_model=24 must be divisible by the number of heads h=5"),
        ((24, 4), {"n_kv_heads": 3}, ValueError, "h=4 must be divisible by n_kv_heads=3"),
        ((24, 4), {"head_dim": 0}, ValueError, "head_dim must be a positive int"),
        ((24, 4), {"scale": -1.0}, ValueError, "scale must be a positive number"),
        ((20, 4), {"positions": Rotary(1e4)}, ValueError, "even head width d_k, got d_k=5"),
        (
            (24, 3),
            {"positions": Rotary(1e4, fraction=0.125)},
            ValueError,
            "fraction=0.125 turns 1 of the d_k=8",
        ),
        ((24, 4), {"positions": Rotary(1e4, fraction=0.5)}, ValueError, "fraction=0.5 turns 3 .* even"),
        ((24, 4), {"q_norm": nn.RMSNorm(5)}, ValueError, r"q_norm normalises \(5,\), but a head has d_k=6"),
        ((24, 4), {"softmax": Sinks(3)}, ValueError, r"softmax=Sinks\(3\) needs h=3 heads, got h=4"),
        ((24, 4), {"gate": OutputGate(24, 12)}, ValueError, r"OutputGate\(d_model=24, h \* d_k=24\)"),
    ],
)
def test_bad_parts_raise_errors_that_name_them(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        mha.MultiHeadAttention(*args, **kwargs)


@pytest.mark.parametrize("name", ["all", "qwen3_next", "gemma4_full", "llama4_nope"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_the_record_holds_the_named_intermediates_in_their_order(name, need_weights):
    attn = named(name)
    steps = recorded(attn, inputs(), need_weights=need_weights)
    explicit = need_weights or attn.why_not_fused  # "all" has sinks: the explicit path runs either way
    fused = {"q_heads", "k_heads", "v_heads", "scores", "scaled_scores", "weights"}
    assert list(steps) == [key for key in RECORDED if explicit or key not in fused]
    assert isinstance(steps["cache"], mha.KVCache)
    with pytest.raises(TypeError, match="record must be a dict"):
        named(name)(inputs(), record=[])


def test_why_not_fused_names_what_the_kernel_lacks():
    assert layer().why_not_fused == named("gemma4_sliding").why_not_fused == ""
    assert layer(scores=SoftCap(2.0)).why_not_fused == "scores: PyTorch's kernel has no soft-capping"
    assert named("all").why_not_fused == (
        "scores: PyTorch's kernel has no soft-capping; softmax: PyTorch's kernel has no sinks"
    )
    assert "weights" not in recorded(layer(), inputs(), need_weights=False)  # the kernel ran: no weights kept
    assert "weights" in recorded(
        named("sinks"), inputs(), need_weights=False
    )  # it did not: the explicit path


# -- ports/layers.js: torch's linear, mha's attention per head ---------------------------------------------


@pytest.mark.parametrize(("n", "d_in", "d_out", "bias"), [(1, 3, 2, True), (4, 5, 7, False), (7, 8, 3, True)])
def test_layers_linear_is_torch_s(ports, n, d_in, d_out, bias):
    """linear against torch.nn.functional.linear in float64 (n covers four rows at once and the rest), and
    rounded to float32 where it stores a Float32Array."""
    g = torch.Generator().manual_seed(n)
    x, W = (
        torch.randn(n, d_in, generator=g, dtype=torch.float64),
        torch.randn(d_out, d_in, generator=g, dtype=torch.float64),
    )
    b = torch.randn(d_out, generator=g, dtype=torch.float64) if bias else None
    got = ports.run(
        """(x, W, b, dIn) => [Float64Array, Float32Array].map(Out => { const y = mhaFrontEnd.linear(
            Float64Array.from(x), Float64Array.from(W), b && Float64Array.from(b), dIn, Out);
            return {type: y.constructor.name, y}; })""",
        x.flatten().tolist(),
        W.flatten().tolist(),
        None if b is None else b.tolist(),
        d_in,
    )
    expected = torch.nn.functional.linear(x, W, b)  # (n, d_out)
    assert [r["type"] for r in got] == ["Float64Array", "Float32Array"]
    torch.testing.assert_close(
        torch.tensor(got[0]["y"], dtype=torch.float64).view(n, d_out), expected, rtol=0, atol=1e-12
    )
    as_float32 = torch.tensor(got[1]["y"], dtype=torch.float64).view(n, d_out)
    assert torch.equal(as_float32, as_float32.float().double())  # stored as float32
    torch.testing.assert_close(as_float32, expected, rtol=0, atol=1e-6)


ATTENTION_JS = """(q, k, v, h, d_k, mask, off, Out) => { const r = mhaFrontEnd.scaledDotProductAttention(
    Float64Array.from(q), Float64Array.from(k), v && Float64Array.from(v), h, d_k,
    {mask, off: off && ((head) => off.includes(head)), Out: Out ? globalThis[Out] : undefined});
    return {weights: r.weights, out: r.out, type: r.out && r.out.constructor.name}; }"""


def _attention_mask(kind: str, n_q: int, n_k: int) -> torch.Tensor | None:
    """No mask, a causal one, or a random one with one row fully masked (True = may attend)."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(n_q, n_k)
    mask = torch.rand(n_q, n_k, generator=torch.Generator().manual_seed(n_q * 7 + n_k)) < 0.6
    mask[0] = False  # a query that sees no key: zero weights, zero output
    return mask


@pytest.mark.parametrize(("n_q", "n_k", "h", "d_k"), [(1, 1, 1, 1), (5, 5, 2, 3), (3, 6, 4, 8)])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "random"])
def test_layers_attention_is_mha_s(ports, n_q, n_k, h, d_k, mask_kind):
    """scaledDotProductAttention against mha.scaled_dot_product_attention on split_heads of each projection,
    merged back (merge_heads), with a head's output zeroed where it is switched off; in float64."""
    from mha.attention import scaled_dot_product_attention
    from mha.multihead import merge_heads, split_heads

    g = torch.Generator().manual_seed(n_q * 100 + n_k * 10 + h)
    q, k, v = (torch.randn(1, n, h * d_k, generator=g, dtype=torch.float64) * 2 for n in (n_q, n_k, n_k))
    mask = _attention_mask(mask_kind, n_q, n_k)
    out, weights = scaled_dot_product_attention(split_heads(q, h), split_heads(k, h), split_heads(v, h), mask)
    out = merge_heads(out)[0]  # (n_q, h * d_k)
    off = [0] if h > 1 else []
    for head in off:
        out[:, head * d_k : (head + 1) * d_k] = 0
    js_mask = None if mask is None else mask.tolist()
    flat = [t[0].flatten().tolist() for t in (q, k, v)]
    for values, heads_off, out_type in [
        (flat[2], off, None),
        (None, None, None),
        (flat[2], off, "Float32Array"),
    ]:
        got = ports.run(ATTENTION_JS, flat[0], flat[1], values, h, d_k, js_mask, heads_off, out_type)
        torch.testing.assert_close(
            torch.tensor(got["weights"], dtype=torch.float64), weights[0], rtol=0, atol=1e-12
        )
        if values is None:
            assert got["out"] is None
            continue
        assert got["type"] == (out_type or "Float64Array")
        js_out = torch.tensor(got["out"], dtype=torch.float64).view(n_q, h * d_k)
        torch.testing.assert_close(js_out, out, rtol=0, atol=1e-12 if out_type is None else 1e-5)
