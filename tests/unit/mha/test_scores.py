"""Today's layers as parts of mha.MultiHeadAttention: each part against its formula, decoding with every part
against the full pass, the fused path against the explicit one, the work of a decoding step, and bad parts."""

import math

import pytest
import torch
from torch import nn

import mha
from mha.bands import Chunk, NoBand, Window
from mha.gates import NoGate, OutputGate
from mha.multihead import KeysAsValues, split_heads
from mha.positional import NoPositions, Rotary, Temperature
from mha.scores import Sinks, SoftCap

D_MODEL, H, H_KV, D_K = 24, 4, 2, 8  # d_k = 8, not 24 / 4 = 6


def norms(weighted=True):
    """QK-norm: an RMSNorm over each head's query and key."""
    return {name: nn.RMSNorm(D_K, eps=1e-6, elementwise_affine=weighted) for name in ("q_norm", "k_norm")}


def v_norm():
    return {"v_norm": nn.RMSNorm(D_K, eps=1e-6, elementwise_affine=False)}


OPTIONS = {  # one layer per part, and layers that combine them as today's models do (a function: fresh parts)
    "head_dim": dict,
    "rope": lambda: {"positions": Rotary(100.0)},
    "qk_norm": norms,
    "scale": lambda: {"scale": 0.5},
    "softcap": lambda: {"scores": SoftCap(2.0)},
    "window": lambda: {"band": Window(3)},
    "sinks": lambda: {"softmax": Sinks(H)},
    "all": lambda: {
        "positions": Rotary(100.0),
        **norms(),
        "scale": 0.3,
        "scores": SoftCap(5.0),
        "band": Window(4),
        "softmax": Sinks(H),
    },
    "gate": lambda: {"gate": OutputGate(D_MODEL, H * D_K)},
    "partial": lambda: {"positions": Rotary(100.0, fraction=0.25)},
    "proportional": lambda: {"positions": Rotary(100.0, fraction=0.5, style="proportional")},
    "interleaved": lambda: {"positions": Rotary(100.0, style="interleaved")},
    "chunk": lambda: {"positions": Rotary(100.0), "band": Chunk(4)},
    "temperature": lambda: {"positions": Temperature(2.0, 0.5)},
    "v_norm": v_norm,
    "k_eq_v": lambda: {"kind": KeysAsValues},
    "qwen3_next": lambda: {
        "gate": OutputGate(D_MODEL, H * D_K),
        **norms(),
        "positions": Rotary(100.0, fraction=0.25),
    },
    "gemma4_full": lambda: {
        "kind": KeysAsValues,
        **v_norm(),
        **norms(),
        "scale": 1.0,
        "positions": Rotary(100.0, fraction=0.5, style="proportional"),
    },
    "gemma4_sliding": lambda: {
        **v_norm(),
        **norms(),
        "scale": 1.0,
        "positions": Rotary(100.0),
        "band": Window(3),
    },
    "llama4_chunked": lambda: {
        "positions": Rotary(100.0, style="interleaved"),
        **norms(weighted=False),
        "band": Chunk(4),
    },
    "llama4_nope": lambda: {"positions": Temperature(2.0, 0.5)},
    "keys_as_values_in_chunks": lambda: {"kind": KeysAsValues, "band": Chunk(3), "positions": Rotary(10.0)},
}
RECORDED = ["q", "k", "v", "cache", "q_heads", "k_heads", "v_heads", "scores", "scaled_scores", "weights",
            "heads", "concat", "out"]  # fmt: skip  # forward's record, in the order of computation


def layer(kind=mha.MultiHeadAttention, **parts):
    """A float64 layer in eval mode, every weight random (norm weights, sinks and the gate included)."""
    torch.manual_seed(0)
    attn = kind(D_MODEL, H, n_kv_heads=H_KV, head_dim=D_K, **parts).double().eval()
    with torch.no_grad():
        for p in attn.parameters():
            p.normal_(0.0, 0.3)
    return attn


def named(name):
    return layer(**OPTIONS[name]())


def inputs(B=2, n=9):
    return torch.randn(B, n, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(1))


def recorded(attn, x, **kwargs):
    seen = {}
    attn(x, record=seen, **kwargs)
    return seen


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


def test_rotary_turns_each_half_split_pair_by_its_angle():
    theta = 100.0
    steps = recorded(layer(positions=Rotary(theta)), inputs())
    q = split_heads(steps["q"], H)  # (B, h, n, d_k), before the rotation
    # the pair (x_i, x_{i + d_k/2}) as one complex number, turned by position * theta^(-2i/d_k)
    z = torch.complex(q[..., : D_K // 2], q[..., D_K // 2 :])  # (B, h, n, d_k/2)
    angle = torch.arange(9.0, dtype=torch.float64)[:, None] * theta ** (
        -torch.arange(0, D_K, 2, dtype=torch.float64) / D_K
    )
    turned = z * torch.polar(torch.ones_like(angle), angle)  # (B, h, n, d_k/2)
    expected = torch.cat([turned.real, turned.imag], dim=-1)  # (B, h, n, d_k)
    torch.testing.assert_close(steps["q_heads"], expected, rtol=0, atol=1e-12)
    assert steps["cache"].k.shape == (2, H_KV, 9, D_K)  # the keys, turned too


def test_rotary_scores_depend_on_the_offset_between_positions_only():
    attn = layer(positions=Rotary(10.0))
    x = inputs(B=1, n=1).expand(1, 6, D_MODEL)  # one token repeated: only the positions differ
    scores = recorded(attn, x)["scores"][0]  # (h, n, n)
    for offset in range(-5, 6):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)  # (h, n - |offset|)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal), rtol=0, atol=1e-12)


def test_qk_norm_divides_each_head_by_its_rms_and_multiplies_by_a_weight():
    attn = layer(**norms())
    steps = recorded(attn, inputs())
    normed = {"q": steps["q_heads"], "k": steps["cache"].k}  # no positions: the normed heads themselves
    for name, heads, norm in (("q", H, attn.q_norm), ("k", H_KV, attn.k_norm)):
        x = split_heads(steps[name], heads)  # (B, heads, n, d_k)
        expected = x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * norm.weight
        torch.testing.assert_close(normed[name], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("parts", "formula"),
    [
        ({"scale": 0.5}, lambda s: 0.5 * s),
        ({"scores": SoftCap(2.0)}, lambda s: 2.0 * torch.tanh(s / math.sqrt(D_K) / 2.0)),
        ({"scale": 0.5, "scores": SoftCap(2.0)}, lambda s: 2.0 * torch.tanh(0.5 * s / 2.0)),
    ],
)
def test_scale_and_softcap_shape_the_scores(parts, formula):
    steps = recorded(layer(**parts), inputs())
    torch.testing.assert_close(steps["scaled_scores"], formula(steps["scores"]), rtol=0, atol=1e-12)
    if "scores" in parts:
        assert steps["scaled_scores"].abs().max() < parts["scores"].cap  # every score inside (-c, c)


@pytest.mark.parametrize("w", [1, 3, 9, 20])
def test_a_window_is_the_causal_band_on_top_of_the_given_mask(w):
    attn, x = layer(band=Window(w)), inputs()
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
    attn = layer(softmax=Sinks(H))
    steps = recorded(attn, inputs(), mask=mha.causal_mask(9))
    logits = steps["scaled_scores"].masked_fill(~mha.causal_mask(9), -math.inf)  # (B, h, n, n)
    sinks = attn.softmax.sinks
    expected = torch.softmax(torch.cat([logits, sinks[:, None, None].expand(*logits.shape[:-1], 1)], -1), -1)
    torch.testing.assert_close(steps["weights"], expected[..., :-1], rtol=0, atol=1e-12)
    weights, sink = attn.softmax.weights(logits)  # (B, h, n, n), (B, h, n): the share each row gives the sink
    torch.testing.assert_close(sink, expected[..., -1], rtol=0, atol=1e-12)
    torch.testing.assert_close(weights.sum(-1) + sink, torch.ones(2, H, 9, dtype=torch.float64))
    assert sink.shape == (2, H, 9) and sink.min() > 0


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
        ({"fraction": 0.5}, [(0, 2), (1, 3)], [0, 2 / 4]),  # partial: the first 4 turn, over width 4
        ({"fraction": 0.5, "style": "proportional"}, [(0, 4), (1, 5)], [0, 2 / 8]),  # Gemma 4
        ({"style": "interleaved"}, [(0, 1), (2, 3), (4, 5), (6, 7)], [0, 2 / 8, 4 / 8, 6 / 8]),  # Llama 4
        ({"fraction": 0.25, "style": "interleaved"}, [(0, 1)], [0]),
    ],
)
def test_partial_proportional_and_interleaved_rotary_turn_their_pairs(options, pairs, exponents):
    theta = 100.0
    steps = recorded(layer(positions=Rotary(theta, **options)), inputs())
    q = split_heads(steps["q"], H)  # (B, h, n, d_k), before the rotation
    angle = torch.arange(9.0, dtype=torch.float64)[:, None] * theta ** -torch.tensor(exponents).double()
    torch.testing.assert_close(steps["q_heads"], turned(q, pairs, angle), rtol=0, atol=1e-12)


@pytest.mark.parametrize("style", ["half-split", "interleaved", "proportional"])
def test_every_rotary_style_scores_by_offset_only(style):
    attn = layer(positions=Rotary(10.0, fraction=0.5, style=style))
    x = inputs(B=1, n=1).expand(1, 6, D_MODEL)  # one token repeated: only the positions differ
    scores = recorded(attn, x)["scores"][0]  # (h, n, n)
    for offset in range(-5, 6):
        diagonal = torch.diagonal(scores, offset=offset, dim1=-2, dim2=-1)  # (h, n - |offset|)
        torch.testing.assert_close(diagonal, diagonal[:, :1].expand_as(diagonal), rtol=0, atol=1e-12)


def test_the_output_gate_multiplies_the_merged_heads_before_w_o():
    attn, x = layer(gate=OutputGate(D_MODEL, H * D_K)), inputs()
    steps = recorded(attn, x)
    gate = torch.sigmoid(attn.gate.W_g(x))  # (B, n, h d_k)
    torch.testing.assert_close(steps["out"], attn.W_o(steps["concat"] * gate), rtol=0, atol=1e-12)
    assert gate.shape == (2, 9, H * D_K) and set(attn.state_dict()) >= {"gate.W_g.weight", "gate.W_g.bias"}


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


@pytest.mark.parametrize("c", [1, 3, 4, 20])
def test_a_chunk_is_the_causal_block_on_top_of_the_given_mask(c):
    attn, x = layer(band=Chunk(c)), inputs()
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
    attn = layer(positions=Temperature(4.0, 0.5))
    steps = recorded(attn, inputs())
    position = torch.arange(9.0, dtype=torch.float64)
    expected = 1 + 0.5 * torch.log1p(torch.floor((position + 1) / 4))  # Llama 4's, with (position + 1)
    torch.testing.assert_close(attn.positions.factor(position), expected, rtol=0, atol=0)
    assert (expected[:3] == 1).all() and (expected[3:] > 1).all()
    q = split_heads(steps["q"], H)  # (B, h, n, d_k)
    torch.testing.assert_close(steps["q_heads"], q * expected[:, None], rtol=0, atol=1e-12)
    _, _, cache = attn.decode(inputs()[:, :7])  # decoding: the positions go on from the cache
    tail = recorded(attn, inputs()[:, 7:], cache=cache)
    torch.testing.assert_close(
        tail["q_heads"], split_heads(tail["q"], H) * expected[7:, None], rtol=0, atol=1e-12
    )


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


def test_a_window_cache_never_holds_more_than_its_window():
    attn, x = layer(band=Window(3), positions=Rotary(10.0)), inputs(n=9)
    _, _, cache = attn.decode(x[:, :7])  # a prompt longer than the window
    assert cache.k.size(-2) == 3 and cache.start == 4 and cache.end == 7
    assert cache.k.untyped_storage().nbytes() == cache.k.nbytes  # a copy, not a view of all 7 keys
    assert mha.KVCache(cache.k, cache.v) == (cache.k, cache.v, 0)  # KVCache(k, v) still works
    out, _, cache = attn.decode(x[:, 7:], cache)
    torch.testing.assert_close(out, attn(x, mask=mha.causal_mask(9))[0][:, 7:], rtol=0, atol=1e-12)


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


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (lambda: Window(0), ValueError, "w must be a positive int"),
        (lambda: Window(2.5), TypeError, "w must be a positive int"),
        (lambda: Chunk(0), ValueError, "c must be a positive int"),
        (lambda: Rotary(0), ValueError, "theta must be a positive number"),
        (lambda: Rotary(1e4, fraction=0), ValueError, r"fraction must be a number in \(0, 1\]"),
        (lambda: Rotary(1e4, style="spiral"), ValueError, "style must be one of"),
        (lambda: SoftCap("50"), TypeError, "cap must be a positive number"),
        (lambda: Temperature(0, 0.1), ValueError, "floor_scale must be a positive number"),
    ],
)
def test_bad_part_options_raise_errors_that_name_them(make, error, words):
    with pytest.raises(error, match=words):
        make()


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
