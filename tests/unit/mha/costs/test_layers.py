"""mha.costs.layers and the models of 2025-2026: their kinds of layer, and what each keeps in memory.

Every rule of model_kv_cache_bytes is checked against arithmetic written out here, and against the real
caches of mha's layers (a latent cache with an indexer's keys, a Gated DeltaNet state, a keys-as-values
cache, a sliding window's and a chunk's).
"""

import pytest
import torch

import mha
from mha.bands import Chunk, Window
from mha.costs import (
    MODEL_CONFIGS,
    MODELS_2025_2026,
    Indexer,
    Layer,
    LinearAttention,
    ModelConfig,
    RopeScaling,
    model_costs,
    model_kv_cache_bytes,
)
from mha.latent import MultiHeadLatentAttention
from mha.linear import GatedDeltaNet
from mha.multihead import KeysAsValues

N = 131_072  # the context of the note: 128K tokens, batch 1, bfloat16 (2 bytes)

NEW = list(MODELS_2025_2026)


def test_the_new_models_are_in_the_table_after_deepseek_v3():
    names = list(MODEL_CONFIGS)
    assert names[names.index("DeepSeek-V3") + 1 :] == NEW and len(NEW) >= 12
    assert names.index("DeepSeek-V3") < names.index("DeepSeek-V3.2")


def gated_delta_state(h_k, h_v, d_k, d_v, kernel):
    """One Gated DeltaNet layer's state, by hand: h_v matrices d_k x d_v, and kernel - 1 convolution inputs
    of 2 h_k d_k + h_v d_v channels."""
    return h_v * d_k * d_v + (kernel - 1) * (2 * h_k * d_k + h_v * d_v)


# The KV cache (and state) of every new model at 131,072 tokens, batch 1, bfloat16, written out by the
# issue's rules from the fields in each source (the note reports the same numbers).
BY_HAND = {
    # 12 full layers of 2 KV heads x 256, keys and values; 36 Gated DeltaNet states (16 QK, 32 V heads of 128)
    "Qwen3-Next-80B-A3B": 2 * (12 * N * 2 * 2 * 256 + 36 * gated_delta_state(16, 32, 128, 128, 4)),
    "Qwen3.5-397B-A17B": 2 * (15 * N * 2 * 2 * 256 + 45 * gated_delta_state(16, 64, 128, 128, 4)),
    # 61 latent layers: 512 latent + 64 rotary key + 128 indexer key per token
    "DeepSeek-V3.2": 2 * 61 * N * (512 + 64 + 128),
    # every layer a window of 128 tokens x 512 (keys are the values, one KV head); 21 layers of ratio 4 add
    # N / 4 entries of 512 + 128 (the indexer), 20 of ratio 128 add N / 128 entries of 512
    "DeepSeek-V4-Flash": 2 * (43 * 128 * 512 + 21 * (N // 4) * (512 + 128) + 20 * (N // 128) * 512),
    "DeepSeek-V4-Pro": 2 * (61 * 128 * 512 + 30 * (N // 4) * (512 + 128) + 31 * (N // 128) * 512),
    "GLM-4.5": 2 * 92 * N * 2 * 8 * 128,
    "GLM-5": 2 * 78 * N * (512 + 64 + 128),
    # 50 sliding layers of 1024 tokens x 2 x 16 x 256; 10 full layers, keys as values: 1 x 4 x 512
    "Gemma 4 31B": 2 * (50 * 1024 * 2 * 16 * 256 + 10 * N * 1 * 4 * 512),
    # layers 0-14 own a cache: 12 sliding (512 tokens x 2 x 1 x 256) and 3 full (2 x 1 x 512); 15-34 share
    "Gemma 4 E2B": 2 * (12 * 512 * 2 * 256 + 3 * N * 2 * 512),
    "Kimi K2": 2 * 61 * N * (512 + 64),
    # 7 latent layers of 512 + 64 (the slot is cached though unrotated); 20 KDA states: 32 heads of 128, a
    # convolution over q, k and v
    "Kimi-Linear-48B-A3B": 2 * (7 * N * 576 + 20 * (32 * 128 * 128 + 3 * 3 * 32 * 128)),
    "MiniMax-M2": 2 * 62 * N * 2 * 8 * 128,
    # 36 chunked layers at most a chunk of 8192 tokens, 12 global ones
    "Llama 4 Maverick": 2 * (36 * 8192 + 12 * N) * 2 * 8 * 128,
    "OLMo 3 7B": 2 * (24 * 4096 + 8 * N) * 2 * 32 * 128,
    "SmolLM3-3B": 2 * 36 * N * 2 * 4 * 128,
}


@pytest.mark.parametrize("name", NEW)
def test_cache_at_128k_by_hand(name):
    assert model_kv_cache_bytes(name, N) == BY_HAND[name]
    assert model_costs(MODEL_CONFIGS[name], N).kv_cache_bytes == BY_HAND[name]


def test_the_rules_scale_with_batch_and_dtype():
    for name in NEW:
        one = model_kv_cache_bytes(name, 4096, dtype=torch.float32)
        assert model_kv_cache_bytes(name, 4096, batch=3, dtype=torch.float8_e4m3fn) == 3 * one // 4


def test_linear_state_and_windows_do_not_grow():
    # a linear layer's state is the same at 1 token and at a million; a window's cache stops at w
    qwen = MODEL_CONFIGS["Qwen3-Next-80B-A3B"]
    linear = [layer for layer in qwen.layers if layer.kind == "linear"]
    assert len(linear) == 36 and {layer.cache_elements(1) for layer in linear} == {32 * 128 * 128 + 3 * 8192}
    assert {layer.cache_elements(2**20) for layer in linear} == {gated_delta_state(16, 32, 128, 128, 4)}
    flash = MODEL_CONFIGS["DeepSeek-V4-Flash"].layers
    assert flash[0].cache_elements(10**6) == flash[0].cache_elements(128) == 128 * 512
    # a compressed layer of ratio 4 adds one entry (512 + the indexer's 128) every 4 tokens
    assert flash[2].cache_elements(204) - flash[2].cache_elements(200) == 640
    assert flash[3].cache_elements(256) - flash[3].cache_elements(255) == 512  # ratio 128: one at 256


def test_kinds_of_layer_follow_the_configs():
    kinds = {name: MODEL_CONFIGS[name].layer_kinds for name in NEW}
    assert [i for i, k in enumerate(kinds["Qwen3-Next-80B-A3B"]) if k == "full"] == list(range(3, 48, 4))
    assert kinds["Qwen3.5-397B-A17B"].count("linear") == 45
    assert [i for i, k in enumerate(kinds["Kimi-Linear-48B-A3B"]) if k == "latent"] == [
        3,
        7,
        11,
        15,
        19,
        23,
        26,
    ]
    flash, pro = MODEL_CONFIGS["DeepSeek-V4-Flash"], MODEL_CONFIGS["DeepSeek-V4-Pro"]
    assert [flash.compress_ratios.count(m) for m in (0, 4, 128)] == [2, 21, 20]  # the MTP entry dropped
    assert [pro.compress_ratios.count(m) for m in (0, 4, 128)] == [0, 30, 31]
    assert [layer.index_dim for layer in flash.layers[:4]] == [None, None, 128, None]  # indexer where m = 4
    assert kinds["Llama 4 Maverick"] == ("chunked",) * 3 + ("full",) * 1 + kinds["Llama 4 Maverick"][4:]
    assert kinds["Llama 4 Maverick"].count("full") == 12 == MODEL_CONFIGS["Llama 4 Maverick"].n_layers // 4
    assert set(kinds["GLM-5"]) == {"latent"} and MODEL_CONFIGS["GLM-5"].layers[0].index_dim == 128
    assert [i for i, k in enumerate(kinds["OLMo 3 7B"]) if k == "full"] == list(range(3, 32, 4))


def test_gemma_4_layers_have_two_shapes_and_e2b_shares_caches():
    g = MODEL_CONFIGS["Gemma 4 31B"].layers
    full, sliding = g[5], g[0]
    assert (full.kind, full.kv_heads, full.head_dim, full.k_eq_v, full.width) == ("full", 4, 512, True, 2048)
    assert (sliding.kind, sliding.kv_heads, sliding.head_dim, sliding.k_eq_v, sliding.width) == (
        "sliding",
        16,
        256,
        False,
        2 * 16 * 256,
    )
    e2b = MODEL_CONFIGS["Gemma 4 E2B"].layers
    assert [layer.shares for layer in e2b[13:20]] == [None, None, 13, 13, 13, 13, 14]
    assert sum(layer.shares is None for layer in e2b) == 15
    assert all(layer.cache_elements(N) == 0 for layer in e2b[15:])
    assert (
        MODEL_CONFIGS["Gemma 4 E2B"].pattern
        == "28 local (window 512) + 7 global; 20 read an earlier layer's cache"
    )


def test_positions_and_options_of_the_new_models():
    c = MODEL_CONFIGS
    assert (c["Qwen3-Next-80B-A3B"].rope_width, c["Qwen3-Next-80B-A3B"].gate) == (64, True)
    assert (c["Gemma 4 31B"].rope_width, c["Gemma 4 31B"].rope_style) == (128, "proportional")
    assert c["DeepSeek-V4-Flash"].rope_width == 64 and c["DeepSeek-V4-Flash"].sinks
    assert c["Kimi-Linear-48B-A3B"].positions == "none" and c["Kimi-Linear-48B-A3B"].rope_width is None
    assert (c["SmolLM3-3B"].nope_period, c["Llama 4 Maverick"].nope_period) == (4, 4)
    assert c["Llama 4 Maverick"].qk_norm is None and c["Llama 4 Maverick"].rope_scaling is None
    assert (c["MiniMax-M2"].qk_norm, c["OLMo 3 7B"].qk_norm) == ("whole projection", "whole projection")
    assert c["Kimi K2"].rope_scaling == RopeScaling("yarn", 32.0, 4096, beta_fast=1.0, beta_slow=1.0)
    assert (c["DeepSeek-V4-Flash"].mtp_layers, c["Kimi K2"].mtp_layers, c["MiniMax-M2"].mtp_layers) == (
        1,
        0,
        3,
    )


@pytest.mark.parametrize("name", NEW)
def test_unverified_fields_are_marked(name):
    c = MODEL_CONFIGS[name]
    if c.trained_context is None or name == "DeepSeek-V3.2":  # V3.2's 128K is the Exp report's
        assert "trained_context: UNVERIFIED" in c.source or "UNVERIFIED (its own report" in c.source, name
    assert "https://" in c.source


# -- the real caches of mha's layers ------------------------------------------------------------------------


def toy(name, **fields):
    """A one-layer model with the given fields, at the toy sizes of the layers below (d_model 32, 4 heads)."""
    base = {"head_dim": 8, "positions": "rotary", "rope_theta": 10000.0}
    return ModelConfig(name, 32, 4, fields.pop("n_kv_heads", 2), fields.pop("n_layers", 1), None, None,
                       "decoder", "a toy model of one layer (tests)", **{**base, **fields})  # fmt: skip


def test_a_latent_cache_with_an_indexer_holds_what_the_rule_counts():
    layer = MultiHeadLatentAttention(32, 4, kv_rank=12, d_nope=8, d_rope=4, q_rank=16, index_heads=2,
                                     index_dim=8, top_k=3)  # fmt: skip
    _, _, cache = layer.decode(torch.randn(2, 10, 32))  # (B, n, d_model)
    config = toy("toy DSA", n_kv_heads=None, kv_latent=12, rope_dim=4, q_latent=16, indexer=Indexer(2, 8, 3))
    assert cache.k_index is not None
    assert (
        cache.nbytes
        == model_kv_cache_bytes(config, 10, batch=2, dtype=torch.float32)
        == 2 * 10 * (12 + 4 + 8) * 4
    )


def test_a_gated_deltanet_state_holds_what_the_rule_counts():
    layer = GatedDeltaNet(32, 2, n_v_heads=4, head_dim=8, v_head_dim=6, kernel=4)
    config = toy("toy hybrid", layer_types=("linear",), linear=LinearAttention("gated delta", 2, 4, 8, 6, 4))
    for n in (1, 10, 100):
        _, _, state = layer.decode(torch.randn(2, n, 32))
        assert state.nbytes == model_kv_cache_bytes(config, n, batch=2, dtype=torch.float32)
    assert state.nbytes == 2 * (4 * 8 * 6 + 3 * (2 * 2 * 8 + 4 * 6)) * 4


def test_keys_as_values_windows_and_chunks_hold_what_the_rule_counts():
    x = torch.randn(2, 10, 32)
    _, _, cache = KeysAsValues(32, 4, n_kv_heads=2).decode(x)
    # the rule counts the least a keys-as-values layer keeps, its key projection; mha (as transformers)
    # keeps the normed keys and values apart, so that a step works on the new token only: twice as much
    counted = model_kv_cache_bytes(toy("toy k=v", k_eq_v=True), 10, batch=2, dtype=torch.float32)
    assert cache.nbytes == 2 * counted == 2 * (2 * 10 * 1 * 2 * 8 * 4)
    _, _, cache = mha.MultiHeadAttention(32, 4, n_kv_heads=2, band=Window(4)).decode(x)
    assert cache.nbytes == model_kv_cache_bytes(
        toy("toy sliding", window=4), 10, batch=2, dtype=torch.float32
    )
    # a chunk of 4 is counted as its worst case, 4 tokens; between steps the layer holds the current chunk's
    chunked = toy("toy chunked", window=4, chunked=True)
    counted = model_kv_cache_bytes(chunked, 10, batch=2, dtype=torch.float32)
    assert counted == 2 * 4 * 2 * 2 * 8 * 4
    for n in range(1, 10):
        _, _, cache = mha.MultiHeadAttention(32, 4, n_kv_heads=2, band=Chunk(4)).decode(x[:, :n])
        assert cache.nbytes == counted * (n % 4) // 4 <= counted


# -- the per-layer description, and errors that name the model and the field -------------------------------


def test_layer_rules_by_hand():
    full = Layer("full", 2 * 8 * 128, kv_heads=8, head_dim=128)
    assert full.cache_elements(1000) == 1000 * 2048 and full.global_elements(1000) == 1000 * 2048
    sliding = Layer("sliding", 2048, kv_heads=8, head_dim=128, window=512)
    assert (sliding.cache_elements(100), sliding.cache_elements(1000), sliding.global_elements(1000)) == (
        100 * 2048,
        512 * 2048,
        1000 * 2048,
    )
    compressed = Layer(
        "compressed", 512, kv_heads=1, head_dim=512, k_eq_v=True, window=128, ratio=4, index_dim=128
    )
    assert compressed.cache_elements(1003) == 128 * 512 + 250 * 640
    assert compressed.global_elements(1003) == 1003 * 512
    assert Layer("latent", 576, index_dim=128).cache_elements(10) == 7040
    assert Layer("linear", 0, state=99).cache_elements(10**9) == 99
    assert Layer("full", 2048, kv_heads=8, head_dim=128, shares=3).cache_elements(10**6) == 0
    assert compressed.label == "window 128 + 1 per 4, 1 x 1 x 512 + indexer 128"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"layer_types": ("full", "mamba")}, "toy: layer_types must hold kinds"),
        ({"layer_types": ("full",)}, "toy: layer_types must be a tuple of n_layers=2"),
        ({"layer_types": ("full", "linear")}, "toy: linear layers and the linear field"),
        ({"layer_types": ("full", "compressed"), "window": 8}, "toy: compressed layers and compress_ratios"),
        ({"layer_types": ("sliding", "compressed"), "window": 8, "compress_ratios": (0, 16)},
         "toy: compress_ratios[1]=16 must not exceed the window 8"),
        ({"layer_types": ("sliding", "compressed"), "window": 8, "compress_ratios": (4, 4)},
         "toy: compress_ratios[0] must be > 0 iff layer 0 is compressed"),
        ({"indexer": Indexer(2, 8, 3)}, "toy: an indexer without a ratio belongs to latent layers"),
        ({"layer_types": ("sliding", "compressed"), "window": 8, "compress_ratios": (0, 4),
          "indexer": Indexer(2, 8, 3, ratio=8)}, "toy: indexer ratio=8 is no layer's compression ratio"),
        ({"kv_shared_from": (1, None)}, "toy: kv_shared_from[0] must be an earlier layer"),
        ({"window": 8, "global_period": 2, "kv_shared_from": (None, 0)},
         "toy: kv_shared_from[1]=0: layer 0 is"),
        ({"local_kv_heads": 2}, "toy: local_kv_heads and local_head_dim need sliding or chunked layers"),
        ({"chunked": True}, "toy: chunked needs a window"),
        ({"rope_fraction": 1.5}, "toy: rope_fraction must lie in (0, 1]"),
        ({"rope_style": "spiral"}, "toy: rope_style must be one of"),
        ({"v_head_dim": 16}, "toy: v_head_dim belongs to latent attention"),
        ({"mtp_layers": -1}, "toy: mtp_layers must be a non-negative int"),
        ({"linear": LinearAttention("gated delta", 2, 4, 8, 8, 4), "layer_types": ("full", "linear"),
          "gate": 1}, "toy: gate must be a bool"),
    ],
)  # fmt: skip
def test_errors_name_the_model_and_the_field(fields, message):
    with pytest.raises((TypeError, ValueError)) as error:
        toy("toy", n_layers=2, **fields)
    assert str(error.value).startswith(message), str(error.value)


def test_layer_specs_check_their_fields():
    with pytest.raises(ValueError, match="linear value_heads=3 must be a multiple of key_heads=2"):
        LinearAttention("gated delta", 2, 3, 8, 8, 4)
    with pytest.raises(ValueError, match="linear rule must be one of"):
        LinearAttention("mamba", 2, 4, 8, 8, 4)
    with pytest.raises(ValueError, match="indexer dim must be a positive int"):
        Indexer(2, 0, 3)
    with pytest.raises(ValueError, match="a sliding layer needs window"):
        Layer("sliding", 8)
    with pytest.raises(ValueError, match="a full layer takes no ratio"):
        Layer("full", 8, ratio=4)


def test_mixed_models_do_not_pretend_to_be_global():
    with pytest.raises(ValueError, match="Gemma 4 31B: layers of several kinds or shapes"):
        MODEL_CONFIGS["Gemma 4 31B"].every_layer_global()
    costs = model_costs(MODEL_CONFIGS["Qwen3-Next-80B-A3B"], N)
    assert (costs.params, costs.macs_per_token) == (None, None)  # linear layers' weights are not counted
    assert costs.kv_cache_bytes_as_mha == 2 * 2 * 16 * 256 * 48 * N  # every layer full MHA, for scale
