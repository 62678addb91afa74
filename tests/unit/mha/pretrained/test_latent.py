"""mha.pretrained.from_transformers on DeepSeek-V3: latent attention equal to transformers', layer by layer.

A tiny random DeepSeek-V3 (2 layers, the second a mixture of experts; ranks and widths small and unequal;
every weight random, the two latent norms included), in float64. Each attention layer's input and output are
recorded by a forward hook during the model's own forward pass; our layer, converted from it, must give that
output within 1e-5 (transformers computes its rotary tables and its RMSNorms in float32, so the gap is about
1e-7), in the plain form, the absorbed form and token by token from the cache.
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
