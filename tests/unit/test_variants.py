"""Today's layers as options of mha.MultiHeadAttention: each option against its formula, decoding with every
option against the full pass, the fused path against the explicit one, and bad options."""

import math

import pytest
import torch

import mha

D_MODEL, H, H_KV, D_K = 24, 4, 2, 8  # d_k = 8, not 24 / 4 = 6
OPTIONS = {  # one layer per option, and layers that combine them as today's models do
    "head_dim": {},
    "rope": {"rope_theta": 100.0},
    "qk_norm": {"qk_norm": True},
    "scale": {"scale": 0.5},
    "softcap": {"softcap": 2.0},
    "window": {"window": 3},
    "sinks": {"sinks": True},
    "all": {"rope_theta": 100.0, "qk_norm": True, "scale": 0.3, "softcap": 5.0, "window": 4, "sinks": True},
    "gate": {"gate": True},
    "partial": {"rope_theta": 100.0, "rope_fraction": 0.25},
    "proportional": {"rope_theta": 100.0, "rope_fraction": 0.5, "rope_style": "proportional"},
    "interleaved": {"rope_theta": 100.0, "rope_style": "interleaved"},
    "chunk": {"rope_theta": 100.0, "chunk": 4},
    "temperature": {"temperature": (2.0, 0.5)},
    "v_norm": {"v_norm": True},
    "k_eq_v": {"k_eq_v": True},
    "qwen3_next": {"gate": True, "qk_norm": True, "rope_theta": 100.0, "rope_fraction": 0.25},
    "gemma4_full": {
        "k_eq_v": True,
        "v_norm": True,
        "qk_norm": True,
        "scale": 1.0,
        "rope_theta": 100.0,
        "rope_fraction": 0.5,
        "rope_style": "proportional",
    },
    "gemma4_sliding": {"v_norm": True, "qk_norm": True, "scale": 1.0, "rope_theta": 100.0, "window": 3},
    "llama4_chunked": {"rope_theta": 100.0, "rope_style": "interleaved", "qk_norm": "weightless", "chunk": 4},
    "llama4_nope": {"temperature": (2.0, 0.5)},
    "keys_as_values_in_chunks": {"k_eq_v": True, "chunk": 3, "rope_theta": 10.0},
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


def turned(x, pairs, angle):
    """``x`` with coordinate ``i`` of each pair ``(i, j)`` and ``j`` turned as the complex ``x_i + i x_j`` by
    ``angle[:, p]`` (positions by pair ``p``), every other coordinate left as it is."""
    out = x.clone()
    for p, (i, j) in enumerate(pairs):
        z = torch.complex(x[..., i], x[..., j]) * torch.polar(torch.ones_like(angle[:, p]), angle[:, p])
        out[..., i], out[..., j] = z.real, z.imag
    return out


@pytest.mark.parametrize(
    ("options", "pairs", "exponents"),
    [  # D_K = 8; which coordinates pair up, and the frequency exponent of each pair (theta ** -exponent)
        ({"rope_fraction": 0.5}, [(0, 2), (1, 3)], [0, 2 / 4]),  # partial: the first 4 turn, over width 4
        ({"rope_fraction": 0.5, "rope_style": "proportional"}, [(0, 4), (1, 5)], [0, 2 / 8]),  # Gemma 4
        (
            {"rope_style": "interleaved"},
            [(0, 1), (2, 3), (4, 5), (6, 7)],
            [0, 2 / 8, 4 / 8, 6 / 8],
        ),  # Llama 4
        ({"rope_fraction": 0.25, "rope_style": "interleaved"}, [(0, 1)], [0]),
    ],
)
def test_partial_proportional_and_interleaved_rotary_turn_their_pairs(options, pairs, exponents):
    theta = 100.0
    steps = layer(rope_theta=theta, **options).steps(inputs())
    q = mha.multihead.split_heads(steps["q"], H)  # (B, h, n, d_k), before the rotation
    angle = torch.arange(9.0, dtype=torch.float64)[:, None] * theta ** -torch.tensor(exponents).double()
    torch.testing.assert_close(steps["q_rotated"], turned(q, pairs, angle), rtol=0, atol=1e-12)


@pytest.mark.parametrize("style", ["half-split", "interleaved", "proportional"])
def test_every_rotary_style_scores_by_offset_only(style):
    attn = layer(rope_theta=10.0, rope_fraction=0.5, rope_style=style)
    x = inputs(B=1, n=1).expand(1, 6, D_MODEL)  # one token repeated: only the positions differ
    scores = attn.steps(x)["scores"][0]  # (h, n, n)
    for offset in range(-5, 6):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)  # (h, n - |offset|)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal), rtol=0, atol=1e-12)


def test_the_output_gate_multiplies_the_merged_heads_before_w_o():
    attn, x = layer(gate=True), inputs()
    steps = attn.steps(x)
    torch.testing.assert_close(steps["gate"], torch.sigmoid(attn.W_g(x)), rtol=0, atol=0)  # (B, n, h d_k)
    torch.testing.assert_close(steps["out"], attn.W_o(steps["concat"] * steps["gate"]), rtol=0, atol=1e-12)
    assert steps["gate"].shape == (2, 9, H * D_K) and steps["gate"].min() > 0 and steps["gate"].max() < 1


def test_weightless_and_value_norms_divide_by_the_rms_only():
    attn = layer(qk_norm="weightless", v_norm=True)
    assert set(attn.state_dict()) == {f"W_{p}.{w}" for p in "qkvo" for w in ("weight", "bias")}  # no weights
    steps = attn.steps(inputs())
    for name, heads, key in (("q", H, "q_normed"), ("k", H_KV, "k_normed"), ("v", H_KV, "v_normed")):
        x = mha.multihead.split_heads(steps[name], heads)  # (B, heads, n, d_k)
        torch.testing.assert_close(
            steps[key], x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt(), rtol=0, atol=1e-12
        )


def test_keys_as_values_take_the_key_projection_before_its_norm_and_rotation():
    attn = layer(k_eq_v=True, v_norm=True, qk_norm=True, rope_theta=10.0)
    assert attn.W_v is None and "W_v.weight" not in attn.state_dict()
    steps = attn.steps(inputs())
    k = mha.multihead.split_heads(steps["k"], H_KV)  # (B, h_kv, n, d_k), the raw key projection
    value = k / (k.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()  # v_norm of the raw keys
    torch.testing.assert_close(
        steps["v_heads"], value.repeat_interleave(H // H_KV, dim=1), rtol=0, atol=1e-12
    )
    assert not torch.allclose(steps["k_heads"], steps["v_heads"])  # the keys are normed with a weight, turned


@pytest.mark.parametrize("c", [1, 3, 4, 20])
def test_a_chunk_is_the_causal_block_on_top_of_the_given_mask(c):
    attn, x = layer(chunk=c), inputs()
    n = x.size(1)
    i, j = torch.arange(n)[:, None], torch.arange(n)
    block = (i // c == j // c) & (j <= i)  # the same chunk, aligned to position 0, and not after
    padding = mha.padding_mask([n, n - 2], n)  # (B, 1, 1, n)
    for mask, expected in ((None, block), (mha.causal_mask(n), block), (padding, block & padding)):
        weights = attn(x, mask=mask)[1]  # (B, h, n, n)
        assert torch.equal(weights != 0, expected.expand_as(weights))
    plain = layer()  # the same weights: a chunk is a mask
    torch.testing.assert_close(attn(x)[0], plain(x, mask=mha.causal_mask(n, chunk=c))[0], rtol=0, atol=1e-12)


def test_the_temperature_sharpens_queries_from_position_floor_scale_minus_one():
    attn = layer(temperature=(4.0, 0.5))
    steps = attn.steps(inputs())
    position = torch.arange(9.0, dtype=torch.float64)
    expected = 1 + 0.5 * torch.log1p(torch.floor((position + 1) / 4))  # Llama 4's, with (position + 1)
    torch.testing.assert_close(steps["temperature"], expected, rtol=0, atol=0)
    assert (steps["temperature"][:3] == 1).all() and (steps["temperature"][3:] > 1).all()
    q = mha.multihead.split_heads(steps["q"], H)  # (B, h, n, d_k)
    torch.testing.assert_close(steps["q_heads"], q * expected[:, None], rtol=0, atol=1e-12)
    _, _, cache = attn.decode(inputs()[:, :7])  # decoding: the positions go on from the cache
    tail = attn.steps(inputs()[:, 7:], cache=cache)["temperature"]
    torch.testing.assert_close(tail, expected[7:], rtol=0, atol=0)


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
        if need_weights:  # the weights on the keys the cache still held, and this token's
            held = w.size(-1)
            torch.testing.assert_close(w[:, :, 0], weights[:, :, t, t + 1 - held : t + 1], rtol=0, atol=1e-12)
            assert not weights[:, :, t, : t + 1 - held].any()  # what the cache dropped, no query sees again
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)
    kept = attn.window or (n % attn.chunk if attn.chunk else n)  # a window's keys, or the current chunk's
    assert cache.k.shape == (B, H_KV, kept, D_K) and cache.start == n - kept
    tensors = 1 if attn.W_v is None else 2  # keys as values: one tensor per token, not two
    assert cache.v is None if tensors == 1 else cache.v.shape == cache.k.shape
    assert cache.nbytes == tensors * B * H_KV * kept * D_K * 8  # float64


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
        (
            (24, 3),
            {"rope_theta": 1e4, "rope_fraction": 0.125},
            ValueError,
            "rope_fraction=0.125 turns 1 of the d_k=8",
        ),
        ((24, 4), {"rope_theta": 1e4, "rope_fraction": 0.5}, ValueError, "rope_fraction=0.5 turns 3 .* even"),
        (
            (24, 4),
            {"rope_theta": 1e4, "rope_fraction": 0},
            ValueError,
            r"rope_fraction must be a number in \(0, 1\]",
        ),
        ((24, 4), {"rope_fraction": 0.5}, ValueError, "rope_fraction=0.5 .* need rope_theta"),
        ((24, 4), {"rope_theta": 1e4, "rope_style": "spiral"}, ValueError, "rope_style must be one of"),
        ((24, 4), {"qk_norm": "sometimes"}, ValueError, "qk_norm must be one of False, True, 'weightless'"),
        ((24, 4), {"chunk": 0}, ValueError, "chunk must be a positive int"),
        (
            (24, 4),
            {"temperature": (0, 0.1)},
            ValueError,
            "temperature's floor_scale must be a positive number",
        ),
        (
            (24, 4),
            {"temperature": 8192},
            TypeError,
            r"temperature must be a tuple \(floor_scale, attn_scale\)",
        ),
    ],
)
def test_bad_options_raise_errors_that_name_them(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        mha.MultiHeadAttention(*args, **kwargs)


@pytest.mark.parametrize("name", ["all", "qwen3_next", "gemma4_full", "llama4_nope"])
@pytest.mark.parametrize("fused", [False, True])
def test_steps_return_the_keys_their_type_declares_in_its_order(name, fused):
    steps = layer(**OPTIONS[name]).steps(inputs(), fused=fused)
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
