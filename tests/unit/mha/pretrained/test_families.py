"""mha.pretrained.from_transformers: today's decoders' attention layers equal transformers', layer by layer.

Tiny random models of each family (4 layers, head_dim apart from d_model / h, windows of 3 or 4 keys that
matter at n = 10, every weight random: norms, biases and sinks included), in float64. Each attention layer's
input and output are recorded by a forward hook during the model's own forward pass; our layer, converted
from it, must give that output within 1e-5 (transformers computes its rotary tables, softmaxes and norms in
float32, so the gap is about 1e-6).

The attention of 2025-2026 (Qwen3-Next, Qwen3.5, Gemma 4, Llama 4), the same way, with the rotary
parameters set explicitly and every window, chunk and temperature small enough to matter at n = 10: Gemma 4's
sliding window of 3 keys, Llama 4's chunks of 4 positions and ``floor_scale`` 2 (at the real 8,192 the
temperature is exactly 1 for the first 8,191 positions). Qwen3-Next and Qwen3.5 alternate Gated DeltaNet
layers (not attention: ``linear_attn``, left out here) with gated attention layers; Gemma 4 alternates sliding
layers with full ones that have their own head width (32, not 16), one key/value head and keys as values;
Llama 4 alternates chunked rotary layers with NoPE layers.
"""

import pytest
import torch

import mha
from mha.pretrained import CONVERTERS, from_transformers
from tests.unit.transformers_calls import FAMILIES, SIZES, N, random_ids, recorded_calls, tiny_model

transformers = pytest.importorskip("transformers")

TOL = 1e-5  # the contract's bound


def recorded_layers(model, n=N, batch=2):
    """Run the model once; return, per attention layer, (module, its input, its output); a layer without
    attention (Qwen3-Next's Gated DeltaNet, ``linear_attn``) is left out."""
    modules = [layer.self_attn for layer in model.model.layers if hasattr(layer, "self_attn")]
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


# -- the attention of 2025-2026: Qwen3-Next, Qwen3.5, Gemma 4, Llama 4 -------------------------------------

# d_model 48, h 4, h_kv 2, d_k 16 (not 48 / 4 = 12): the tiny sizes of the other families, their own biases
SIZES_2026 = {key: value for key, value in SIZES.items() if key != "attention_bias"}
HYBRID = ["linear_attention", "full_attention", "linear_attention", "full_attention"]
LINEAR = {  # Gated DeltaNet layers, in miniature
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
}
FAMILIES_2026 = {  # (config class, model class, options)
    "qwen3_next": (
        "Qwen3NextConfig",
        "Qwen3NextForCausalLM",
        {
            **LINEAR,
            "layer_types": HYBRID,
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0, "partial_rotary_factor": 0.25},
            "attention_bias": True,
            "num_experts": 2,
            "num_experts_per_tok": 1,
            "moe_intermediate_size": 16,
            "shared_expert_intermediate_size": 16,
            "experts_implementation": "eager",  # the grouped kernel takes no float64
        },
    ),
    "qwen3_5": (
        "Qwen3_5TextConfig",
        "Qwen3_5ForCausalLM",
        {
            **LINEAR,
            "layer_types": HYBRID,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1000.0,
                "partial_rotary_factor": 0.5,
                "mrope_section": [2, 1, 1],  # sums to the 4 turning pairs of an 8-wide rotary part
                "mrope_interleaved": True,
            },
        },
    ),
    "gemma4": (
        "Gemma4TextConfig",
        "Gemma4ForCausalLM",
        {
            "layer_types": ["sliding_attention", "full_attention"] * 2,
            "sliding_window": 3,
            "global_head_dim": 32,
            "num_global_key_value_heads": 1,
            "attention_k_eq_v": True,
            "rope_parameters": {
                "sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
                "full_attention": {
                    "rope_type": "proportional",
                    "partial_rotary_factor": 0.25,
                    "rope_theta": 1e4,
                },
            },
            "hidden_size_per_layer_input": 8,
            "vocab_size_per_layer_input": 32,
        },
    ),
    "llama4": (
        "Llama4TextConfig",
        "Llama4ForCausalLM",
        {
            "no_rope_layers": [1, 0, 1, 0],  # 1: the layer uses rotary (and is chunked); 0: NoPE
            "attention_chunk_size": 4,
            "floor_scale": 2,
            "attn_scale": 0.5,
            "use_qk_norm": True,
            "rope_parameters": {"rope_type": "default", "rope_theta": 500.0},
            "intermediate_size_mlp": 32,
            "num_local_experts": 2,
            "num_experts_per_tok": 1,
            "experts_implementation": "eager",
        },
    ),
}


def tiny_2026(family, **changes):
    config_name, model_name, options = FAMILIES_2026[family]
    config = getattr(transformers, config_name)(**{**SIZES_2026, **options, **changes})
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():  # every weight random: norms, biases and gates too
            p.normal_(0.0, 0.3)
    return config, model


@pytest.fixture(scope="module", params=list(FAMILIES_2026))
def family_2026(request):
    config, model = tiny_2026(request.param)
    return request.param, config, recorded_layers(model)


def test_every_2026_layer_equals_transformers_inside_the_models_forward(family_2026):
    name, config, layers = family_2026
    assert len(layers) == (2 if name.startswith("qwen") else 4)
    for theirs, x, expected in layers:
        ours = from_transformers(theirs, config)
        assert isinstance(ours, mha.MultiHeadAttention) and not ours.training
        assert not any(type(m).__module__.startswith("transformers") for m in ours.modules())
        with torch.no_grad():
            out, _ = ours(x, mask=mha.causal_mask(N))  # the contract
            fused, _ = ours(x, mask=mha.causal_mask(N), need_weights=False)
        torch.testing.assert_close(out, expected, rtol=0, atol=TOL)
        torch.testing.assert_close(fused, expected, rtol=0, atol=TOL)


def described(ours):
    """A converted layer's parts in numbers: window or chunk, temperature, rotary base, fraction, style."""
    positions = ours.positions
    rotary = isinstance(positions, mha.positional.Rotary)
    tuned = isinstance(positions, mha.positional.Temperature)
    return {
        "window": getattr(ours.band, "w", None),
        "chunk": getattr(ours.band, "c", None),
        "temperature": (positions.floor_scale, positions.attn_scale) if tuned else None,
        "rope_theta": positions.theta if rotary else None,
        "rope_fraction": positions.fraction if rotary else None,
        "rope_style": positions.style if rotary else None,
        "keys_as_values": isinstance(ours, mha.multihead.KeysAsValues),
    }


def test_each_family_has_the_parts_it_promises(family_2026):
    """What reading transformers' code shows, as parts of our layers: if one were dropped, the layer would
    still run; this test says which layer has which part, and that each one changes the output."""
    name, config, layers = family_2026
    converted = [from_transformers(theirs, config) for theirs, _, _ in layers]
    options = [described(ours) for ours in converted]
    if name.startswith("qwen"):
        fraction = 0.25 if name == "qwen3_next" else 0.5
        assert all(isinstance(ours.gate, mha.gates.OutputGate) for ours in converted)
        assert all(ours.q_norm.weight is not None for ours in converted)
        assert {o["rope_fraction"] for o in options} == {fraction}
        assert {o["rope_style"] for o in options} == {"half-split"}
    elif name == "gemma4":
        (sliding, full), (s, f) = converted[:2], options[:2]
        assert (s["window"], sliding.d_k, sliding.n_kv_heads, s["keys_as_values"]) == (3, 16, 2, False)
        assert (f["window"], full.d_k, full.n_kv_heads, f["keys_as_values"]) == (None, 32, 1, True)
        assert (f["rope_style"], f["rope_fraction"], s["rope_style"]) == ("proportional", 0.25, "half-split")
        assert all(ours.scale == 1.0 and ours.v_norm.weight is None for ours in converted)
    else:
        (rope, nope), (r, o) = converted[:2], options[:2]
        assert (r["chunk"], r["rope_style"], r["temperature"], rope.q_norm.weight) == (
            4,
            "interleaved",
            None,
            None,
        )
        assert (o["chunk"], o["rope_theta"], o["temperature"]) == (None, None, (2.0, 0.5))
        assert isinstance(nope.q_norm, torch.nn.Identity)
    plain = {"band": mha.bands.NoBand, "positions": mha.positional.NoPositions, "gate": mha.gates.NoGate}
    for ours, (_, x, expected) in zip(converted, layers, strict=True):  # each part matters at n = 10
        for slot, default in plain.items():
            saved = getattr(ours, slot)
            if type(saved) is default or isinstance(saved, mha.positional.Rotary):
                continue
            setattr(ours, slot, default())
            with torch.no_grad():
                assert (ours(x, mask=mha.causal_mask(N))[0] - expected).abs().max() > 1e-2, slot
            setattr(ours, slot, saved)


@pytest.mark.parametrize("prompt", [3, 6])
def test_decoding_equals_the_full_pass_and_transformers(family_2026, prompt):
    """``decode(x[:, :k])`` then ``decode(x[:, k:], cache)`` (the contract's calls), and token by token."""
    _, config, layers = family_2026
    for theirs, x, expected in layers:
        ours = from_transformers(theirs, config)
        with torch.no_grad():
            full, _ = ours(x, mask=mha.causal_mask(N))
            first, _, cache = ours.decode(x[:, :prompt])
            rest, _, cache = ours.decode(x[:, prompt:], cache)
            outs, step_cache = [first], ours.decode(x[:, :prompt])[2]
            for t in range(prompt, N):
                out, _, step_cache = ours.decode(x[:, t : t + 1], step_cache, need_weights=t % 2 == 0)
                outs.append(out)
        torch.testing.assert_close(torch.cat([first, rest], dim=1), full, rtol=0, atol=1e-12)
        torch.testing.assert_close(torch.cat(outs, dim=1), full, rtol=0, atol=1e-12)
        torch.testing.assert_close(full, expected, rtol=0, atol=TOL)
        window, chunk = described(ours)["window"], described(ours)["chunk"]
        held = window or (N % chunk if chunk else N)
        assert cache.k.size(-2) == held and cache.start == N - held
        per_token = 2 * ours.n_kv_heads * ours.d_k * 8  # float64; keys as values too: keys and values apart
        assert cache.nbytes == 2 * held * per_token  # B = 2


def test_a_2026_copy_holds_its_own_weights(family_2026):
    _, config, layers = family_2026
    theirs = layers[0][0]
    ours = from_transformers(theirs, config)
    saved = ours.W_q.weight.detach().clone()
    with torch.no_grad():
        theirs.q_proj.weight.add_(1.0)  # changing theirs leaves ours alone
        assert torch.equal(ours.W_q.weight, saved)
        theirs.q_proj.weight.sub_(1.0)
    assert all(p.data_ptr() != q.data_ptr() for p in ours.parameters() for q in theirs.parameters())


def test_the_gate_is_cut_from_q_proj_head_by_head():
    """Qwen3-Next's q_proj is laid out per head as [query_h | gate_h]."""
    config, model = tiny_2026("qwen3_next", num_hidden_layers=2, layer_types=HYBRID[:2])
    theirs = model.model.layers[1].self_attn
    ours = from_transformers(theirs, config)
    rows = theirs.q_proj.weight.view(4, 2, 16, 48)  # (h, [query, gate], d_k, d_model)
    torch.testing.assert_close(ours.W_q.weight.view(4, 16, 48), rows[:, 0], rtol=0, atol=0)
    W_g = ours.gate.W_g
    torch.testing.assert_close(W_g.weight.view(4, 16, 48), rows[:, 1], rtol=0, atol=0)
    torch.testing.assert_close(W_g.bias.view(4, 16), theirs.q_proj.bias.view(4, 2, 16)[:, 1], rtol=0, atol=0)


def test_unsupported_2026_settings_raise_naming_them():
    config, model = tiny_2026(
        "gemma4", num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"]
    )
    module = model.model.layers[0].self_attn
    config.num_kv_shared_layers = 1
    with pytest.raises(ValueError, match="num_kv_shared_layers=1"):
        from_transformers(module, config)
    config.num_kv_shared_layers = 0
    config.rope_parameters["sliding_attention"]["factor"] = 8.0
    with pytest.raises(ValueError, match=r"factor=8\.0"):
        from_transformers(module, config)
    del config.rope_parameters["sliding_attention"]["factor"]
    config.use_bidirectional_attention = "all"
    with pytest.raises(ValueError, match="use_bidirectional_attention='all'"):
        from_transformers(module, config)
    config, model = tiny_2026("qwen3_next", num_hidden_layers=2, layer_types=HYBRID[:2])
    module = model.model.layers[1].self_attn
    module.q_proj = torch.nn.Linear(48, 4 * 16, dtype=torch.float64)  # a q_proj without the gate's rows
    with pytest.raises(ValueError, match="no output gate"):
        from_transformers(module, config)
    config, model = tiny_2026("llama4", num_hidden_layers=1, no_rope_layers=[1])
    config.rope_parameters = {"rope_type": "llama3", "rope_theta": 5e5, "factor": 8.0}
    with pytest.raises(ValueError, match="rope_type='llama3'"):
        from_transformers(model.model.layers[0].self_attn, config)
