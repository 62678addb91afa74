"""mha.pretrained.from_transformers: today's decoders' attention layers equal transformers', layer by layer.

Tiny random models of each family (4 layers, head_dim apart from d_model / h, windows of 3 or 4 keys that
matter at n = 10, every weight random: norms, biases and sinks included), in float64. Each attention layer's
input and output are recorded by a forward hook during the model's own forward pass; our layer, converted
from it, must give that output within 1e-5 (transformers computes its rotary tables, softmaxes and norms in
float32, so the gap is about 1e-6).
"""

import pytest
import torch

import mha
from mha.pretrained import CONVERTERS, from_transformers
from tests.unit.transformers_calls import FAMILIES, SIZES, N, random_ids, recorded_calls, tiny_model

transformers = pytest.importorskip("transformers")

TOL = 1e-5  # the contract's bound


def recorded_layers(model, n=N, batch=2):
    """Run the model once; return, per decoder layer, (attention module, its input, its output)."""
    modules = [layer.self_attn for layer in model.model.layers]
    ids = random_ids(SIZES["vocab_size"], n, batch)
    return [(m, x, out[0].detach().clone()) for m, x, out in recorded_calls(model, modules, ids)]


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request):
    config, model = tiny_model(request.param)
    return request.param, config, recorded_layers(model)


def test_every_layer_equals_transformers_inside_the_models_forward(family):
    name, config, layers = family
    windows = []
    for theirs, x, expected in layers:
        ours = from_transformers(theirs, config)
        assert isinstance(ours, mha.MultiHeadAttention) and not ours.training
        assert ours.d_k == 16 != SIZES["hidden_size"] // SIZES["num_attention_heads"]
        with torch.no_grad():
            out, weights = ours(x, mask=mha.causal_mask(N))  # the contract
            fused, _ = ours(x, mask=mha.causal_mask(N), need_weights=False)
        torch.testing.assert_close(out, expected, rtol=0, atol=TOL)
        torch.testing.assert_close(fused, expected, rtol=0, atol=TOL)
        window = getattr(ours.band, "w", None)  # a Window part, or none
        windows.append(window)
        if window is not None:  # the window matters at this length: without it the output differs
            assert not weights[..., -1, : N - window].any()
            ours.band = mha.bands.NoBand()
            with torch.no_grad():
                assert (ours(x, mask=mha.causal_mask(N))[0] - expected).abs().max() > 1e-2
    expected_windows = {"llama": [None] * 4, "qwen3": [4, None, 4, None]}
    assert windows == expected_windows.get(name, [3, None, 3, None])


def test_the_copy_holds_its_own_weights_and_options(family):
    name, config, layers = family
    theirs = layers[0][0]
    ours = from_transformers(theirs, config)
    saved = theirs.q_proj.weight.detach().clone()
    with torch.no_grad():
        theirs.q_proj.weight.add_(1.0)  # changing theirs leaves ours alone
        assert torch.equal(ours.W_q.weight, saved)
        theirs.q_proj.weight.copy_(saved)
    assert all(p.data_ptr() != q.data_ptr() for p in ours.parameters() for q in theirs.parameters())
    assert isinstance(ours.q_norm, torch.nn.RMSNorm) == (name in {"qwen3", "gemma3"})
    assert isinstance(ours.softmax, mha.scores.Sinks) == (name == "gpt_oss")
    assert ours.W_o.bias is not None
    if name == "gemma3":  # Gemma's x_hat (1 + w) as an ordinary RMSNorm with weight 1 + w
        torch.testing.assert_close(ours.q_norm.weight, theirs.q_norm.weight + 1.0, rtol=0, atol=0)
        assert ours.scale == pytest.approx(24**-0.5)
    else:
        assert ours.scale == 16**-0.5  # 1 / sqrt(d_k), the 2017 layer's


def test_decoding_a_converted_layer_equals_its_full_pass(family):
    _, config, layers = family
    theirs, x, expected = layers[0]  # a sliding-window layer, except for Llama
    ours = from_transformers(theirs, config)
    with torch.no_grad():
        outs, cache = [], None
        for t in range(N):
            out, _, cache = ours.decode(x[:, t : t + 1], cache)
            outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), expected, rtol=0, atol=TOL)
    assert cache.k.size(-2) == getattr(ours.band, "w", N)


def test_unknown_classes_and_unsupported_settings_raise_naming_them():
    with pytest.raises(TypeError, match="LlamaAttention, Qwen3Attention, Gemma3Attention, GptOssAttention"):
        from_transformers(torch.nn.Linear(2, 2), None)
    assert {"LlamaAttention", "Qwen3Attention", "Gemma3Attention", "GptOssAttention"} <= set(CONVERTERS)
    config = transformers.LlamaConfig(**{**SIZES, "num_hidden_layers": 1})
    config.rope_parameters = {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0}
    module = transformers.models.llama.modeling_llama.LlamaAttention(config, layer_idx=0)
    with pytest.raises(ValueError, match="rope_type='llama3'"):
        from_transformers(module, config)
    config.rope_parameters = {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 32.0}
    with pytest.raises(ValueError, match="rope_type='yarn'"):
        from_transformers(module, config)
    gemma = transformers.Gemma3TextConfig(**{**SIZES, "num_hidden_layers": 1}, attn_logit_softcapping=50.0)
    module = transformers.models.gemma3.modeling_gemma3.Gemma3Attention(gemma, layer_idx=0)
    with pytest.raises(ValueError, match=r"attn_logit_softcapping=50\.0"):
        from_transformers(module, gemma)
