"""mha.costs against real counts: module parameters, FlopCounterMode, and tensor sizes."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import mha
from mha.costs.configs import MODEL_CONFIGS, ModelConfig
from mha.costs.counts import (
    attention_macs,
    attention_macs_parts,
    attention_macs_per_token,
    attention_params,
    attention_weights_bytes,
    kv_cache_bytes,
    layer_costs,
    model_costs,
    model_kv_cache_bytes,
    saved_for_backward_bytes,
    uncounted_layers,
)
from mha.costs.report import format_bytes, format_count, format_ratio, kv_cache_rows

SHAPES = [
    # d_model, h, n_kv_heads
    (8, 1, None),
    (16, 4, None),
    (16, 4, 2),
    (16, 4, 1),
    (48, 6, 3),
    (64, 8, 8),
]


def flops(fn) -> int:
    counter = FlopCounterMode(display=False)
    with counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize(("d_model", "h", "n_kv_heads"), SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_params_match_the_module(d_model, h, n_kv_heads, bias):
    attn = mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads, bias=bias)
    assert attention_params(d_model, h, n_kv_heads, bias=bias) == sum(p.numel() for p in attn.parameters())


def test_gqa_and_mqa_save_key_value_parameters():
    d, h = 64, 8
    mha_, gqa, mqa = (attention_params(d, h, kv, bias=False) for kv in (8, 2, 1))
    assert mha_ == 4 * d * d
    assert mha_ - gqa == 2 * d * (8 - 2) * (d // h)
    assert mqa == 2 * d * d + 2 * d * (d // h)


@pytest.mark.parametrize(("d_model", "h", "n_kv_heads"), SHAPES)
@pytest.mark.parametrize(("B", "n_q", "n_k"), [(1, 1, 1), (2, 5, 5), (3, 4, 7)])
def test_macs_match_flop_counter_on_the_module(d_model, h, n_kv_heads, B, n_q, n_k):
    attn = mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads)
    query, key = torch.randn(B, n_q, d_model), torch.randn(B, n_k, d_model)
    counted = flops(lambda: attn(query, key))  # explicit path: every matmul is counted
    assert counted == 2 * B * attention_macs(d_model, h, n_q, n_k, n_kv_heads=n_kv_heads)


def test_macs_default_to_self_attention():
    assert attention_macs(16, 4, 5) == attention_macs(16, 4, 5, 5)


@pytest.mark.parametrize(("d_model", "h", "n_kv_heads"), SHAPES)
@pytest.mark.parametrize("context", [1, 6])
def test_macs_per_token_match_one_decoding_step(d_model, h, n_kv_heads, context):
    # One decoding step, written out with the module's own layers: project the new token only, attend to
    # the cache (context - 1 cached keys plus the new one), project the result.
    attn = mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads)
    h_kv, d_k = attn.n_kv_heads, attn.d_k
    x = torch.randn(1, 1, d_model)  # (B, 1, d_model)
    cache_k = torch.randn(1, h, context - 1, d_k)  # (B, h, context - 1, d_k), already projected
    cache_v = torch.randn(1, h, context - 1, d_k)

    def step():
        q = attn.W_q(x).view(1, 1, h, d_k).transpose(1, 2)  # (1, h, 1, d_k)
        k = attn.W_k(x).view(1, 1, h_kv, d_k).transpose(1, 2).repeat_interleave(h // h_kv, dim=1)
        v = attn.W_v(x).view(1, 1, h_kv, d_k).transpose(1, 2).repeat_interleave(h // h_kv, dim=1)
        k, v = torch.cat([cache_k, k], dim=2), torch.cat([cache_v, v], dim=2)  # (1, h, context, d_k)
        out, _ = mha.scaled_dot_product_attention(q, k, v)
        return attn.W_o(out.transpose(1, 2).reshape(1, 1, d_model))

    assert flops(step) == 2 * attention_macs_per_token(d_model, h, context, n_kv_heads=n_kv_heads)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize(("n_layers", "h_kv", "d_k", "context", "batch"), [(1, 1, 1, 1, 1), (3, 2, 4, 5, 2)])
def test_kv_cache_bytes_match_real_cache_tensors(dtype, n_layers, h_kv, d_k, context, batch):
    cache = [
        (
            torch.empty(batch, h_kv, context, d_k, dtype=dtype),
            torch.empty(batch, h_kv, context, d_k, dtype=dtype),
        )
        for _ in range(n_layers)
    ]
    real = sum(t.numel() * t.element_size() for pair in cache for t in pair)
    assert kv_cache_bytes(n_layers, h_kv, d_k, context, batch=batch, dtype=dtype) == real


@pytest.mark.parametrize(("d_model", "h", "n_kv_heads"), SHAPES)
def test_kv_cache_bytes_match_the_modules_keys_and_values(d_model, h, n_kv_heads):
    # What a decoder caches per layer is W_k(x) and W_v(x) of every past token: measure the module's own.
    n_layers, batch, context = 2, 3, 5
    layers = [
        mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads).to(torch.bfloat16) for _ in range(n_layers)
    ]
    x = torch.randn(batch, context, d_model, dtype=torch.bfloat16)  # (B, context, d_model)
    real = sum(t.numel() * t.element_size() for layer in layers for t in (layer.W_k(x), layer.W_v(x)))
    attn = layers[0]
    assert kv_cache_bytes(n_layers, attn.n_kv_heads, attn.d_k, context, batch=batch) == real


def test_kv_cache_of_llama2_70b_at_4096_tokens():
    c = MODEL_CONFIGS["Llama 2 70B"]
    expected = 2 * 80 * 4096 * 8 * 128 * 2  # keys and values, layers, tokens, kv heads, d_k, bf16 bytes
    assert kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, 4096) == expected
    assert format_bytes(expected) == "1.25 GiB"


def test_macs_parts_of_the_tutorials_toy_layer():
    """Seed tutorial 002, section 3.4 (h = 2, n = 4, d_model = 8): its terms sum to 1152, one A V short."""
    h, n, d_model, d_k = 2, 4, 8, 4
    q_k_v, q_kt, w_o = 3 * h * (n * d_model * d_k), h * (n * n * d_k), n * d_model * d_model
    assert (q_k_v, q_kt, w_o, q_k_v + q_kt + w_o) == (768, 128, 256, 1152)
    projections, scores = attention_macs_parts(d_model, h, n)
    assert projections == q_k_v + w_o  # the tutorial counts all four projections
    assert scores == 2 * q_kt  # Q K^T and A V cost the same; the tutorial counts only Q K^T
    assert projections + scores == attention_macs(d_model, h, n) == 1280


def test_kv_cache_rows_compare_models_at_their_trained_context():
    rows = kv_cache_rows(["Llama 2 7B", "Llama 3.1 8B", "Falcon-7B"])
    assert [r["model"] for r in rows] == ["Llama 2 7B", "Llama 3.1 8B", "Falcon-7B"]
    llama2, llama3, falcon = rows
    assert (llama2["attention"], llama2["as MHA"]) == ("MHA", "1.0x")  # one decimal, integers too
    assert (llama3["attention"], llama3["n_kv_heads"], llama3["as MHA"]) == ("GQA", 8, "4.0x")
    assert (falcon["attention"], falcon["as MHA"]) == ("MQA", "71.0x")
    c = MODEL_CONFIGS["Llama 3.1 8B"]
    assert llama3["context"] == c.trained_context == 131072
    assert llama3["per token"] == format_bytes(kv_cache_bytes(c.n_layers, 8, c.d_k, 1)) == "128.00 KiB"
    assert llama3["KV cache"] == format_bytes(kv_cache_bytes(c.n_layers, 8, c.d_k, 131072)) == "16.00 GiB"
    (gemma,) = kv_cache_rows(["Gemma 3 27B"], context=4096)
    assert gemma["as MHA"] == "5.4x"  # 62 * 4096 * 2 * 32 * 128 / ((10 * 4096 + 52 * 1024) * 2 * 16 * 128)
    toy = ModelConfig("toy", 64, 8, 8, 2, None, None, "decoder", "test", positions="sinusoidal")
    with pytest.raises(ValueError, match="toy states no trained context"):
        kv_cache_rows([toy])


@pytest.mark.parametrize(
    ("a", "b", "text"),
    [(16, 3, "5.3x"), (8, 1, "8.0x"), (32, 3, "10.7x"), (5, 4, "1.2x"), (7, 4, "1.8x"), (1, 20, "0.1x"),
     (0, 5, "0.0x"), (2**70 + 1, 2**69, "2.0x")],
)  # fmt: skip
def test_format_ratio_rounds_to_one_decimal_half_to_even(a, b, text):
    assert format_ratio(a, b) == text  # 5/4 = 1.25 and 7/4 = 1.75 are exact ties: to even, as Python's round


@pytest.mark.parametrize(("a", "b"), [(1, 0), (-1, 2), (1.5, 2), (True, 2)])
def test_format_ratio_rejects_bad_arguments(a, b):
    with pytest.raises(ValueError):
        format_ratio(a, b)


def test_kv_cache_rows_at_a_chosen_context_batch_and_dtype():
    (row,) = kv_cache_rows([MODEL_CONFIGS["Llama 2 7B"]], context=8192, batch=8, dtype="float32")
    c = MODEL_CONFIGS["Llama 2 7B"]
    cache = kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, 8192, batch=8, dtype=torch.float32)
    assert (row["context"], row["KV cache"]) == (8192, format_bytes(cache))
    per_token = kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, 1, dtype=torch.float32)
    assert row["per token"] == format_bytes(per_token)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: kv_cache_rows(["BERT-base"]), ValueError),
        (lambda: kv_cache_rows(["GPT-5"]), KeyError),
        (lambda: kv_cache_rows([]), ValueError),
        (lambda: kv_cache_rows(["GPT-2 small"], dtype="int3"), ValueError),
        (lambda: kv_cache_rows(["GPT-2 small"], batch=0), ValueError),
    ],
)
def test_kv_cache_rows_reject_bad_arguments(call, error):
    with pytest.raises(error):
        call()


def test_attention_weights_bytes_match_the_explicit_path():
    attn = mha.MultiHeadAttention(16, 4)
    _, weights = attn(torch.randn(2, 9, 16))
    assert attention_weights_bytes(2, 4, 9, 9) == weights.numel() * weights.element_size()


def test_model_costs_add_up_the_layers():
    c = MODEL_CONFIGS["Mistral 7B"]
    costs = model_costs(c, 1000, batch=3, dtype=torch.float32)
    assert costs.params == c.n_layers * attention_params(c.d_model, c.h, c.n_kv_heads, bias=False)
    assert costs.macs_per_token == c.n_layers * attention_macs_per_token(c.d_model, c.h, 1000, n_kv_heads=8)
    assert costs.macs_per_sequence == 3 * c.n_layers * attention_macs(c.d_model, c.h, 1000, n_kv_heads=8)
    assert costs.kv_cache_bytes == kv_cache_bytes(c.n_layers, 8, 128, 1000, batch=3, dtype=torch.float32)


def test_model_costs_refuse_encoders():
    with pytest.raises(ValueError, match="decoder-only"):
        model_costs(MODEL_CONFIGS["BERT-base"], 512)
    with pytest.raises(TypeError, match="ModelConfig"):
        model_costs("GPT-2 small", 512)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: attention_params(10, 3), ValueError),
        (lambda: attention_params(16, 4, 3), ValueError),
        (lambda: attention_macs(16, 4, 0), ValueError),
        (lambda: attention_macs_per_token(16, 4, 0), ValueError),
        (lambda: kv_cache_bytes(1, 1, 1, 1, batch=0), ValueError),
        (lambda: kv_cache_bytes(1, 1, 1, 1, dtype="bf16"), TypeError),
        (lambda: attention_params(16.0, 4), TypeError),
    ],
)
def test_invalid_arguments(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.00 KiB"),
        (3 * 2**30, "3.00 GiB"),
        (2**40, "1.00 TiB"),
        (589824 * 2**40, "576.00 PiB"),  # not "589824.00 TiB"
        (3 * 2**60, "3.00 EiB"),
        (2**90 * 1234, "1,263,616.00 YiB"),  # past the largest unit, digits grouped
    ],
)
def test_format_bytes(n, text):
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (999, "999"),
        (1500, "1.50 k"),
        (1_500_000_000, "1.50 G"),
        (2 * 10**12, "2.00 T"),
        (3 * 10**15, "3.00 P"),
        (2_724_067_590_852_840 * 10**9, "2.72 Y"),  # not "2724067590852.84 T"
        (12_345 * 10**24, "12,345.00 Y"),
    ],
)
def test_format_count(n, text):
    assert format_count(n) == text


def test_saved_for_backward_bytes_of_the_explicit_path_are_inputs_plus_weights():
    B, h, n, d_k = 1, 2, 16, 4
    q, k, v = (torch.randn(B, h, n, d_k, requires_grad=True) for _ in range(3))
    saved = saved_for_backward_bytes(lambda: mha.scaled_dot_product_attention(q, k, v))
    inputs = 3 * q.numel() * q.element_size()  # the matmuls keep q, k, v
    assert saved == inputs + attention_weights_bytes(B, h, n, n)  # and the softmax keeps its output


def test_fused_path_saves_no_n_by_n_tensor():
    B, h, n, d_k = 1, 2, 256, 8
    q, k, v = (torch.randn(B, h, n, d_k, requires_grad=True) for _ in range(3))
    fused = saved_for_backward_bytes(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v))
    assert fused < attention_weights_bytes(B, h, n, n)


def test_nothing_is_saved_without_gradients():
    x = torch.randn(3, 3)
    assert saved_for_backward_bytes(lambda: x @ x) == 0


# -- a model's cache, counted layer by layer ----------------------------------------------------------------


def test_model_kv_cache_bytes_of_gemma_3_27b_by_hand():
    # 62 layers: layer i global iff (i + 1) % 6 == 0, so 10 global and 52 local with a window of 1024 tokens;
    # 16 key/value heads of 128: 2 * 16 * 128 = 4096 values per token and layer, 2 bytes each in bfloat16.
    per_token_layer = 2 * 16 * 128 * 2
    assert model_kv_cache_bytes("Gemma 3 27B", 131072) == (10 * 131072 + 52 * 1024) * per_token_layer
    assert model_kv_cache_bytes("Gemma 3 27B", 131072) == 11_173_625_856  # 10.41 GiB
    assert model_kv_cache_bytes("Gemma 3 27B", 1000) == 62 * 1000 * per_token_layer  # under the window
    every = MODEL_CONFIGS["Gemma 3 27B"].every_layer_global()
    assert model_kv_cache_bytes(every, 131072) == 62 * 131072 * per_token_layer == 62 * 2**30


def test_model_kv_cache_bytes_of_gpt_oss_by_hand():
    # alternating sliding (w = 128) and full, from layer 0: 18 + 18 layers in 120b, 12 + 12 in 20b;
    # 8 key/value heads of 64: 2 * 8 * 64 = 1024 values per token and layer.
    per_token_layer = 2 * 8 * 64 * 2
    assert model_kv_cache_bytes("gpt-oss-120b", 131072) == (18 * 131072 + 18 * 128) * per_token_layer
    assert model_kv_cache_bytes("gpt-oss-120b", 131072) == 4_836_556_800  # 4.50 GiB
    assert model_kv_cache_bytes("gpt-oss-20b", 131072) == (12 * 131072 + 12 * 128) * per_token_layer
    every = MODEL_CONFIGS["gpt-oss-120b"].every_layer_global()
    assert model_kv_cache_bytes(every, 131072) == 36 * 131072 * per_token_layer == 9 * 2**30


def test_model_kv_cache_bytes_of_deepseek_v3_by_hand():
    # 61 layers, dense and MoE alike (the multi-token-prediction module not counted), each caching a latent
    # of 512 and a rotary key of 64 per token: 576 values, shared by the 128 heads.
    assert model_kv_cache_bytes("DeepSeek-V3", 131072) == 61 * 131072 * (512 + 64) * 2 == 9_210_691_584
    every = MODEL_CONFIGS["DeepSeek-V3"].every_layer_global()
    assert model_kv_cache_bytes(every, 131072) == model_kv_cache_bytes("DeepSeek-V3", 131072)  # no windows


def test_model_kv_cache_bytes_of_mistral_gemma_2_and_llama_4_by_hand():
    # Mistral 7B: every layer's rolling buffer holds 4096 tokens: 32 * 4096 * 2 * 8 * 128 * 2 bytes = 0.5 GiB
    assert model_kv_cache_bytes("Mistral 7B", 8192) == 32 * 4096 * 2 * 8 * 128 * 2 == 2**29
    # Gemma 2 27B: 23 local (4096) and 23 global layers; 16 key/value heads of 128
    assert model_kv_cache_bytes("Gemma 2 27B", 8192) == (23 * 4096 + 23 * 8192) * 2 * 16 * 128 * 2
    # Llama 4 Scout: 36 chunked layers (at most 8192 tokens) and 12 global ones; 8 key/value heads of 128
    assert model_kv_cache_bytes("Llama 4 Scout", 2**20) == (36 * 8192 + 12 * 2**20) * 2 * 8 * 128 * 2


# the models of one kind of attention layer (the kinds of 2025-2026: tests/unit/mha/costs/test_layers.py)
ONE_KIND = [c.name for c in MODEL_CONFIGS.values() if c.kind == "decoder" and not uncounted_layers(c)]


@pytest.mark.parametrize("name", ONE_KIND)
@pytest.mark.parametrize(("context", "batch", "dtype"), [(1, 1, torch.bfloat16), (5000, 3, torch.float32)])
def test_model_kv_cache_bytes_is_the_sum_over_layers(name, context, batch, dtype):
    c = MODEL_CONFIGS[name]
    per_layer = [
        kv_cache_bytes(
            1, c.n_kv_heads, c.d_k, context if w is None else min(context, w), batch=batch, dtype=dtype
        )
        if c.kv_latent is None
        else batch * (min(context, w) if w else context) * (c.kv_latent + c.rope_dim) * dtype.itemsize
        for w in c.layer_windows
    ]
    assert model_kv_cache_bytes(c, context, batch=batch, dtype=dtype) == sum(per_layer)
    assert model_costs(c, context, batch=batch, dtype=dtype).kv_cache_bytes == sum(per_layer)


def test_model_kv_cache_bytes_equals_kv_cache_bytes_without_windows_or_latents():
    c = MODEL_CONFIGS["Llama 2 70B"]
    assert model_kv_cache_bytes(c, 4096, batch=8) == kv_cache_bytes(80, 8, 128, 4096, batch=8) == 10 * 2**30


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: model_kv_cache_bytes("GPT-5", 10), KeyError, "unknown model"),
        (lambda: model_kv_cache_bytes("BERT-base", 10), ValueError, "only decoder-only models"),
        (lambda: model_kv_cache_bytes("Gemma 3 27B", 0), ValueError, "context"),
        (lambda: model_kv_cache_bytes("Gemma 3 27B", 10, batch=0), ValueError, "batch"),
        (lambda: model_kv_cache_bytes("Gemma 3 27B", 10, dtype="bf16"), TypeError, "dtype"),
    ],
)
def test_model_kv_cache_bytes_rejects_bad_arguments(call, error, message):
    with pytest.raises(error, match=message):
        call()


# -- head widths set apart, and latent attention ----------------------------------------------------------


@pytest.mark.parametrize(
    ("d_model", "h", "n_kv_heads", "head_dim"), [(24, 4, 2, 8), (20, 4, 1, 3), (16, 2, 2, 8)]
)
@pytest.mark.parametrize("bias", [True, False])
def test_params_and_macs_with_a_head_width_set_apart(d_model, h, n_kv_heads, head_dim, bias):
    attn = mha.MultiHeadAttention(d_model, h, n_kv_heads=n_kv_heads, head_dim=head_dim, bias=bias)
    assert attention_params(d_model, h, n_kv_heads, bias=bias, head_dim=head_dim) == sum(
        p.numel() for p in attn.parameters()
    )
    x = torch.randn(2, 5, d_model)
    macs = attention_macs(d_model, h, 5, n_kv_heads=n_kv_heads, head_dim=head_dim)
    assert flops(lambda: attn(x)) == 2 * 2 * macs


def test_windowed_layers_attend_to_their_window_when_decoding():
    c = MODEL_CONFIGS["gpt-oss-120b"]
    one = attention_macs_per_token(c.d_model, c.h, 1, n_kv_heads=8, head_dim=64) - 2 * c.h * 64  # projections
    costs = model_costs(c, 131072)
    assert costs.macs_per_token == 36 * one + 2 * c.h * 64 * (18 * 131072 + 18 * 128)


def test_latent_attention_params_are_those_of_transformers_deepseek_v3_attention():
    transformers = pytest.importorskip("transformers")
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention

    hf = transformers.DeepseekV3Config(
        hidden_size=64, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=16, q_lora_rank=24,
        qk_rope_head_dim=8, qk_nope_head_dim=12, v_head_dim=12, num_hidden_layers=1,
    )  # fmt: skip
    attn = DeepseekV3Attention(hf, 0)
    weights = sum(m.weight.numel() for m in attn.modules() if isinstance(m, torch.nn.Linear))
    tiny = ModelConfig(
        "tiny MLA", 64, 4, None, 1, 128, 128, "decoder", "test", head_dim=12, kv_latent=16, rope_dim=8,
        q_latent=24, positions="rotary",
    )  # fmt: skip
    assert layer_costs(tiny).params == weights
    x = torch.randn(1, 6, 64)
    position = torch.arange(6)[None]
    cos, sin = torch.ones(1, 6, 8), torch.zeros(1, 6, 8)
    counted = flops(lambda: attn(x, (cos, sin), attention_mask=None, position_ids=position))
    # a forward pass over 6 tokens: every weight once per token, and h (2 d_k + d_r) per (query, key) pair
    assert counted == 2 * (6 * layer_costs(tiny).params + 6 * 6 * 4 * (2 * 12 + 8))


def test_latent_attention_of_deepseek_v3_by_hand():
    d, h, d_k, d_c, d_r, d_q = 7168, 128, 128, 512, 64, 1536
    per_layer = d * d_q + d_q * h * (d_k + d_r) + d * (d_c + d_r) + d_c * h * 2 * d_k + h * d_k * d
    layer = layer_costs(MODEL_CONFIGS["DeepSeek-V3"])
    assert (layer.params, layer.cache_width) == (per_layer, 576) and per_layer == 187_105_280
    assert layer.key_macs == h * (2 * d_c + d_r)  # scores against the latent and rotary key, then the sum
    costs = model_costs(MODEL_CONFIGS["DeepSeek-V3"], 1000)
    assert costs.params == 61 * per_layer
    assert costs.macs_per_token == 61 * (per_layer + 1000 * h * (2 * d_c + d_r))


@pytest.mark.parametrize("absorb", [True, False])
def test_latent_decoding_per_cached_token_is_what_the_layer_counts(absorb):
    """layer_costs' multiply-adds per cached latent (key_macs absorbed; rebuild_macs + pair_macs not) are
    what PyTorch's FLOP counter counts on mha.MultiHeadLatentAttention.decode, one new token against n."""
    tiny = ModelConfig(
        "tiny MLA", 64, 4, None, 1, 128, 128, "decoder", "test", head_dim=8, kv_latent=16, rope_dim=4,
        q_latent=24, positions="rotary",
    )  # fmt: skip
    layer = mha.MultiHeadLatentAttention(64, 4, kv_rank=16, d_nope=8, d_rope=4, q_rank=24).double().eval()
    tokens = torch.randn(1, 25, 64, dtype=torch.float64)
    counted = {}
    for n_past in (12, 24):
        _, _, past = layer.decode(tokens[:, :n_past], absorb=absorb)
        counted[n_past] = flops(
            lambda past=past, n=n_past: layer.decode(tokens[:, n : n + 1], past, absorb=absorb)
        )
    per_key = (counted[24] - counted[12]) // 2 // 12
    costs = layer_costs(tiny)
    assert costs.rebuild_macs == 2 * 4 * 8 * 16
    assert per_key == (costs.key_macs if absorb else costs.rebuild_macs + costs.pair_macs)
    assert layer_costs(MODEL_CONFIGS["Llama 3.1 8B"]).rebuild_macs == 0
