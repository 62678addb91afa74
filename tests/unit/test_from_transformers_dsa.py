"""mha.pretrained.from_transformers on DeepSeek Sparse Attention: DeepSeek-V3.2's and GLM-5's layers (latent
attention plus a lightning indexer that keeps each query's top-k keys) equal transformers', layer by layer.

Tiny random models (2 layers, the second a mixture of experts; every weight random, the indexer's included),
in float64, with top-k 3 of n = 10 keys, so the selection matters from the fourth query on.

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
from tests.unit.transformers_calls import DEEPSEEK_SIZES, random_ids, recorded_calls

transformers = pytest.importorskip("transformers")

TOL = 1e-5  # the contract's bound
N, TOP_K = 10, 3
MARGIN = 1e-5  # the smallest gap allowed between the k-th and (k+1)-th index score of a row
# d_model 32, h 4; q rank 24, kv rank 12, d_nope 10, d_rope 6, d_v 8 (DeepSeek-V3's tiny sizes); indexer 16
# heads of 8
SIZES = {**DEEPSEEK_SIZES, "index_n_heads": 16, "index_head_dim": 8, "index_topk": TOP_K}
FAMILIES = {  # DeepSeek-V3.2's indexer turns half-split pairs, GLM-5's interleaved ones
    "deepseek_v32": ("DeepseekV32Config", "DeepseekV32ForCausalLM"),
    "glm5": ("GlmMoeDsaConfig", "GlmMoeDsaForCausalLM"),
}


def tiny_model(family, **changes):
    config_name, model_name = FAMILIES[family]
    config = getattr(transformers, config_name)(**{**SIZES, **changes})
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():  # every weight random: norms and the indexer too
            p.normal_(0.0, 0.3)
    return config, model


def recorded_layers(model):
    """Run the model on random tokens; return each attention layer's (module, input, output)."""
    modules = [layer.self_attn for layer in model.model.layers]
    return [(m, x, out[0]) for m, x, out in recorded_calls(model, modules, random_ids(32, N))]


@pytest.fixture(scope="module", params=list(FAMILIES))
def recorded(request):
    config, model = tiny_model(request.param)
    return config, recorded_layers(model)


def test_the_selection_is_unambiguous(recorded):
    config, records = recorded
    for module, x, _ in records:
        steps = {}  # the layer's intermediates, from its forward
        from_transformers(module, config)(x, mha.causal_mask(N), record=steps)
        ranked = steps["index_scores"].sort(dim=-1, descending=True).values  # (B, n, n), -inf last
        gaps = ranked[:, TOP_K:, TOP_K - 1] - ranked[:, TOP_K:, TOP_K]  # rows with more than top-k keys
        assert gaps.min() > MARGIN
        selected = steps["selected"]  # (B, n, n): top-k keys per row, all the earlier ones in the first rows
        assert (selected.sum(-1) == torch.arange(1, N + 1).clamp(max=TOP_K)).all()
        assert not (selected & ~mha.causal_mask(N)).any()


def test_each_layer_equals_transformers_inside_the_model(recorded):
    config, records = recorded
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
def test_decoding_equals_the_full_pass(recorded, prompt):
    config, records = recorded
    for module, x, theirs in records:
        ours = from_transformers(module, config)
        with torch.no_grad():
            full, _ = ours(x, mask=mha.causal_mask(N))
            first, _, cache = ours.decode(x[:, :prompt])
            rest, _, cache = ours.decode(x[:, prompt:], cache, absorb=False, need_weights=True)
        torch.testing.assert_close(torch.cat([first, rest], dim=1), full, rtol=0, atol=1e-12)
        torch.testing.assert_close(full, theirs, rtol=0, atol=TOL)
        assert cache.k_index.shape == (2, N, SIZES["index_head_dim"])  # the indexer's keys, cached
        widths = SIZES["kv_lora_rank"] + SIZES["qk_rope_head_dim"] + SIZES["index_head_dim"]
        assert cache.nbytes == 2 * N * widths * 8  # B = 2, float64


def test_the_indexer_rows_follow_each_familys_rotary():
    """DeepSeek-V3.2's indexer turns its first d_r coordinates half-split: its rows are copied as they are;
    GLM-5's turns them interleaved: the even rows of that part come first, then the odd ones."""
    for family, interleaved in (("deepseek_v32", False), ("glm5", True)):
        config, model = tiny_model(family, num_hidden_layers=1)
        indexer = model.model.layers[0].self_attn.indexer
        ours = from_transformers(model.model.layers[0].self_attn, config)
        order = [0, 2, 4, 1, 3, 5, 6, 7] if interleaved else list(range(8))  # the last 2 do not turn
        torch.testing.assert_close(ours.W_ik.weight, indexer.wk.weight[order], rtol=0, atol=0)
        torch.testing.assert_close(ours.ik_norm.bias, indexer.k_norm.bias[order], rtol=0, atol=0)
        rows = indexer.wq_b.weight.view(16, 8, 24)[:, order].reshape(128, 24)
        torch.testing.assert_close(ours.W_iq.weight, rows, rtol=0, atol=0)


def test_a_glm5_layer_that_reuses_another_layers_selection_is_refused():
    config, model = tiny_model("glm5", indexer_types=["full", "shared"])
    from_transformers(model.model.layers[0].self_attn, config)
    with pytest.raises(ValueError, match=r"indexer_types\[1\]='shared'"):
        from_transformers(model.model.layers[1].self_attn, config)
