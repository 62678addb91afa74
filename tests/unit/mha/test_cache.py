"""MultiHeadAttention.decode and KVCache: token-by-token decoding equals the full causal pass."""

import pytest
import torch
import torch.nn.functional as F

import mha
from mha.costs import kv_cache_bytes

CASES = [(32, 4, 4), (32, 4, 2), (32, 4, 1), (48, 8, 2)]  # (d_model, h, n_kv_heads): MHA, GQA, MQA, GQA


def module(d_model: int, h: int, n_kv_heads: int) -> mha.MultiHeadAttention:
    torch.manual_seed(0)
    return mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads).double().eval()


@pytest.mark.parametrize(("d_model", "h", "n_kv_heads"), CASES)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("prompt", [1, 4])
def test_token_by_token_equals_the_full_causal_pass(d_model, h, n_kv_heads, need_weights, prompt):
    attn = module(d_model, h, n_kv_heads)
    B, n = 2, 9
    x = torch.randn(B, n, d_model, dtype=torch.float64)
    full, weights = attn(x, mask=mha.causal_mask(n))  # (B, n, d_model), (B, h, n, n)
    out, w, cache = attn.decode(x[:, :prompt], need_weights=need_weights)
    outs = [out]
    if need_weights:
        torch.testing.assert_close(w, weights[:, :, :prompt, :prompt], rtol=0, atol=1e-12)
    for t in range(prompt, n):
        out, w, cache = attn.decode(x[:, t : t + 1], cache, need_weights=need_weights)  # (B, 1, d_model)
        outs.append(out)
        if need_weights:
            assert w.shape == (B, h, 1, t + 1)
            torch.testing.assert_close(w[:, :, 0], weights[:, :, t, : t + 1], rtol=0, atol=1e-12)
        else:
            assert w is None
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)
    assert cache.k.shape == cache.v.shape == (B, n_kv_heads, n, d_model // h)


@pytest.mark.parametrize(("d_model", "h", "n_kv_heads"), CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_cache_holds_what_kv_cache_bytes_counts(d_model, h, n_kv_heads, dtype):
    attn = module(d_model, h, n_kv_heads).to(dtype)
    _, _, cache = attn.decode(torch.randn(3, 5, d_model, dtype=dtype))
    _, _, cache = attn.decode(torch.randn(3, 1, d_model, dtype=dtype), cache)
    assert cache.nbytes == kv_cache_bytes(1, n_kv_heads, d_model // h, 6, batch=3, dtype=dtype)


def test_is_causal_aligns_top_left_when_queries_are_fewer_than_keys():
    """The trap: F.scaled_dot_product_attention(is_causal=True) lets the one new query see key 0 only."""
    attn = module(32, 4, 4)
    x = torch.randn(1, 6, 32, dtype=torch.float64)
    _, _, cache = attn.decode(x[:, :5])
    steps = {}  # the intermediates of the decoding step, as forward records them
    attn(x[:, 5:], mask=mha.causal_mask(1, 6), cache=cache, record=steps)
    q, k, v = steps["q_heads"], steps["k_heads"], steps["v_heads"]  # (1, h, 1, d_k), 2 x (1, h, 6, d_k)
    top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # what a reader might write
    bottom_right = F.scaled_dot_product_attention(q, k, v, attn_mask=mha.causal_mask(1, 6))
    torch.testing.assert_close(top_left, v[:, :, :1])  # only key 0: the newest token ignores its context
    torch.testing.assert_close(bottom_right, steps["heads"], rtol=0, atol=1e-12)
    assert not torch.allclose(top_left, bottom_right)


def test_bad_caches_raise_clear_errors():
    attn = module(32, 4, 2)
    x = torch.randn(2, 3, 32, dtype=torch.float64)
    _, _, cache = attn.decode(x)
    with pytest.raises(TypeError, match="cache must be the KVCache"):
        attn.decode(x, (cache.k, cache.v))
    with pytest.raises(ValueError, match=r"cache.k must have shape \(B, h_kv, n_past, d_k\)"):
        module(32, 4, 4).decode(x, cache)  # another module's cache: 2 key/value heads, not 4
    with pytest.raises(ValueError, match=r"cache\.k must have shape"):
        attn.decode(x[:1], cache)  # another batch size
    with pytest.raises(TypeError, match="dtype"):
        attn.decode(x, mha.KVCache(cache.k.float(), cache.v.float()))


def test_decode_checks_its_inputs_once(monkeypatch):
    calls = []
    check = mha._checks.check_layer_inputs
    monkeypatch.setattr(mha._checks, "check_layer_inputs", lambda *a, **k: calls.append(1) or check(*a, **k))
    attn = module(32, 4, 2)
    x = torch.randn(2, 3, 32, dtype=torch.float64)
    for need_weights in (True, False):
        _, _, cache = attn.decode(x, need_weights=need_weights)
        attn.decode(x, cache, need_weights=need_weights)
    assert len(calls) == 4  # one per call
