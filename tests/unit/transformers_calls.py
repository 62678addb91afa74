"""What the tests of `from_transformers` share: one forward pass of a transformers model with its layers
recorded, so that each converted layer is checked on the very inputs the model gave it; and the tiny random
models of today's decoder families and of DeepSeek-V3 (tests/unit/mha/pretrained/test_families.py,
tests/unit/mha/pretrained/test_latent.py, tests/unit/book/figures/test_block.py), built on transformers,
which a test that builds one skips without (``pytest.importorskip``)."""

from __future__ import annotations

import torch


def recorded_calls(model, modules, input_ids: torch.Tensor) -> list[tuple]:
    """Run ``model`` once on ``input_ids``; return, for each of ``modules`` in order, ``(module, its input
    hidden states, its output)`` (the output as the module returns it: a tensor or a tuple)."""
    seen = {}

    def record(module, args, kwargs, output):
        x = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        seen[module] = (x.detach().clone(), output)

    handles = [module.register_forward_hook(record, with_kwargs=True) for module in modules]
    try:
        with torch.no_grad():
            model(input_ids=input_ids)
    finally:
        for handle in handles:
            handle.remove()
    return [(module, *seen[module]) for module in modules]


def random_ids(vocab_size: int, n: int, batch: int = 2) -> torch.Tensor:
    """``(batch, n)`` token ids, the same on every run (seed 1)."""
    return torch.randint(0, vocab_size, (batch, n), generator=torch.Generator().manual_seed(1))


# -- tiny random models of each family: 4 layers, head_dim apart from d_model / h, windows of 3 or 4 keys ----

N = 10  # sequence length: longer than every window below
SIZES = {  # d_model 48, h 4, h_kv 2, d_k 16 (not 48 / 4 = 12)
    "hidden_size": 48,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 4,
    "vocab_size": 32,
    "max_position_embeddings": 64,
    "attention_bias": True,
    "attn_implementation": "eager",
}
LAYER_TYPES = ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]


def rope(theta):
    """Rotary parameters set explicitly: gpt-oss's config, for one, defaults to YaRN."""
    return {"rope_type": "default", "rope_theta": theta}


FAMILIES = {
    "llama": ("LlamaConfig", "LlamaForCausalLM", {"rope_parameters": rope(500.0)}),
    "qwen3": (
        "Qwen3Config",
        "Qwen3ForCausalLM",
        {"rope_parameters": rope(1000.0), "use_sliding_window": True, "sliding_window": 4},
    ),
    "gemma3": (
        "Gemma3TextConfig",
        "Gemma3ForCausalLM",
        {
            "rope_parameters": {"sliding_attention": rope(100.0), "full_attention": rope(10000.0)},
            "sliding_window": 3,
            "query_pre_attn_scalar": 24,
        },
    ),
    "gpt_oss": (
        "GptOssConfig",
        "GptOssForCausalLM",
        {
            "rope_parameters": rope(150000.0),
            "sliding_window": 3,
            "num_local_experts": 2,
            "num_experts_per_tok": 1,
            "experts_implementation": "eager",  # the grouped kernel takes no float64
        },
    ),
}


def tiny_model(family):
    """``(config, model)``: a tiny random model of ``family`` (a key of FAMILIES), in float64."""
    import transformers

    config_name, model_name, options = FAMILIES[family]
    layer_types = {} if family == "llama" else {"layer_types": LAYER_TYPES}
    config = getattr(transformers, config_name)(**SIZES, **layer_types, **options)
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():  # every weight random: norms, biases and sinks too
            p.normal_(0.0, 0.3)
    return config, model


# -- a tiny random DeepSeek-V3: 2 layers, the second a mixture of experts ----------------------------------

DEEPSEEK_SIZES = {  # d_model 32, h 4; q rank 24, kv rank 12, d_nope 10, d_rope 6, d_v 8: all different
    "hidden_size": 32,
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "q_lora_rank": 24,
    "kv_lora_rank": 12,
    "qk_nope_head_dim": 10,
    "qk_rope_head_dim": 6,
    "v_head_dim": 8,
    "intermediate_size": 24,
    "moe_intermediate_size": 8,
    "n_routed_experts": 4,
    "num_experts_per_tok": 2,
    "n_group": 1,
    "topk_group": 1,
    "first_k_dense_replace": 1,
    "num_hidden_layers": 2,
    "vocab_size": 32,
    "max_position_embeddings": 64,
    "rope_parameters": {"rope_type": "default", "rope_theta": 1000.0},  # set explicitly
    "attn_implementation": "eager",
    "experts_implementation": "eager",  # the grouped kernel takes no float64
}
DEEPSEEK_VARIANTS = {  # DeepSeek-V3 as it is; DeepSeek-V2-Lite's plain query; biases; half-split rotary
    "v3": {},
    "plain-query": {"q_lora_rank": None},
    "bias": {"attention_bias": True},
    "half-split": {"rope_interleave": False},
}


def tiny_deepseek(variant):
    """``(config, model)``: a tiny random DeepSeek-V3, ``variant`` a key of DEEPSEEK_VARIANTS, in float64."""
    import transformers

    config = transformers.DeepseekV3Config(**{**DEEPSEEK_SIZES, **DEEPSEEK_VARIANTS[variant]})
    torch.manual_seed(0)
    model = transformers.DeepseekV3ForCausalLM(config).double().eval()
    with torch.no_grad():
        for p in model.parameters():  # every weight random: the latent norms and biases too
            p.normal_(0.0, 0.3)
    return config, model
