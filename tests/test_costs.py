"""mha.costs against real counts: module parameters, FlopCounterMode, and tensor sizes."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import mha
from mha.costs.configs import MODEL_CONFIGS
from mha.costs.counts import (
    attention_macs,
    attention_macs_parts,
    attention_macs_per_token,
    attention_params,
    attention_weights_bytes,
    format_bytes,
    format_count,
    kv_cache_bytes,
    model_costs,
    saved_for_backward_bytes,
)
from mha.costs.report import kv_cache_rows

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
    assert (llama2["attention"], llama2["as MHA"]) == ("MHA", "1x")
    assert (llama3["attention"], llama3["n_kv_heads"], llama3["as MHA"]) == ("GQA", 8, "4x")
    assert (falcon["attention"], falcon["as MHA"]) == ("MQA", "71x")
    c = MODEL_CONFIGS["Llama 3.1 8B"]
    assert llama3["context"] == c.context == 131072
    assert llama3["per token"] == format_bytes(kv_cache_bytes(c.n_layers, 8, c.d_k, 1)) == "128.00 KiB"
    assert llama3["KV cache"] == format_bytes(kv_cache_bytes(c.n_layers, 8, c.d_k, c.context)) == "16.00 GiB"


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
    [(0, "0 B"), (1023, "1023 B"), (1024, "1.00 KiB"), (3 * 2**30, "3.00 GiB"), (2**40, "1.00 TiB")],
)
def test_format_bytes(n, text):
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    ("n", "text"), [(999, "999"), (1500, "1.50 k"), (1_500_000_000, "1.50 G"), (2 * 10**12, "2.00 T")]
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
