"""mha.pretrained.from_transformers on DeepSeek-V3: latent attention equal to transformers', layer by layer.

A tiny random DeepSeek-V3 (2 layers, the second a mixture of experts; ranks and widths small and unequal;
every weight random, the two latent norms included), in float64. Each attention layer's input and output are
recorded by a forward hook during the model's own forward pass; our layer, converted from it, must give that
output within 1e-5 (transformers computes its rotary tables and its RMSNorms in float32, so the gap is about
1e-7), in the plain form, the absorbed form and token by token from the cache.

DeepSeek Sparse Attention the same way, in its own section: DeepSeek-V3.2's and GLM-5's layers (latent
attention plus a lightning indexer that keeps each query's top-k keys), as tiny random models (2 layers, the
second a mixture of experts; every weight random, the indexer's included), in float64, with top-k 3 of
n = 10 keys, so the selection matters from the fourth query on.

**Unambiguous at the top-k boundary.** transformers computes the index scores in float32, and each score is
a weighted sum of ReLUs: with few indexer heads, a key whose every head's dot product is negative scores
exactly 0, two such keys tie, and which of them ``topk`` keeps is arbitrary. The models here have 16 indexer
heads, so no key scores exactly 0 (all 16 would have to be negative), and the tests assert, before comparing,
that in every row where the selection matters the third-best score exceeds the fourth by more than
``MARGIN`` = 1e-5, a hundred times the float32 round-off of scores of about 0.3 (the smallest gap here is
about 4e-4). A change of weights or seed that made the selection ambiguous fails that assertion, not the
comparison.
"""

import pytest
import torch

import mha
from mha.pretrained import from_transformers
from mha.pretrained.latent import from_deepseek_v3
from tests.unit.transformers_calls import DEEPSEEK_SIZES as SIZES
from tests.unit.transformers_calls import DEEPSEEK_VARIANTS as VARIANTS
from tests.unit.transformers_calls import random_ids, recorded_calls
from tests.unit.transformers_calls import tiny_deepseek as tiny_model

transformers = pytest.importorskip("transformers")

TOL = 1e-5  # the contract's bound
N = 10


def recorded_layers(model, n=N):
    """Run the model on random tokens; return each attention layer's (module, input, output, weights)."""
    modules = [layer.self_attn for layer in model.model.layers]
    return [(m, x, out[0], out[1]) for m, x, out in recorded_calls(model, modules, random_ids(32, n))]


@pytest.fixture(scope="module", params=list(VARIANTS))
def recorded(request):
    config, model = tiny_model(request.param)
    return config, recorded_layers(model)


def test_each_layer_equals_transformers_inside_the_model(recorded):
    config, records = recorded
    assert len(records) == 2
    for module, x, theirs, their_weights in records:
        ours = from_transformers(module, config)
        assert isinstance(ours, mha.MultiHeadLatentAttention) and not ours.training
        out, weights = ours(x, mask=mha.causal_mask(N))
        torch.testing.assert_close(out, theirs, rtol=0, atol=TOL)
        torch.testing.assert_close(weights, their_weights, rtol=0, atol=TOL)
        absorbed, _ = ours(x, mask=mha.causal_mask(N), absorb=True)
        torch.testing.assert_close(absorbed, out, rtol=0, atol=1e-12)


def test_decoding_equals_transformers_too(recorded):
    config, records = recorded
    module, x, theirs, _ = records[-1]
    ours = from_transformers(module, config)
    out, _, cache = ours.decode(x[:, :4])
    outs = [out]
    for t in range(4, N):
        out, _, cache = ours.decode(x[:, t : t + 1], cache)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), theirs, rtol=0, atol=TOL)
    assert cache.nbytes == (SIZES["kv_lora_rank"] + SIZES["qk_rope_head_dim"]) * 2 * N * 8


def test_the_copy_holds_no_transformers_module_and_keeps_the_names():
    config, model = tiny_model("v3")
    module = model.model.layers[0].self_attn
    ours = from_transformers(module, config)
    assert not any(type(m).__module__.startswith("transformers") for m in ours.modules())
    torch.testing.assert_close(ours.W_ukv.weight, module.kv_b_proj.weight, rtol=0, atol=0)
    with torch.no_grad():
        module.kv_b_proj.weight.zero_()
    assert ours.W_ukv.weight.abs().sum() > 0  # copied, not shared
    # The rotary rows were reordered (evens, then odds), the latent rows not.
    d_c = SIZES["kv_lora_rank"]
    rows = module.kv_a_proj_with_mqa.weight
    torch.testing.assert_close(ours.W_dkv.weight[:d_c], rows[:d_c], rtol=0, atol=0)
    torch.testing.assert_close(ours.W_dkv.weight[d_c:], torch.cat([rows[d_c::2], rows[d_c + 1 :: 2]]))


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0}}, "rope_type='yarn'"),
        ({"num_key_value_heads": 2}, "num_key_value_heads=2"),
    ],
)
def test_unsupported_settings_are_named(changes, words):
    config = transformers.DeepseekV3Config(**{**SIZES, "num_hidden_layers": 1})
    module = transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3Attention(config, 0)
    for name, value in changes.items():
        setattr(config, name, value)
    with pytest.raises(ValueError, match=words):
        from_deepseek_v3(module, config)


# -- DeepSeek Sparse Attention: DeepSeek-V3.2 and GLM-5 ----------------------------------------------------

TOP_K = 3  # of n = N = 10 keys
MARGIN = 1e-5  # the smallest gap allowed between the k-th and (k+1)-th index score of a row
# d_model 32, h 4; q rank 24, kv rank 12, d_nope 10, d_rope 6, d_v 8 (DeepSeek-V3's tiny sizes); indexer 16
# heads of 8
DSA_SIZES = {**SIZES, "index_n_heads": 16, "index_head_dim": 8, "index_topk": TOP_K}
DSA_FAMILIES = {  # DeepSeek-V3.2's indexer turns half-split pairs, GLM-5's interleaved ones
    "deepseek_v32": ("DeepseekV32Config", "DeepseekV32ForCausalLM"),
    "glm5": ("GlmMoeDsaConfig", "GlmMoeDsaForCausalLM"),
}


def tiny_dsa(family, **changes):
    config_name, model_name = DSA_FAMILIES[family]
    config = getattr(transformers, config_name)(**{**DSA_SIZES, **changes})
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():  # every weight random: norms and the indexer too
            p.normal_(0.0, 0.3)
    return config, model


def recorded_dsa_layers(model):
    """Run the model on random tokens; return each attention layer's (module, input, output)."""
    modules = [layer.self_attn for layer in model.model.layers]
    return [(m, x, out[0]) for m, x, out in recorded_calls(model, modules, random_ids(32, N))]


@pytest.fixture(scope="module", params=list(DSA_FAMILIES))
def recorded_dsa(request):
    config, model = tiny_dsa(request.param)
    return config, recorded_dsa_layers(model)


def test_the_dsa_selection_is_unambiguous(recorded_dsa):
    config, records = recorded_dsa
    for module, x, _ in records:
        steps = {}  # the layer's intermediates, from its forward
        from_transformers(module, config)(x, mha.causal_mask(N), record=steps)
        ranked = steps["index_scores"].sort(dim=-1, descending=True).values  # (B, n, n), -inf last
        gaps = ranked[:, TOP_K:, TOP_K - 1] - ranked[:, TOP_K:, TOP_K]  # rows with more than top-k keys
        assert gaps.min() > MARGIN
        selected = steps["selected"]  # (B, n, n): top-k keys per row, all the earlier ones in the first rows
        assert (selected.sum(-1) == torch.arange(1, N + 1).clamp(max=TOP_K)).all()
        assert not (selected & ~mha.causal_mask(N)).any()


def test_each_dsa_layer_equals_transformers_inside_the_model(recorded_dsa):
    config, records = recorded_dsa
    for module, x, theirs in records:
        ours = from_transformers(module, config)
        assert isinstance(ours, mha.MultiHeadLatentAttention) and not ours.training
        assert not any(type(m).__module__.startswith("transformers") for m in ours.modules())
        with torch.no_grad():
            out, weights = ours(x, mask=mha.causal_mask(N))  # the contract
            absorbed, _ = ours(x, mask=mha.causal_mask(N), absorb=True)
            fused, _ = ours(x, mask=mha.causal_mask(N), need_weights=False)
        torch.testing.assert_close(out, theirs, rtol=0, atol=TOL)
        torch.testing.assert_close(absorbed, out, rtol=0, atol=1e-12)
        torch.testing.assert_close(fused, out, rtol=0, atol=1e-12)
        assert ((weights > 0).sum(-1) == torch.arange(1, N + 1).clamp(max=TOP_K)).all()  # top-k < n matters
        ours.top_k = N
        with torch.no_grad():
            assert (ours(x, mask=mha.causal_mask(N))[0] - theirs).abs().max() > 1e-2


@pytest.mark.parametrize("prompt", [2, 6])
def test_dsa_decoding_equals_the_full_pass_and_transformers(recorded_dsa, prompt):
    config, records = recorded_dsa
    for module, x, theirs in records:
        ours = from_transformers(module, config)
        with torch.no_grad():
            full, _ = ours(x, mask=mha.causal_mask(N))
            first, _, cache = ours.decode(x[:, :prompt])
            rest, _, cache = ours.decode(x[:, prompt:], cache, absorb=False, need_weights=True)
        torch.testing.assert_close(torch.cat([first, rest], dim=1), full, rtol=0, atol=1e-12)
        torch.testing.assert_close(full, theirs, rtol=0, atol=TOL)
        assert cache.k_index.shape == (2, N, DSA_SIZES["index_head_dim"])  # the indexer's keys, cached
        widths = DSA_SIZES["kv_lora_rank"] + DSA_SIZES["qk_rope_head_dim"] + DSA_SIZES["index_head_dim"]
        assert cache.nbytes == 2 * N * widths * 8  # B = 2, float64


def test_the_indexer_rows_follow_each_familys_rotary():
    """DeepSeek-V3.2's indexer turns its first d_r coordinates half-split: its rows are copied as they are;
    GLM-5's turns them interleaved: the even rows of that part come first, then the odd ones."""
    for family, interleaved in (("deepseek_v32", False), ("glm5", True)):
        config, model = tiny_dsa(family, num_hidden_layers=1)
        indexer = model.model.layers[0].self_attn.indexer
        ours = from_transformers(model.model.layers[0].self_attn, config)
        order = [0, 2, 4, 1, 3, 5, 6, 7] if interleaved else list(range(8))  # the last 2 do not turn
        torch.testing.assert_close(ours.W_ik.weight, indexer.wk.weight[order], rtol=0, atol=0)
        torch.testing.assert_close(ours.ik_norm.bias, indexer.k_norm.bias[order], rtol=0, atol=0)
        rows = indexer.wq_b.weight.view(16, 8, 24)[:, order].reshape(128, 24)
        torch.testing.assert_close(ours.W_iq.weight, rows, rtol=0, atol=0)


def test_a_glm5_layer_that_reuses_another_layers_selection_is_refused():
    config, model = tiny_dsa("glm5", indexer_types=["full", "shared"])
    from_transformers(model.model.layers[0].self_attn, config)
    with pytest.raises(ValueError, match=r"indexer_types\[1\]='shared'"):
        from_transformers(model.model.layers[1].self_attn, config)
