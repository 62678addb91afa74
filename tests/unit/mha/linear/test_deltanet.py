"""mha.linear.deltanet: GatedDeltaNet keeps the layers' call and decode contract with a state that does not
grow, and its chunked forward equals its steps token by token.

Everything in float64: decoding must agree within 1e-6.
"""

import math

import pytest
import torch
import torch.nn.functional as F

import mha
from mha.linear import GatedDeltaNet, RecurrentState

B, N = 2, 37  # chunks of 8 leave a ragged end

SIZES = {"d_model": 24, "h": 2, "n_v_heads": 4, "head_dim": 6, "v_head_dim": 5, "kernel": 3}


def layer(rule="gated_delta", chunk=8, **changes) -> GatedDeltaNet:
    torch.manual_seed(0)
    options = {**SIZES, **changes}
    d_model, h = options.pop("d_model"), options.pop("h")
    return GatedDeltaNet(d_model, h, rule=rule, chunk=chunk, **options).double().eval()


def tokens(n=N, batch=B, seed=1):
    return torch.randn(
        batch, n, SIZES["d_model"], dtype=torch.float64, generator=torch.Generator().manual_seed(seed)
    )


@pytest.mark.parametrize("rule", ["linear", "delta", "gated_delta"])
def test_forward_by_chunks_equals_the_steps_token_by_token(rule):
    ours, x = layer(rule), tokens()
    out, weights = ours(x)
    assert weights is None and out.shape == x.shape
    assert 0.05 < out.abs().max() < 20
    torch.testing.assert_close(ours.steps(x)["out"], out, rtol=0, atol=1e-10)
    torch.testing.assert_close(ours(x, mask=mha.causal_mask(N))[0], out, rtol=0, atol=0)
    torch.testing.assert_close(ours(x, mask=mha.causal_mask(N)[None, None])[0], out, rtol=0, atol=0)


@pytest.mark.parametrize("rule", ["linear", "delta", "gated_delta"])
@pytest.mark.parametrize("prompt", [1, 5, 20])
def test_decoding_token_by_token_equals_the_full_pass(rule, prompt):
    ours, x = layer(rule), tokens()
    full, _ = ours(x)
    out, weights, state = ours.decode(x[:, :prompt])
    assert weights is None
    outs = [out]
    for t in range(prompt, N):
        out, _, state = ours.decode(x[:, t : t + 1], state)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-6)
    _, _, whole = ours.decode(x)  # and the state equals the one the whole sequence leaves
    torch.testing.assert_close(state.S, whole.S, rtol=0, atol=1e-10)
    torch.testing.assert_close(state.conv, whole.conv, rtol=0, atol=1e-12)
    half, _, state = ours.decode(x[:, :20])  # a prompt, then the rest at once
    rest, _, _ = ours.decode(x[:, 20:], state)
    torch.testing.assert_close(torch.cat([half, rest], dim=1), full, rtol=0, atol=1e-10)


def test_the_state_does_not_grow_with_the_context():
    ours = layer()
    h_v, d_k, d_v, kernel = SIZES["n_v_heads"], SIZES["head_dim"], SIZES["v_head_dim"], SIZES["kernel"]
    channels = 2 * SIZES["h"] * d_k + h_v * d_v
    expected = B * (h_v * d_v * d_k + (kernel - 1) * channels) * 8  # float64
    state, sizes = None, []
    for n in (1, 4, 30, 100):
        _, _, state = ours.decode(tokens(n), state)
        assert isinstance(state, RecurrentState)
        sizes.append(state.nbytes)
    assert sizes == [expected] * 4
    assert state.S.shape == (B, h_v, d_v, d_k) and state.conv.shape == (B, kernel - 1, channels)
    _, _, state = layer(kernel=1).decode(tokens(5))
    assert state.conv.shape == (B, 0, channels) and state.nbytes == B * h_v * d_v * d_k * 8


def test_the_output_ignores_the_future():
    ours, x = layer(), tokens()
    changed = x.clone()
    changed[:, 20:] += 1.0
    out, _ = ours(x)
    out_changed, _ = ours(changed)
    torch.testing.assert_close(out_changed[:, :20], out[:, :20], rtol=0, atol=1e-12)
    assert (out_changed[:, 20:] - out[:, 20:]).abs().max() > 1e-3


def test_the_layer_reads_key_head_j_over_the_group_for_value_head_j():
    """Four value heads on two key heads equal four value heads on four key heads that repeat them
    (1, 1, 2, 2: value head j reads key head j // 2, not j % 2)."""
    grouped = layer()
    d_model, h, d_k, kernel = SIZES["d_model"], SIZES["h"], SIZES["head_dim"], SIZES["kernel"]
    options = {name: value for name, value in SIZES.items() if name not in ("d_model", "h")}
    full = GatedDeltaNet(d_model, 4, **options, chunk=8).double().eval()
    with torch.no_grad():
        for name, param in grouped.named_parameters():
            if not name.startswith(("W_q", "W_k", "conv")):
                full.get_parameter(name).copy_(param)
        for name in ("W_q", "W_k"):  # each key head's rows twice, one after the other
            rows = getattr(grouped, name).weight.view(h, 1, d_k, d_model).expand(h, 2, d_k, d_model)
            getattr(full, name).weight.copy_(rows.reshape(2 * h * d_k, d_model))
        q_w, k_w, v_w = grouped.conv.weight.split(
            [h * d_k, h * d_k, 4 * SIZES["v_head_dim"]]
        )  # (., 1, kernel)
        twice = [
            w.view(h, 1, d_k, kernel).expand(h, 2, d_k, kernel).reshape(-1, 1, kernel) for w in (q_w, k_w)
        ]
        full.conv.weight.copy_(torch.cat([*twice, v_w]))
    x = tokens()
    torch.testing.assert_close(full(x)[0], grouped(x)[0], rtol=0, atol=1e-12)


def test_steps_shows_beta_the_decay_and_the_state_growing():
    ours, x = layer(), tokens()
    steps = ours.steps(x)
    assert list(steps) == ["q", "k", "v", "beta", "alpha", "heads", "state_norm", "gated", "out", "state"]
    for name in ("beta", "alpha", "state_norm"):
        assert steps[name].shape == (B, SIZES["n_v_heads"], N), name
    assert ((steps["beta"] > 0) & (steps["beta"] < 1)).all() and (
        (steps["alpha"] > 0) & (steps["alpha"] < 1)
    ).all()
    unit = torch.ones(B, SIZES["h"], N, dtype=torch.float64)  # lengths 1, up to the eps under the root
    torch.testing.assert_close(steps["k"].norm(dim=-1), unit, rtol=0, atol=1e-3)
    torch.testing.assert_close(steps["q"].norm(dim=-1), unit * SIZES["head_dim"] ** -0.5, rtol=0, atol=1e-3)
    final = torch.linalg.matrix_norm(steps["state"].S)
    torch.testing.assert_close(steps["state_norm"][..., -1], final, rtol=0, atol=1e-12)
    assert "alpha" not in layer("delta").steps(x) and "beta" not in layer("linear").steps(x)


def test_the_initial_decays_lie_where_mamba_2_puts_them():
    ours = GatedDeltaNet(32, 4)
    A, dt = ours.A_log.exp(), F.softplus(ours.dt_bias)
    assert ((A >= 1.0) & (A <= 16.0)).all() and ((dt >= 1e-3 - 1e-9) & (dt <= 0.1 + 1e-9)).all()
    assert ours.W_q.bias is None and ours.conv.bias is None and ours.W_o.bias is None


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"n_v_heads": 3}, ValueError, "n_v_heads=3 must be a multiple of the number of key heads h=2"),
        ({"kernel": 0}, ValueError, "kernel must be a positive int, got 0"),
        ({"kernel": 2.0}, TypeError, "kernel must be a positive int"),
        ({"rule": "mamba"}, ValueError, "rule must be one of linear, delta, gated_delta"),
        ({"activation": "gelu"}, ValueError, "activation must be one of"),
        ({"head_dim": None, "d_model": 25}, ValueError, "d_model=25 must be divisible"),
    ],
)
def test_bad_settings_are_named(kwargs, error, words):
    with pytest.raises(error, match=words):
        layer(**kwargs)


def test_any_mask_but_a_causal_one_is_refused():
    ours, x = layer(), tokens(n=6)
    for mask in (
        torch.ones(6, 6, dtype=torch.bool),  # bidirectional
        mha.causal_mask(6, window=2),  # a sliding window
        mha.causal_mask(6) & mha.padding_mask([6, 4], 6),  # causal and padding
    ):
        with pytest.raises(ValueError, match=r"mask must be None or a causal mask, mha.causal_mask\(6\)"):
            ours(x, mask=mask)
    with pytest.raises(ValueError, match="cannot broadcast"):
        ours(x, mask=mha.causal_mask(7))
    with pytest.raises(TypeError, match=r"torch\.bool"):
        ours(x, mask=mha.causal_mask(6).float())


def test_bad_inputs_and_states_are_named():
    ours, x = layer(), tokens(n=4)
    with pytest.raises(ValueError, match=r"x must have shape \(B, n, d_model=24\)"):
        ours(x[..., :-1])
    with pytest.raises(TypeError, match=r"x has dtype torch\.float32"):
        ours(x.float())
    with pytest.raises(TypeError, match="state must be the RecurrentState that decode returned"):
        ours.decode(x, (torch.zeros(1),))
    _, _, state = ours.decode(x)
    with pytest.raises(ValueError, match=r"state.S must have shape \(B, h_v, d_v, d_k\)"):
        ours.decode(x[:1], state)


def test_a_float32_layer_decodes_within_1e_6():
    ours, x = layer().float(), tokens().float()
    full, _ = ours(x)
    _, _, state = ours.decode(x[:, :30])
    outs = []
    for t in range(30, N):
        out, _, state = ours.decode(x[:, t : t + 1], state)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), full[:, 30:], rtol=0, atol=1e-6)
    assert math.isfinite(full.abs().max().item())


def test_the_chunked_form_trains_as_the_recurrent_one():
    """forward (by chunks, through the triangular solve) and steps (token by token): the same gradients."""
    ours, x = layer().train(), tokens(n=20)
    grads = []
    for run in (lambda: ours(x)[0], lambda: ours.steps(x)["out"]):
        ours.zero_grad()
        run().square().sum().backward()
        grads.append({name: p.grad.clone() for name, p in ours.named_parameters()})
    assert set(grads[0]) == {name for name, _ in ours.named_parameters()}
    for name, grad in grads[0].items():
        assert grad.abs().max() > 0, name
        torch.testing.assert_close(grad, grads[1][name], rtol=0, atol=1e-9)
