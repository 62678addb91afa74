"""Today's layers as options of mha.MultiHeadAttention: each option against its formula, decoding with every
option against the full pass, the fused path against the explicit one, and bad options."""

import math

import pytest
import torch

import mha

D_MODEL, H, H_KV, D_K = 24, 4, 2, 8  # d_k = 8, not 24 / 4 = 6
OPTIONS = {  # one layer per option, and all of them together
    "head_dim": {},
    "rope": {"rope_theta": 100.0},
    "qk_norm": {"qk_norm": True},
    "scale": {"scale": 0.5},
    "softcap": {"softcap": 2.0},
    "window": {"window": 3},
    "sinks": {"sinks": True},
    "all": {"rope_theta": 100.0, "qk_norm": True, "scale": 0.3, "softcap": 5.0, "window": 4, "sinks": True},
}


def layer(**options):
    """A float64 layer in eval mode, every weight random (norm weights and sinks included)."""
    torch.manual_seed(0)
    attn = mha.MultiHeadAttention(D_MODEL, H, n_kv_heads=H_KV, head_dim=D_K, **options).double().eval()
    with torch.no_grad():
        for p in attn.parameters():
            p.normal_(0.0, 0.3)
    return attn


def inputs(B=2, n=9):
    return torch.randn(B, n, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(1))


def test_head_dim_sets_the_head_width_apart_from_d_model_over_h():
    attn = layer()
    assert attn.d_k == D_K != D_MODEL // H
    assert attn.W_q.weight.shape == (H * D_K, D_MODEL) and attn.W_o.weight.shape == (D_MODEL, H * D_K)
    assert attn.W_k.weight.shape == attn.W_v.weight.shape == (H_KV * D_K, D_MODEL)
    steps = attn.steps(inputs())
    assert steps["q_heads"].shape == (2, H, 9, D_K) and steps["concat"].shape == (2, 9, H * D_K)
    assert steps["out"].shape == (2, 9, D_MODEL)
    assert mha.MultiHeadAttention(10, 3, head_dim=4).d_k == 4  # h need not divide d_model
    assert set(mha.MultiHeadAttention(8, 2).state_dict()) == {
        f"W_{p}.{w}" for p in "qkvo" for w in ("weight", "bias")
    }


def test_rotary_turns_each_half_split_pair_by_its_angle():
    theta = 100.0
    steps = layer(rope_theta=theta).steps(inputs())
    q = mha.multihead.split_heads(steps["q"], H)  # (B, h, n, d_k), before the rotation
    # the pair (x_i, x_{i + d_k/2}) as one complex number, turned by position * theta^(-2i/d_k)
    z = torch.complex(q[..., : D_K // 2], q[..., D_K // 2 :])  # (B, h, n, d_k/2)
    angle = torch.arange(9.0, dtype=torch.float64)[:, None] * theta ** (
        -torch.arange(0, D_K, 2, dtype=torch.float64) / D_K
    )
    turned = z * torch.polar(torch.ones_like(angle), angle)  # (B, h, n, d_k/2)
    expected = torch.cat([turned.real, turned.imag], dim=-1)  # (B, h, n, d_k)
    torch.testing.assert_close(steps["q_rotated"], expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(steps["q_heads"], steps["q_rotated"], rtol=0, atol=0)
    assert steps["k_rotated"].shape == (2, H_KV, 9, D_K)


def test_rotary_scores_depend_on_the_offset_between_positions_only():
    attn = layer(rope_theta=10.0)
    x = inputs(B=1, n=1).expand(1, 6, D_MODEL)  # one token repeated: only the positions differ
    scores = attn.steps(x)["scores"][0]  # (h, n, n)
    for offset in range(-5, 6):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)  # (h, n - |offset|)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal), rtol=0, atol=1e-12)


def test_qk_norm_divides_each_head_by_its_rms_and_multiplies_by_a_weight():
    attn = layer(qk_norm=True)
    steps = attn.steps(inputs())
    for name, heads, norm in (("q", H, attn.q_norm), ("k", H_KV, attn.k_norm)):
        x = mha.multihead.split_heads(steps[name], heads)  # (B, heads, n, d_k)
        expected = x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * norm.weight
        torch.testing.assert_close(steps[f"{name}_normed"], expected, rtol=0, atol=1e-12)
    assert "q_rotated" not in steps and "sink" not in steps


@pytest.mark.parametrize(
    ("options", "formula"),
    [
        ({"scale": 0.5}, lambda s: 0.5 * s),
        ({"softcap": 2.0}, lambda s: 2.0 * torch.tanh(s / math.sqrt(D_K) / 2.0)),
        ({"scale": 0.5, "softcap": 2.0}, lambda s: 2.0 * torch.tanh(0.5 * s / 2.0)),
    ],
)
def test_scale_and_softcap_shape_the_scores(options, formula):
    steps = layer(**options).steps(inputs())
    torch.testing.assert_close(steps["scaled_scores"], formula(steps["scores"]), rtol=0, atol=1e-12)
    if "softcap" in options:
        assert steps["scaled_scores"].abs().max() < options["softcap"]  # every score inside (-c, c)


@pytest.mark.parametrize("w", [1, 3, 9, 20])
def test_a_window_is_the_causal_band_on_top_of_the_given_mask(w):
    attn, x = layer(window=w), inputs()
    n = x.size(1)
    i, j = torch.arange(n)[:, None], torch.arange(n)
    band = (i - w < j) & (j <= i)  # w keys, itself included
    padding = mha.padding_mask([n, n - 2], n)  # (B, 1, 1, n)
    for mask, expected in ((None, band), (mha.causal_mask(n), band), (padding, band & padding)):
        weights = attn(x, mask=mask)[1]  # (B, h, n, n)
        assert torch.equal(weights != 0, expected.expand_as(weights))
    plain = layer()  # the same weights: a window is a mask
    torch.testing.assert_close(attn(x)[0], plain(x, mask=mha.causal_mask(n, window=w))[0], rtol=0, atol=1e-12)


def test_sinks_take_a_share_of_each_softmax_and_are_dropped():
    attn = layer(sinks=True)
    steps = attn.steps(inputs(), mask=mha.causal_mask(9))
    logits = steps["scaled_scores"].masked_fill(~mha.causal_mask(9), -math.inf)  # (B, h, n, n)
    sink = attn.sinks[:, None, None].expand(*logits.shape[:-1], 1)  # (B, h, n, 1)
    expected = torch.softmax(torch.cat([logits, sink], dim=-1), dim=-1)  # (B, h, n, n + 1)
    torch.testing.assert_close(steps["weights"], expected[..., :-1], rtol=0, atol=1e-12)
    torch.testing.assert_close(steps["sink"], expected[..., -1], rtol=0, atol=1e-12)
    torch.testing.assert_close(
        steps["weights"].sum(-1) + steps["sink"], torch.ones(2, H, 9, dtype=torch.float64)
    )
    assert steps["sink"].shape == (2, H, 9)


@pytest.mark.parametrize("name", list(OPTIONS))
def test_the_fused_path_equals_the_explicit_one(name):
    attn, x = layer(**OPTIONS[name]), inputs()
    for mask in (None, mha.causal_mask(9), mha.padding_mask([9, 5], 9)):
        explicit, _ = attn(x, mask=mask)
        fused, none = attn(x, mask=mask, need_weights=False)
        assert none is None
        torch.testing.assert_close(fused, explicit, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", list(OPTIONS))
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("prompt", [1, 5])
def test_decoding_with_every_option_equals_the_full_causal_pass(name, need_weights, prompt):
    attn, x = layer(**OPTIONS[name]), inputs()
    B, n = x.shape[:2]
    full, weights = attn(x, mask=mha.causal_mask(n))
    out, w, cache = attn.decode(x[:, :prompt], need_weights=need_weights)
    outs = [out]
    for t in range(prompt, n):
        out, w, cache = attn.decode(x[:, t : t + 1], cache, need_weights=need_weights)
        outs.append(out)
        if need_weights:  # the weights on the keys the cache still holds
            held = cache.k.size(-2) if attn.window is None else min(t + 1, attn.window + 1)
            torch.testing.assert_close(w[:, :, 0], weights[:, :, t, t + 1 - held : t + 1], rtol=0, atol=1e-12)
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)
    kept = n if attn.window is None else attn.window
    assert cache.k.shape == cache.v.shape == (B, H_KV, kept, D_K)
    assert cache.start == n - kept
    assert cache.nbytes == 2 * B * H_KV * kept * D_K * 8  # float64: a window layer holds w keys at most


def test_a_window_cache_never_holds_more_than_its_window():
    attn, x = layer(window=3, rope_theta=10.0), inputs(n=9)
    _, _, cache = attn.decode(x[:, :7])  # a prompt longer than the window
    assert cache.k.size(-2) == 3 and cache.start == 4
    assert cache.k.untyped_storage().nbytes() == cache.k.nbytes  # a copy, not a view of all 7 keys
    assert mha.KVCache(cache.k, cache.v) == (cache.k, cache.v, 0)  # KVCache(k, v) still works
    out, _, cache = attn.decode(x[:, 7:], cache)
    torch.testing.assert_close(out, attn(x, mask=mha.causal_mask(9))[0][:, 7:], rtol=0, atol=1e-12)


def test_the_repr_names_the_options_that_are_set():
    text = repr(layer(rope_theta=100.0, window=3, sinks=True, qk_norm=True))
    assert "d_k=8" in text and "rope_theta=100.0" in text and "window=3" in text and "softcap" not in text
    assert "q_norm" in text


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        ((24, 4), {"window": 0}, ValueError, "window must be a positive int"),
        ((24, 4), {"window": 2.5}, TypeError, "window must be a positive int"),
        ((20, 4), {"rope_theta": 10000.0}, ValueError, "rope_theta .* even head width d_k, got d_k=5"),
        ((24, 4), {"head_dim": 3, "rope_theta": 10000.0}, ValueError, "d_k=3"),
        ((24, 5), {}, ValueError, "d_model=24 must be divisible by the number of heads h=5"),
        ((24, 4), {"n_kv_heads": 3}, ValueError, "h=4 must be divisible by n_kv_heads=3"),
        ((24, 4), {"head_dim": 0}, ValueError, "head_dim must be a positive int"),
        ((24, 4), {"scale": -1.0}, ValueError, "scale must be a positive number"),
        ((24, 4), {"softcap": "50"}, TypeError, "softcap must be a positive number"),
        ((24, 4), {"rope_theta": 0}, ValueError, "rope_theta must be a positive number"),
    ],
)
def test_bad_options_raise_errors_that_name_them(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        mha.MultiHeadAttention(*args, **kwargs)


@pytest.mark.parametrize("fused", [False, True])
def test_steps_return_the_keys_their_type_declares_in_its_order(fused):
    steps = layer(**OPTIONS["all"]).steps(inputs(), fused=fused)
    declared = list(mha.multihead.AttentionSteps.__annotations__)
    assert set(steps) <= set(declared)
    assert list(steps) == [key for key in declared if key in steps]  # in the order of computation
    assert isinstance(steps["cache"], mha.KVCache)


def test_why_not_fused_names_what_the_kernel_lacks():
    assert layer().why_not_fused == layer(window=3, rope_theta=10.0, qk_norm=True).why_not_fused == ""
    assert layer(softcap=2.0).why_not_fused == "softcap is set: PyTorch's kernel has no softcap"
    assert "sinks" in layer(sinks=True).why_not_fused and "softcap" not in layer(sinks=True).why_not_fused
    assert "weights" not in layer().steps(inputs(), fused=True)  # the kernel ran: no weights kept
    assert "weights" in layer(sinks=True).steps(inputs(), fused=True)  # it did not: the explicit path ran
