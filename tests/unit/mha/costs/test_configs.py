"""mha.costs.configs: the model table is consistent, frozen, sourced, and renders."""

import dataclasses

import pytest

import mha
from mha.costs.configs import (
    COLUMNS,
    MODEL_CONFIGS,
    TOPICS,
    ModelConfig,
    RopeScaling,
    config_rows,
    configs_table,
)

# Spot checks against the primary sources named in each entry (the issue's list of facts to get right).
KNOWN = {
    # name: (d_model, h, n_kv_heads, n_layers, trained_context, max_context)
    "Transformer base": (512, 8, 8, 6, None, None),  # Vaswani et al. 2017, Table 3; sinusoids: no limit
    "BERT-base": (768, 12, 12, 12, 512, 512),  # Devlin et al. 2019, section 3 and Appendix A.2
    "BERT-large": (1024, 16, 16, 24, 512, 512),
    "GPT-2 XL": (1600, 25, 25, 48, 1024, 1024),  # gpt2-xl config.json (n_positions)
    "GPT-3 175B": (12288, 96, 96, 96, 2048, 2048),  # Brown et al. 2020, Table 2.1, section 2.1
    "Llama 2 70B": (8192, 64, 8, 80, 4096, 4096),  # Llama-2-70b-hf config.json; Touvron et al. 2023b, Table 1
    "Mistral 7B": (4096, 32, 8, 32, 8192, 32768),  # Jiang et al. 2023, Table 1; config.json's 32768
    "GPT-2 small": (768, 12, 12, 12, 1024, 1024),  # gpt2 config.json
    "T5-base": (768, 12, 12, 12, 512, None),  # Raffel et al. 2020, 3.1.1 and 3.1.2; relative: no limit
    "T5-large": (1024, 16, 16, 24, 512, None),  # Raffel et al. 2020, section 3.7
    "ViT-B/16": (768, 12, 12, 12, 197, 197),  # Dosovitskiy et al. 2021, Table 1; (224/16)^2 + 1 tokens
    "ViT-H/14": (1280, 16, 16, 32, 257, 257),  # Dosovitskiy et al. 2021, Table 1; (224/14)^2 + 1 tokens
    "LLaMA 7B": (4096, 32, 32, 32, 2048, None),  # Touvron et al. 2023a, Table 2; 2023b, Table 1; no config
    "Llama 2 7B": (4096, 32, 32, 32, 4096, 4096),  # Llama-2-7b-hf config.json
    "Llama 3.1 8B": (4096, 32, 8, 32, 131072, 131072),  # Grattafiori et al. 2024, Table 3, 3.4.2; config
    "Llama 3.1 70B": (8192, 64, 8, 80, 131072, 131072),
    "Llama 3.1 405B": (16384, 128, 8, 126, 131072, 131072),
    "PaLM 62B": (8192, 32, 1, 64, 2048, None),  # Chowdhery et al. 2023, Table 1, sections 2, 5; no config
    "Falcon-7B": (4544, 71, 1, 32, 2048, None),  # tiiuae/falcon-7b model card; its config.json sets no limit
    # 2024-2025, each from its config.json (hidden_size, num_attention_heads, num_key_value_heads,
    # num_hidden_layers, max_position_embeddings) and its report (the longest training sequences)
    "Gemma 2 27B": (4608, 32, 16, 46, 8192, 8192),
    "Gemma 3 27B": (5376, 32, 16, 62, 131072, 131072),  # 32K, then 128K at the end of pre-training
    "Llama 4 Scout": (5120, 40, 8, 48, 262144, 262144),  # the base checkpoint; trained at 256K (Meta)
    "Qwen3-8B": (4096, 32, 8, 36, 32768, 40960),  # 32,768 native (report); 40,960 the config's budget
    "Qwen3-235B-A22B": (4096, 64, 4, 94, 32768, 40960),
    "gpt-oss-20b": (2880, 64, 8, 24, 131072, 131072),
    "gpt-oss-120b": (2880, 64, 8, 36, 131072, 131072),
    "DeepSeek-V3": (7168, 128, None, 61, 131072, 163840),  # 4K, 32K, 128K (report 4.3); 163840 = 40 x 4096
    # 2025-2026 (configs_2026 in tests/unit/mha/costs/test_layers.py checks their kinds of layer); None where
    # the trained context could not be verified, or (MiniMax-M2) the two copies of the limit disagree
    "Qwen3-Next-80B-A3B": (2048, 16, 2, 48, None, 262144),
    "Qwen3.5-397B-A17B": (4096, 32, 2, 60, None, 262144),
    "DeepSeek-V3.2": (7168, 128, None, 61, 131072, 163840),  # 128K: the V3.2-Exp report, section 2
    "DeepSeek-V4-Flash": (4096, 64, 1, 43, None, 1048576),
    "DeepSeek-V4-Pro": (7168, 128, 1, 61, None, 1048576),
    "GLM-4.5": (5120, 96, 8, 92, None, 131072),
    "GLM-5": (6144, 64, None, 78, None, 202752),
    "Gemma 4 31B": (5376, 32, 4, 60, None, 262144),  # the full layers' 4 KV heads (sliding: 16)
    "Gemma 4 E2B": (1536, 8, 1, 35, None, 131072),
    "Kimi K2": (7168, 64, None, 61, None, 131072),
    "Kimi-Linear-48B-A3B": (2304, 32, None, 27, None, 1048576),  # model_max_length
    "MiniMax-M2": (3072, 48, 8, 62, None, None),
    "Llama 4 Maverick": (5120, 40, 8, 48, None, 1048576),
    "OLMo 3 7B": (4096, 32, 32, 32, None, 65536),
    "SmolLM3-3B": (2048, 16, 4, 36, 65536, 65536),  # smollm's long_context_32k_to_64.yaml
}

# Positions and norms: (positions, rope_theta, rope scaling as (kind, factor, original, in config.json),
# qk_norm, softcap, sinks), from the same config files, reports and model cards.
POSITIONS = {
    "Transformer base": ("sinusoidal", None, None, None, None, False),
    "BERT-base": ("learned", None, None, None, None, False),
    "GPT-2 small": ("learned", None, None, None, None, False),
    "T5-base": ("relative", None, None, None, None, False),
    "LLaMA 7B": ("rotary", 10000.0, None, None, None, False),
    "Llama 2 7B": ("rotary", 10000.0, None, None, None, False),
    "Llama 3.1 8B": ("rotary", 500000.0, ("llama3", 8.0, 8192, True), None, None, False),
    "Llama 3.1 405B": ("rotary", 500000.0, ("llama3", 8.0, 8192, True), None, None, False),
    "Mistral 7B": ("rotary", 10000.0, None, None, None, False),
    "PaLM 62B": ("rotary", None, None, None, None, False),  # no configuration published
    "Falcon-7B": ("rotary", 10000.0, None, None, None, False),
    "Gemma 2 27B": ("rotary", 10000.0, None, None, 50.0, False),
    "Gemma 3 27B": ("rotary", 1_000_000.0, ("linear", 8.0, None, True), "per head", None, False),
    "Llama 4 Scout": ("rotary", 500000.0, ("llama3", 8.0, 8192, True), "per head", None, False),
    "Qwen3-8B": ("rotary", 1_000_000.0, ("yarn", 4.0, 32768, False), "per head", None, False),  # the card
    "Qwen3-235B-A22B": ("rotary", 1_000_000.0, ("yarn", 4.0, 32768, False), "per head", None, False),
    "gpt-oss-20b": ("rotary", 150000.0, ("yarn", 32.0, 4096, True), None, None, True),
    "gpt-oss-120b": ("rotary", 150000.0, ("yarn", 32.0, 4096, True), None, None, True),
    "DeepSeek-V3": ("rotary", 10000.0, ("yarn", 40.0, 4096, True), None, None, False),
}


# What the cache needs: (head_dim, window, global_period, kv_latent, rope_dim, q_latent), from the same files
# (head_dim; sliding_window / attention_chunk_size; layer_types; kv_lora_rank, qk_rope_head_dim, q_lora_rank).
CACHE = {
    "Mistral 7B": (128, 4096, None, None, None, None),  # Jiang et al. 2023, Table 1: window_size 4096
    "Gemma 2 27B": (128, 4096, 2, None, None, None),
    "Gemma 3 27B": (128, 1024, 6, None, None, None),
    "Llama 4 Scout": (128, 8192, 4, None, None, None),
    "Qwen3-8B": (128, None, None, None, None, None),
    "Qwen3-235B-A22B": (128, None, None, None, None, None),
    "gpt-oss-20b": (64, 128, 2, None, None, None),
    "gpt-oss-120b": (64, 128, 2, None, None, None),
    "DeepSeek-V3": (128, None, None, 512, 64, 1536),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_facts(name):
    c = MODEL_CONFIGS[name]
    assert (c.d_model, c.h, c.n_kv_heads, c.n_layers, c.trained_context, c.max_context) == KNOWN[name]


def test_every_model_has_both_contexts_sourced():
    for c in MODEL_CONFIGS.values():
        assert c.name in KNOWN or c.name.startswith(("Transformer", "BERT", "GPT-2", "LLaMA")), c.name
        if c.trained_context is not None:  # the source says where the training length comes from
            assert any(w in c.source for w in ("context", "trained", "sequence", "tokens")), c.name
        if c.max_context is not None:  # ... and which field of which file gives the limit
            fields = ("max_position_embeddings", "n_positions", "n_ctx", "image_size", "(224/14)^2")
            assert any(w in c.source for w in fields), c.name


def test_the_longest_training_sequences_are_the_issues_list():
    trained = {name: MODEL_CONFIGS[name].trained_context for name in
               ("Llama 4 Scout", "DeepSeek-V3", "Qwen3-8B", "gpt-oss-120b", "Gemma 3 27B")}  # fmt: skip
    assert trained == {"Llama 4 Scout": 262144, "DeepSeek-V3": 131072, "Qwen3-8B": 32768,
                       "gpt-oss-120b": 131072, "Gemma 3 27B": 131072}  # fmt: skip
    deepseek = MODEL_CONFIGS["DeepSeek-V3"]
    assert deepseek.max_context == deepseek.rope_scaling.factor * deepseek.rope_scaling.original_context


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_positions_and_norms(name):
    c = MODEL_CONFIGS[name]
    positions, theta, scaling, qk_norm, softcap, sinks = POSITIONS[name]
    assert (c.positions, c.rope_theta, c.qk_norm, c.softcap, c.sinks) == (
        positions,
        theta,
        qk_norm,
        softcap,
        sinks,
    )
    if scaling is None:
        assert c.rope_scaling is None
    else:
        s = c.rope_scaling
        assert (s.kind, s.factor, s.original_context, s.in_config) == scaling
    assert (c.local_rope_theta, c.nope_period) == {
        "Gemma 3 27B": (10000.0, None), "Llama 4 Scout": (None, 4)
    }.get(name, (None, None))  # fmt: skip


# Models whose rotary pairs are not transformers' half-split (i, i + r/2), each from its reference code:
# neighbours (2i, 2i + 1) in apply_rotary_emb of Meta's models/llama4/model.py and of DeepSeek's
# inference/model.py (V3, V3.2-Exp, V4-Flash), Kimi K2 as DeepSeek-V3, GLM-5's rope_interleave; Gemma 4's
# proportional pairs. The rest of the rotary models: half-split (their family) or not stated (None).
ROPE_STYLE = {
    "Llama 4 Scout": "interleaved", "Llama 4 Maverick": "interleaved", "DeepSeek-V3": "interleaved",
    "DeepSeek-V3.2": "interleaved", "DeepSeek-V4-Flash": "interleaved", "DeepSeek-V4-Pro": "interleaved",
    "Kimi K2": "interleaved", "GLM-5": "interleaved", "Gemma 4 31B": "proportional",
    "Gemma 4 E2B": "proportional",
}  # fmt: skip


def test_rotary_styles_follow_the_reference_code():
    configs = MODEL_CONFIGS.values()
    styles = {c.name: c.rope_style for c in configs if c.rope_style not in (None, "half-split")}
    assert styles == ROPE_STYLE
    for name in ROPE_STYLE:  # each says where its pairing was read
        assert "interleave" in MODEL_CONFIGS[name].source or "proportional" in MODEL_CONFIGS[name].source


def test_every_rotary_model_names_its_positions_in_the_source():
    for c in MODEL_CONFIGS.values():
        assert (
            c.positions in c.source
            or (c.positions == "rotary" and "RoPE" in c.source)
            or (c.positions == "relative" and "relative position" in c.source)
        ), c.name
        if c.rope_scaling is not None:
            assert "rope_scaling" in c.source or "rescaled" in c.source, c.name


@pytest.mark.parametrize("name", sorted(CACHE))
def test_what_the_cache_needs(name):
    c = MODEL_CONFIGS[name]
    assert (c.head_dim, c.window, c.global_period, c.kv_latent, c.rope_dim, c.q_latent) == CACHE[name]
    assert c.d_k == c.head_dim


def test_layer_patterns_follow_layer_types():
    # transformers' configs: Gemma 3 "full_attention" iff (i + 1) % 6 == 0; gpt-oss and Gemma 2 alternate
    # sliding, full from layer 0; Llama 4 has no RoPE (full attention) in every 4th layer.
    gemma3 = MODEL_CONFIGS["Gemma 3 27B"].layer_windows
    assert [i for i, w in enumerate(gemma3) if w is None] == [5, 11, 17, 23, 29, 35, 41, 47, 53, 59]
    assert gemma3.count(1024) == 52
    assert MODEL_CONFIGS["gpt-oss-120b"].layer_windows == (128, None) * 18
    assert MODEL_CONFIGS["gpt-oss-20b"].layer_windows == (128, None) * 12
    assert MODEL_CONFIGS["Gemma 2 27B"].layer_windows == (4096, None) * 23
    assert MODEL_CONFIGS["Llama 4 Scout"].layer_windows == (8192, 8192, 8192, None) * 12
    assert MODEL_CONFIGS["Mistral 7B"].layer_windows == (4096,) * 32
    assert MODEL_CONFIGS["DeepSeek-V3"].layer_windows == (None,) * 61
    assert MODEL_CONFIGS["Gemma 3 27B"].pattern == "52 local (window 1024) + 10 global"
    assert MODEL_CONFIGS["Mistral 7B"].pattern == "32 local (window 4096)"


def test_cache_width_and_every_layer_global():
    assert MODEL_CONFIGS["Gemma 3 27B"].cache_width == 2 * 16 * 128
    assert MODEL_CONFIGS["DeepSeek-V3"].cache_width == 512 + 64
    full = MODEL_CONFIGS["Gemma 3 27B"].every_layer_global()
    assert full.layer_windows == (None,) * 62 and full.d_k == 128 and full.name == "Gemma 3 27B"


def test_the_per_head_baseline_of_latent_attention_counts_the_rotary_part():
    # one number for both chapters: DeepSeek-V3's 128 heads, keys of d_k + d_r = 128 + 64, values of 128
    v3, glm5, llama = MODEL_CONFIGS["DeepSeek-V3"], MODEL_CONFIGS["GLM-5"], MODEL_CONFIGS["Llama 2 7B"]
    assert v3.mha_cache_width == 128 * (128 + 64) + 128 * 128 == 40960
    assert glm5.mha_cache_width == 64 * (192 + 64) + 64 * 256  # v_head_dim 256
    assert llama.mha_cache_width == 2 * 32 * 128


def test_gpt3_head_width_is_128():
    assert MODEL_CONFIGS["GPT-3 175B"].d_k == 128  # Table 2.1's d_head


def test_head_widths_stated_by_the_sources():
    assert MODEL_CONFIGS["PaLM 62B"].d_k == 256  # "attention head size is always 256"
    assert MODEL_CONFIGS["Falcon-7B"].d_k == 64  # model card: head_dim 64
    assert MODEL_CONFIGS["Mistral 7B"].d_k == 128  # Table 1: head_dim 128


def test_table_covers_the_families_the_chapter_promises():
    assert len(MODEL_CONFIGS) >= 15
    names = " ".join(MODEL_CONFIGS)
    for family in (
        "Transformer",
        "BERT",
        "GPT-2",
        "GPT-3",
        "T5",
        "ViT",
        "LLaMA",
        "Llama 2",
        "Llama 3",
        "Mistral",
    ):
        assert family in names, family
    kinds = {c.attention for c in MODEL_CONFIGS.values()}
    assert kinds == {"MHA", "GQA", "MQA", "MLA"}


@pytest.mark.parametrize("config", MODEL_CONFIGS.values(), ids=list(MODEL_CONFIGS))
def test_every_entry_is_consistent_and_sourced(config):
    assert MODEL_CONFIGS[config.name] is config
    # the head width is d_model / h, or the source names it (head_dim, d_head, head size, d_h)
    assert config.d_k * config.h == config.d_model or "head_dim" in config.source
    assert config.n_kv_heads is None or config.h % config.n_kv_heads == 0
    assert len(config.source) > 20  # a paper with a table/section, or a URL
    assert any(s in config.source for s in ("Table", "section", "https://"))


NOT_LATENT = [c for c in MODEL_CONFIGS.values() if c.kv_latent is None]


@pytest.mark.parametrize("config", NOT_LATENT, ids=[c.name for c in NOT_LATENT])
def test_every_entry_builds_an_attention_layer(config):
    # the shapes are ones mha.MultiHeadAttention accepts (built on the meta device: no memory)
    import torch

    with torch.device("meta"):
        attn = mha.MultiHeadAttention(
            config.d_model, config.h, n_kv_heads=config.n_kv_heads, head_dim=config.head_dim
        )
    assert attn.d_k == config.d_k


def test_configs_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        MODEL_CONFIGS["BERT-base"].h = 8


def test_attention_kind_and_layer_count():
    assert MODEL_CONFIGS["Falcon-7B"].attention == "MQA"
    assert MODEL_CONFIGS["Llama 3.1 8B"].attention == "GQA"
    assert MODEL_CONFIGS["GPT-2 small"].attention == "MHA"
    assert MODEL_CONFIGS["T5-base"].n_attention_layers == 3 * 12
    assert MODEL_CONFIGS["GPT-2 small"].n_attention_layers == 12


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"d_model": 100, "h": 3}, "divisible by the number of heads h"),
        ({"h": 8, "n_kv_heads": 3}, "divisible by n_kv_heads"),
        ({"n_layers": 0}, "positive int"),
        ({"trained_context": 0}, "trained_context"),
        ({"max_context": 0}, "max_context"),
        ({"trained_context": 32, "max_context": 16}, "must not exceed max_context"),
        ({"positions": "alibi"}, "positions must be one of"),
        ({"positions": "learned", "rope_theta": 10000.0}, "rope_theta needs rotary positions"),
        ({"qk_norm": "per token"}, "qk_norm must be one of"),
        ({"softcap": 0.0}, "softcap must be a positive number"),
        ({"nope_period": 1}, "nope_period must be at least 2"),
        ({"local_rope_theta": 10000.0}, "local_rope_theta needs local layers"),
        ({"kind": "decoder-only"}, "kind"),
        ({"source": " "}, "source"),
    ],
)
def test_invalid_configs_are_rejected(kwargs, message):
    fields = dict(name="x", d_model=64, h=8, n_kv_heads=8, n_layers=2, trained_context=16, max_context=16,
                  kind="decoder", source="s", positions="rotary")  # fmt: skip
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**fields, **kwargs})


GEMMA3 = dict(
    name="Gemma 3 27B", d_model=5376, h=32, n_kv_heads=16, n_layers=62, trained_context=131072,
    max_context=131072, kind="decoder", source="s", head_dim=128, window=1024, global_period=6,
    positions="rotary",
)  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (
            {"window": 131073},
            ValueError,
            r"^Gemma 3 27B: window=131073 must not exceed the context limit 131072",
        ),
        (
            {"global_period": 1},
            ValueError,
            r"^Gemma 3 27B: global_period must be in 2\.\.n_layers=62 .*got 1$",
        ),
        (
            {"global_period": 63},
            ValueError,
            r"^Gemma 3 27B: global_period must be in 2\.\.n_layers=62 .*got 63$",
        ),
        ({"window": None}, ValueError, r"^Gemma 3 27B: global_period=6 needs a window"),
        ({"kv_latent": 512}, ValueError, r"^Gemma 3 27B: n_kv_heads must be None with kv_latent=512"),
        ({"n_kv_heads": None}, ValueError, r"^Gemma 3 27B: n_kv_heads must be a positive int"),
        ({"rope_dim": 64}, ValueError, r"^Gemma 3 27B: rope_dim and q_latent belong to latent attention"),
        ({"head_dim": 0}, ValueError, r"^Gemma 3 27B: head_dim must be a positive int"),
        ({"window": 0}, ValueError, r"^Gemma 3 27B: window must be a positive int"),
        ({"window": 10.5}, TypeError, r"^Gemma 3 27B: window must be a positive int"),
        (
            {"head_dim": None, "h": 100},
            ValueError,
            r"^Gemma 3 27B: d_model=5376 must be divisible .* or give head_dim",
        ),
    ],
)
def test_bad_windows_patterns_and_latents_name_the_model_and_the_field(changes, error, message):
    with pytest.raises(error, match=message):
        ModelConfig(**{**GEMMA3, **changes})


def test_one_global_layer_in_six_of_62_is_valid():
    assert ModelConfig(**GEMMA3).layer_windows.count(None) == 10  # 62 is no multiple of 6, and need not be
    assert ModelConfig(**{**GEMMA3, "global_period": 62}).layer_windows.count(None) == 1


def test_table_renders_every_model_in_both_formats():
    text = configs_table()
    lines = text.splitlines()
    assert len(lines) == 2 + len(MODEL_CONFIGS)
    assert "| GPT-3 175B" in text and "12288" in text
    html = configs_table(fmt="html")
    assert html.count("<tr>") == 1 + len(MODEL_CONFIGS)
    assert "<td>Llama 2 70B</td>" in html
    with pytest.raises(ValueError, match="fmt"):
        configs_table(fmt="latex")


def test_table_of_a_subset():
    subset = {k: MODEL_CONFIGS[k] for k in ("BERT-base", "ViT-H/14")}
    header, _, *rows = configs_table(subset).splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")]
    cells = {r.strip("|").split("|")[0].strip(): [c.strip() for c in r.strip("|").split("|")] for r in rows}
    assert sorted(cells) == ["BERT-base", "ViT-H/14"]
    assert cells["ViT-H/14"][columns.index("d_k")] == "80"
    assert cells["BERT-base"][columns.index("trained context")] == "512"
    header, _, *rows = configs_table(subset, columns=TOPICS["positions"]).splitlines()
    assert [c.strip() for c in header.strip("|").split("|")] == list(TOPICS["positions"])
    with pytest.raises(ValueError, match="columns"):
        configs_table(subset, columns=("model", "context"))


def test_rows_hold_the_table_as_data():
    rows = config_rows()
    assert [r["model"] for r in rows] == list(MODEL_CONFIGS)
    assert all(tuple(r) == COLUMNS for r in rows)
    for row, c in zip(rows, MODEL_CONFIGS.values(), strict=True):
        shape = (c.d_model, c.h, "—" if c.n_kv_heads is None else c.n_kv_heads, c.d_k)
        assert (row["d_model"], row["h"], row["n_kv_heads"], row["d_k"]) == shape
        assert row["window"] == ("—" if c.window is None else c.window)
        assert (row["attention"], row["layers"], row["kind"]) == (c.attention, c.n_layers, c.kind)
        assert row["trained context"] == ("—" if c.trained_context is None else c.trained_context)
        assert row["max context"] == ("—" if c.max_context is None else c.max_context)
    (vit,) = config_rows({"ViT-H/14": MODEL_CONFIGS["ViT-H/14"]})
    assert (vit["d_k"], vit["trained context"], vit["max context"]) == (80, 257, 257)
    by_name = {r["model"]: r for r in rows}
    gemma, deepseek, mistral = by_name["Gemma 3 27B"], by_name["DeepSeek-V3"], by_name["Mistral 7B"]
    assert (gemma["d_k"], gemma["window"], gemma["layer kinds"], gemma["latent"]) == (
        128,
        1024,
        "52 local (window 1024) + 10 global",
        "—",
    )
    assert (deepseek["n_kv_heads"], deepseek["attention"], deepseek["latent"]) == ("—", "MLA", "512 + 64")
    assert (mistral["window"], mistral["layer kinds"]) == (4096, "32 local (window 4096)")
    assert by_name["DeepSeek-V3.2"]["latent"] == "512 + 64 + 128 index"
    assert by_name["Gemma 4 31B"]["positions"] == "rotary 0.25, proportional"
    assert (by_name["Qwen3-Next-80B-A3B"]["gate"], by_name["Qwen3-Next-80B-A3B"]["layer kinds"]) == (
        "yes", "36 linear (gated delta) + 12 global"
    )  # fmt: skip
    assert (gemma["rope base"], gemma["rope scaling"], gemma["QK-norm"]) == (
        "1M (10k local)",
        "linear x8, global layers",  # the full layers only (transformers' Gemma3TextConfig)
        "per head",
    )
    scout, qwen = by_name["Llama 4 Scout"], by_name["Qwen3-8B"]
    positions = "rotary, interleaved, none 1 in 4"  # the style from its family, Llama 4 (mha.families)
    assert (scout["positions"], scout["rope scaling"]) == (positions, "llama3 x8 from 8192")
    assert qwen["rope scaling"] == "yarn x4 from 32768 (card)"  # recommended by the card, not shipped
    assert (by_name["Gemma 2 27B"]["soft-cap"], by_name["gpt-oss-20b"]["sinks"]) == ("50", "yes")
    assert all(t[0] == "model" for t in TOPICS.values())  # each table names its models


def test_rows_make_a_data_frame():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(config_rows()).set_index("model")
    assert list(frame.columns) == list(COLUMNS[1:])
    assert frame.loc["GPT-3 175B", "d_k"] == 128
    decoupled = frame.d_model != frame.h * frame.d_k  # the models that set the head width apart
    assert sorted(frame.index[decoupled]) == [
        "DeepSeek-V3", "DeepSeek-V3.2", "DeepSeek-V4-Flash", "DeepSeek-V4-Pro", "GLM-4.5", "GLM-5",
        "Gemma 2 27B", "Gemma 3 27B", "Gemma 4 31B", "Gemma 4 E2B", "Kimi K2", "Kimi-Linear-48B-A3B",
        "MiniMax-M2", "Qwen3-235B-A22B", "Qwen3-Next-80B-A3B", "Qwen3.5-397B-A17B", "gpt-oss-120b",
        "gpt-oss-20b",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "dynamic"}, "kind must be one of"),
        ({"factor": 0.0}, "factor must be a positive number"),
        ({"kind": "llama3", "original_context": 8192}, "llama3 scaling needs"),
        ({"kind": "llama3", "original_context": 8192, "low_freq_factor": 4.0, "high_freq_factor": 1.0},
         "high_freq_factor must be at least"),
        ({"kind": "yarn", "original_context": None}, "yarn scaling needs original_context"),
        ({"kind": "linear", "beta_fast": 32.0}, "belong to yarn"),
        ({"kind": "yarn", "original_context": 4096, "low_freq_factor": 1.0}, "belong to llama3"),
        ({"original_context": 0}, "original_context must be a positive int"),
    ],
)  # fmt: skip
def test_bad_rope_scalings_name_the_field(kwargs, message):
    fields = {"kind": "linear", "factor": 8.0, "original_context": None, **kwargs}
    with pytest.raises(ValueError, match=message):
        RopeScaling(**fields)


def test_rope_scaling_options_and_text():
    c = MODEL_CONFIGS["gpt-oss-120b"].rope_scaling
    assert c.options == {"kind": "yarn", "factor": 32.0, "original_context": 4096, "beta_fast": 32.0,
                         "beta_slow": 1.0, "truncate": False}  # fmt: skip
    assert str(c) == "yarn x32 from 4096"  # every layer, sliding and full
    # OLMo 3 stretches its full layers only (OLMo-core's with_rope_scaling(full_attn_layers_only=True));
    # DeepSeek-V4-Flash its compressed ones (inference/model.py: no YaRN on the window-only layers)
    scaled = {
        n: MODEL_CONFIGS[n].rope_scaling.layers for n in ("OLMo 3 7B", "Gemma 3 27B", "DeepSeek-V4-Flash")
    }
    assert scaled == {"OLMo 3 7B": "full", "Gemma 3 27B": "full", "DeepSeek-V4-Flash": "compressed"}
    assert str(MODEL_CONFIGS["OLMo 3 7B"].rope_scaling) == "yarn x8 from 8192, global layers"
    with pytest.raises(ValueError, match="rope_scaling layers must be one of"):
        RopeScaling("linear", 8.0, None, layers="global")
    with pytest.raises(ValueError, match="rope_scaling layers='full' must be one of the model's kinds"):
        ModelConfig(**{**GEMMA3, "window": None, "global_period": None, "local_rope_theta": None,
                       "rope_scaling": RopeScaling("linear", 8.0, None, layers="full")})  # fmt: skip
    with pytest.raises(TypeError, match="rope_scaling must be a RopeScaling"):
        ModelConfig(**{**GEMMA3, "rope_scaling": {"rope_type": "linear"}})
