"""mha.linear.rules: the three forms of linear attention and the (gated) delta rule (recurrent, chunked,
parallel) agree, read key head j over its group of value heads, and name a wrong input.

Everything in float64: the forms must agree within 1e-10 (they land near 1e-15).
"""

import pytest
import torch
import torch.nn.functional as F

import mha
from mha.linear import chunked, parallel, recurrent

B, H_K, H, N, D_K, D_V = 2, 2, 4, 37, 5, 4  # 2 key heads, 4 value heads; chunks of 16 leave a ragged end
RULES = {  # the path of mha.linear.rules: what each rule passes
    "linear": set(),
    "gated linear": {"log_alpha"},
    "delta": {"beta"},
    "gated delta": {"beta", "log_alpha"},
}


def inputs(seed=0, n=N):
    """Unit queries and keys (as the layer gives them), values of order 1, beta in (0, 1), decays in
    (0.3, 1), and a state to start from."""
    g = torch.Generator().manual_seed(seed)
    kw = {"dtype": torch.float64, "generator": g}
    q = F.normalize(torch.randn(B, H_K, n, D_K, **kw), dim=-1)
    k = F.normalize(torch.randn(B, H_K, n, D_K, **kw), dim=-1)
    v = torch.randn(B, H, n, D_V, **kw)
    extras = {"beta": torch.rand(B, H, n, **kw), "log_alpha": -1.2 * torch.rand(B, H, n, **kw)}
    return q, k, v, extras, torch.randn(B, H, D_V, D_K, **kw)


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("chunk", [1, 16, 64])
@pytest.mark.parametrize("start", ["zeros", "a state"])
def test_the_chunked_form_equals_the_recurrent_one(rule, chunk, start):
    q, k, v, extras, S_0 = inputs()
    options = {name: extras[name] for name in RULES[rule]}
    state = None if start == "zeros" else S_0
    o, S, _ = recurrent(q, k, v, state=state, **options)
    o_chunked, S_chunked = chunked(q, k, v, state=state, chunk=chunk, **options)
    assert o.abs().max() > 0.1  # outputs of order 1, not tiny ones that would prove nothing
    torch.testing.assert_close(o_chunked, o, rtol=0, atol=1e-10)
    torch.testing.assert_close(S_chunked, S, rtol=0, atol=1e-10)


@pytest.mark.parametrize("rule", ["linear", "gated linear"])
def test_the_parallel_form_is_masked_attention_without_softmax(rule):
    q, k, v, extras, _ = inputs()
    options = {name: extras[name] for name in RULES[rule]}
    o, _, _ = recurrent(q, k, v, **options)
    torch.testing.assert_close(parallel(q, k, v, **options), o, rtol=0, atol=1e-10)
    if rule == "linear":  # the bridge: softmax attention's scores, masked, with no softmax and no scale
        q, k = q.repeat_interleave(2, dim=1), k.repeat_interleave(2, dim=1)  # (B, h, n, d_k)
        scores = (q @ k.mT).masked_fill(~mha.causal_mask(N), 0.0)  # (B, h, n, n)
        torch.testing.assert_close(scores @ v, o, rtol=0, atol=1e-12)


@pytest.mark.parametrize("rule", list(RULES))
def test_the_forms_read_key_head_j_over_the_group_for_value_head_j(rule):
    """Two key heads for four value heads equal four key heads that repeat them: 1, 1, 2, 2 (j // 2)."""
    q, k, v, extras, S_0 = inputs()
    options = {name: extras[name] for name in RULES[rule]}
    q_4, k_4 = q.repeat_interleave(2, dim=1), k.repeat_interleave(2, dim=1)  # (B, h, n, d_k)
    o, S, _ = recurrent(q_4, k_4, v, state=S_0, **options)
    torch.testing.assert_close(recurrent(q, k, v, state=S_0, **options)[0], o, rtol=0, atol=1e-12)
    o_chunked, S_chunked = chunked(q, k, v, state=S_0, chunk=16, **options)
    torch.testing.assert_close(o_chunked, o, rtol=0, atol=1e-10)
    torch.testing.assert_close(S_chunked, S, rtol=0, atol=1e-10)
    if "beta" not in options:
        torch.testing.assert_close(
            parallel(q, k, v, **options), parallel(q_4, k_4, v, **options), rtol=0, atol=1e-12
        )


def test_the_state_is_the_sum_of_value_key_outer_products():
    q, k, v, _, _ = inputs()
    _, S, norms = recurrent(q, k, v, norms=True)
    k_4 = k.repeat_interleave(2, dim=1)  # (B, h, n, d_k): each value head's keys
    torch.testing.assert_close(S, v.mT @ k_4, rtol=0, atol=1e-12)  # sum_t v_t k_t^T: (B, h, d_v, d_k)
    assert norms.shape == (B, H, N)
    torch.testing.assert_close(norms[..., -1], torch.linalg.matrix_norm(S), rtol=0, atol=1e-12)


def test_the_delta_rule_with_beta_one_replaces_what_a_key_held():
    """Linear attention adds a second value under the same key; the delta rule with beta = 1 overwrites."""
    q, k, v, _, _ = inputs(n=2)
    k = k[:, :, :1].expand(B, H_K, 2, D_K)  # one unit key, written twice
    _, S_sum, _ = recurrent(q, k, v)
    _, S_delta, _ = recurrent(q, k, v, beta=torch.ones(B, H, 2, dtype=torch.float64))
    read = k[:, :, 0, :, None].repeat_interleave(2, dim=1)  # (B, h, d_k, 1)
    torch.testing.assert_close((S_delta @ read)[..., 0], v[:, :, 1], rtol=0, atol=1e-12)  # the last value
    torch.testing.assert_close((S_sum @ read)[..., 0], v[:, :, 0] + v[:, :, 1], rtol=0, atol=1e-12)


def test_the_forms_name_a_wrong_input():
    q, k, v, extras, _ = inputs()
    with pytest.raises(ValueError, match=r"k must have shape \(B, h_k, n, d_k\)"):
        recurrent(q, k[:, :, :-1], v)
    with pytest.raises(ValueError, match=r"beta must have shape \(B, h, n\)"):
        chunked(q, k, v, beta=extras["beta"][..., :-1])
    with pytest.raises(ValueError, match="state must have shape"):
        chunked(q, k, v, state=torch.zeros(B, H, D_K, D_V, dtype=torch.float64))
    with pytest.raises(TypeError, match=r"v has dtype torch\.float32"):
        parallel(q, k, v.float())
    with pytest.raises(ValueError, match="chunk must be a positive int"):
        chunked(q, k, v, chunk=0)
