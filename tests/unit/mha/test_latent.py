"""MultiHeadLatentAttention and LatentCache: the absorbed form equals the plain one, decoding equals the full
causal pass, the cache holds only the latent and the rotary key, and bad arguments get clear errors."""

import pytest
import torch

import mha

# (q_rank, kv_rank, d_nope, d_rope, d_v): ranks and widths small and unequal; q_rank None = plain query.
SHAPES = [(16, 12, 8, 6, 5), (None, 10, 6, 4, 7), (24, 20, 4, 2, 4)]
D_MODEL, H = 32, 4


def layer(
    q_rank, kv_rank, d_nope, d_rope, d_v, *, bias=True, seed=0, **sparse
) -> mha.MultiHeadLatentAttention:
    torch.manual_seed(seed)
    mla = mha.MultiHeadLatentAttention(
        D_MODEL, H, q_rank=q_rank, kv_rank=kv_rank, d_nope=d_nope, d_rope=d_rope, d_v=d_v, bias=bias, **sparse
    )
    with torch.no_grad():  # random norm weights too, so that a norm left out or misplaced shows
        for norm in (mla.q_norm, mla.kv_norm, mla.ik_norm):
            if norm is not None:
                norm.weight.uniform_(0.5, 1.5)
        if mla.ik_norm is not None:
            mla.ik_norm.bias.normal_()
    return mla.double().eval()


SPARSE = {"index_heads": 3, "index_dim": 8, "top_k": 4}  # DeepSeek Sparse Attention, in miniature


def x_of(B=2, n=9, seed=1) -> torch.Tensor:
    return torch.randn(B, n, D_MODEL, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("masked", [True, False])
def test_absorbed_form_equals_plain_form(shape, masked):
    mla, x = layer(*shape), x_of()
    mask = mha.causal_mask(x.size(1)) if masked else None
    plain, w_plain = mla(x, mask=mask)
    absorbed, w_absorbed = mla(x, mask=mask, absorb=True)
    torch.testing.assert_close(absorbed, plain, rtol=0, atol=1e-12)
    torch.testing.assert_close(w_absorbed, w_plain, rtol=0, atol=1e-12)
    for absorb in (False, True):  # the fused path too
        fused, none = mla(x, mask=mask, need_weights=False, absorb=absorb)
        assert none is None
        torch.testing.assert_close(fused, plain, rtol=0, atol=1e-12)


def recorded(layer, x, mask=None, **kwargs):
    """The intermediates of one forward pass (its ``record``)."""
    steps = {}
    layer(x, mask, record=steps, **kwargs)
    return steps


def test_absorbed_steps_attend_to_the_latent_itself():
    mla, x = layer(*SHAPES[0]), x_of()
    steps = recorded(mla, x, mha.causal_mask(9), absorb=True)
    B, n, (d_c, d_r) = 2, 9, (12, 6)
    assert steps["q_heads"].shape == (B, H, n, d_c + d_r)
    assert steps["k_heads"].shape == (B, 1, n, d_c + d_r)  # one key head, shared by all query heads
    torch.testing.assert_close(steps["v_heads"][:, 0], steps["cache"].c_kv, rtol=0, atol=0)
    plain = recorded(mla, x, mha.causal_mask(9))
    assert plain["k_heads"].shape == (B, H, n, 8 + 6)
    # The rotary part of every head's key is the one shared rotary key.
    for i in range(H):
        torch.testing.assert_close(plain["k_heads"][:, i, :, 8:], plain["cache"].k_rope, rtol=0, atol=0)
    torch.testing.assert_close(steps["heads"], plain["heads"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("absorb", [True, False])
@pytest.mark.parametrize("prompt", [1, 4])
def test_token_by_token_equals_the_full_causal_pass(shape, need_weights, absorb, prompt):
    mla, x = layer(*shape), x_of()
    n = x.size(1)
    full, weights = mla(x, mask=mha.causal_mask(n))  # the plain form, whole sequence
    out, w, cache = mla.decode(x[:, :prompt], need_weights=need_weights, absorb=absorb)
    outs = [out]
    for t in range(prompt, n):
        out, w, cache = mla.decode(x[:, t : t + 1], cache, need_weights=need_weights, absorb=absorb)
        outs.append(out)
        if need_weights:
            torch.testing.assert_close(w[:, :, 0], weights[:, :, t, : t + 1], rtol=0, atol=1e-12)
        else:
            assert w is None
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
def test_the_cache_holds_the_latent_and_the_rotary_key_only(shape, dtype):
    _, kv_rank, _, d_rope, _ = shape
    mla = layer(*shape).to(dtype)
    _, _, cache = mla.decode(torch.randn(3, 5, D_MODEL, dtype=dtype))
    _, _, cache = mla.decode(torch.randn(3, 1, D_MODEL, dtype=dtype), cache)
    assert isinstance(cache, mha.LatentCache)
    assert cache.c_kv.shape == (3, 6, kv_rank) and cache.k_rope.shape == (3, 6, d_rope)
    element = torch.finfo(dtype).bits // 8
    assert cache.nbytes == (kv_rank + d_rope) * 3 * 6 * element  # whatever h, d_nope and d_v are


@pytest.mark.parametrize("fused", [False, True])
def test_the_record_holds_the_keys_its_type_declares_in_its_order(fused):
    steps = recorded(layer(*SHAPES[0], **SPARSE), x_of(), mha.causal_mask(9), need_weights=not fused)
    declared = list(mha.latent.LatentSteps.__annotations__)
    assert list(steps) == [key for key in declared if key in steps]  # nothing undeclared, in order
    assert isinstance(steps["cache"], mha.LatentCache) and ("weights" in steps) == (not fused)


def test_decode_checks_its_inputs_once(monkeypatch):
    calls = []
    check = mha.latent.check_layer_inputs
    monkeypatch.setattr(mha.latent, "check_layer_inputs", lambda *a, **k: calls.append(1) or check(*a, **k))
    mla, x = layer(*SHAPES[0]), x_of()
    _, _, cache = mla.decode(x)
    mla.decode(x, cache, need_weights=True)
    assert len(calls) == 2


def test_the_indexer_scores_keys_by_weighted_relus_and_keeps_the_top_k():
    mla, x = layer(*SHAPES[0], **SPARSE), x_of()
    steps = recorded(mla, x, mha.causal_mask(9))
    n, d_r, (h_i, d_i, k) = 9, SHAPES[0][3], SPARSE.values()
    cos, sin = mha.positional.rotary_tables(n, d_r, dtype=torch.float64)
    q = mha.multihead.split_heads(mla.W_iq(steps["c_q"]), h_i)  # (B, h_i, n, d_i)
    key = mla.ik_norm(mla.W_ik(x))  # (B, n, d_i), LayerNorm'd
    q, key = mha.positional.apply_rotary(q, cos, sin), mha.positional.apply_rotary(key, cos, sin)  # d_r turn
    relu = torch.relu(torch.einsum("bjqd,bkd->bjqk", q, key) / d_i**0.5)  # (B, h_i, n, n)
    w = mla.W_iw(x) / h_i**0.5  # (B, n, h_i)
    expected = torch.einsum("bqj,bjqk->bqk", w, relu).masked_fill(~mha.causal_mask(n), float("-inf"))
    torch.testing.assert_close(steps["index_scores"], expected, rtol=0, atol=1e-12)
    best = expected.topk(k, dim=-1).indices  # (B, n, k); random weights: no ties
    chosen = torch.zeros_like(expected, dtype=torch.bool).scatter(-1, best, True) & mha.causal_mask(n)
    assert torch.equal(steps["selected"], chosen)
    assert torch.equal(steps["weights"] != 0, chosen[:, None].expand(-1, H, -1, -1))  # attends there only


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("absorb", [True, False])
@pytest.mark.parametrize("prompt", [1, 6])
def test_sparse_decoding_equals_the_full_causal_pass(need_weights, absorb, prompt):
    mla, x = layer(*SHAPES[0], **SPARSE), x_of()
    full, _ = mla(x, mask=mha.causal_mask(9))
    out, _, cache = mla.decode(x[:, :prompt], need_weights=need_weights, absorb=absorb)
    outs = [out]
    for t in range(prompt, 9):
        out, _, cache = mla.decode(x[:, t : t + 1], cache, need_weights=need_weights, absorb=absorb)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)
    _, kv_rank, _, d_rope, _ = SHAPES[0]
    assert cache.k_index.shape == (2, 9, SPARSE["index_dim"])  # the indexer's keys, cached with the latent
    assert cache.nbytes == (kv_rank + d_rope + SPARSE["index_dim"]) * 2 * 9 * 8


def test_ties_in_the_index_go_to_the_earlier_key():
    mla, x = layer(*SHAPES[0], **SPARSE), x_of(B=1)
    with torch.no_grad():
        mla.W_iw.weight.zero_()  # every index score 0: all keys tie
    selected = recorded(mla, x, mha.causal_mask(9))["selected"][0]  # (n, n)
    assert torch.equal(selected, mha.causal_mask(9) & (torch.arange(9) < SPARSE["top_k"]))


def test_rows_sum_to_one_and_causal_outputs_ignore_the_future():
    mla, x = layer(*SHAPES[0]), x_of(n=10)
    out, weights = mla(x, mask=mha.causal_mask(10))
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, H, 10, dtype=torch.float64), rtol=0, atol=1e-12)
    assert (weights.triu(1) == 0).all()
    changed = x.clone()
    changed[:, 6:] = torch.randn(2, 4, D_MODEL, dtype=torch.float64)
    out_changed, _ = mla(changed, mask=mha.causal_mask(10))
    torch.testing.assert_close(out_changed[:, :6], out[:, :6], rtol=0, atol=0)
    assert not torch.allclose(out_changed[:, 6:], out[:, 6:])


def test_scores_depend_on_offsets_only():
    """Rotary keys: the same tokens at positions 3..11 (after a cache of 3 tokens they do not see) give what
    they give at positions 0..8, so the cache's offset is applied and only offsets between tokens count."""
    mla, x = layer(*SHAPES[0]), x_of()
    fresh, _ = mla(x, mask=mha.causal_mask(9))
    _, _, cache = mla.decode(x_of(n=3, seed=3))
    unseen = mha.causal_mask(9, 12) & (torch.arange(12) >= 3)  # (9, 12): the 3 cached tokens masked out
    shifted = recorded(mla, x, unseen, cache=cache)
    torch.testing.assert_close(shifted["out"], fresh, rtol=0, atol=1e-12)
    assert not torch.allclose(shifted["cache"].k_rope[:, 3:], mla.decode(x)[2].k_rope)  # keys did move


def test_dropout_is_active_in_training_only():
    mla, x = layer(*SHAPES[0]), x_of()
    mla.dropout = 0.5
    torch.testing.assert_close(mla(x)[0], mla(x)[0], rtol=0, atol=0)
    mla.train()
    assert not torch.allclose(mla(x)[0], mla(x)[0])


def test_repr_names_the_configuration():
    text = repr(layer(*SHAPES[0]))
    assert all(word in text for word in ("q_rank=16", "kv_rank=12", "d_nope=8", "d_rope=6", "d_v=5"))


GOOD = {"q_rank": 16, "kv_rank": 12, "d_nope": 8, "d_rope": 6}


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"kv_rank": 0}, ValueError, "kv_rank"),
        ({"kv_rank": 4.0}, TypeError, "kv_rank"),
        ({"q_rank": -1}, ValueError, "q_rank"),
        ({"q_rank": 2.5}, TypeError, "q_rank"),
        ({"d_nope": 0}, ValueError, "d_nope"),
        ({"d_rope": 5}, ValueError, "d_rope must be even"),
        ({"d_rope": 0}, ValueError, "d_rope"),
        ({"d_v": 0}, ValueError, "d_v"),
        ({"rope_theta": 0.0}, ValueError, "rope_theta"),
        ({"dropout": 1.0}, ValueError, "dropout"),
        ({**SPARSE, "top_k": 0}, ValueError, "top_k must be a positive int"),
        ({**SPARSE, "index_heads": 0}, ValueError, "index_heads must be a positive int"),
        ({"top_k": 4}, ValueError, "index_heads, index_dim and top_k go together"),
        ({**SPARSE, "q_rank": None}, ValueError, "with q_rank"),
        ({**SPARSE, "index_dim": 4}, ValueError, "index_dim=4 must be at least d_rope=6"),
    ],
)
def test_bad_ranks_and_widths_raise_clear_errors(changes, error, words):
    with pytest.raises(error, match=words):
        mha.MultiHeadLatentAttention(D_MODEL, H, **{**GOOD, **changes})


def test_bad_inputs_and_caches_raise_clear_errors():
    mla, x = layer(*SHAPES[0]), x_of()
    with pytest.raises(ValueError, match="d_model=32"):
        mla(torch.randn(2, 9, 31, dtype=torch.float64))
    with pytest.raises(TypeError, match="dtype"):
        mla(x.float())
    with pytest.raises(ValueError, match="mask"):
        mla(x, mask=mha.causal_mask(8))
    with pytest.raises(TypeError, match="LatentCache"):
        mla.decode(x, cache=(x, x))
    _, _, cache = mla.decode(x)
    with pytest.raises(ValueError, match=r"cache\.c_kv"):
        mla.decode(x[:1], cache)  # a cache for batch 2, tokens for batch 1
    with pytest.raises(ValueError, match=r"cache\.k_rope"):
        mla.decode(x, mha.LatentCache(cache.c_kv, cache.k_rope[..., :4]))
    with pytest.raises(ValueError, match=r"cache\.k_index must be None: this layer has no indexer"):
        mla.decode(x, mha.LatentCache(cache.c_kv, cache.k_rope, cache.c_kv))
    sparse = layer(*SHAPES[0], **SPARSE)
    with pytest.raises(ValueError, match=r"cache\.k_index must have shape \(B, n_past, d_i\)"):
        sparse.decode(x, cache)  # a cache without the indexer's keys
