"""mha.costs.configs: the model table is consistent, frozen, sourced, and renders."""

import dataclasses

import pytest

import mha
from mha.costs.configs import COLUMNS, MODEL_CONFIGS, ModelConfig, config_rows, configs_table

# Spot checks against the primary sources named in each entry (the list of facts to get right).
KNOWN = {
    # name: (d_model, h, n_kv_heads, n_layers, context)
    "Transformer base": (512, 8, 8, 6, None),  # Vaswani et al. 2017, Table 3
    "BERT-base": (768, 12, 12, 12, 512),  # Devlin et al. 2019, section 3
    "BERT-large": (1024, 16, 16, 24, 512),
    "GPT-2 XL": (1600, 25, 25, 48, 1024),  # gpt2-xl config.json
    "GPT-3 175B": (12288, 96, 96, 96, 2048),  # Brown et al. 2020, Table 2.1
    "Llama 2 70B": (8192, 64, 8, 80, 4096),  # Llama-2-70b-hf config.json; Touvron et al. 2023b, Table 1
    "Mistral 7B": (4096, 32, 8, 32, 8192),  # Jiang et al. 2023, Table 1
    "GPT-2 small": (768, 12, 12, 12, 1024),  # gpt2 config.json
    "T5-base": (768, 12, 12, 12, 512),  # Raffel et al. 2020, sections 3.1.1 and 3.1.2
    "T5-large": (1024, 16, 16, 24, 512),  # Raffel et al. 2020, section 3.7
    "ViT-B/16": (768, 12, 12, 12, 197),  # Dosovitskiy et al. 2021, Table 1; (224/16)^2 + 1 tokens
    "ViT-H/14": (1280, 16, 16, 32, 257),  # Dosovitskiy et al. 2021, Table 1; (224/14)^2 + 1 tokens
    "LLaMA 7B": (4096, 32, 32, 32, 2048),  # Touvron et al. 2023a, Table 2; 2023b, Table 1
    "Llama 2 7B": (4096, 32, 32, 32, 4096),  # Llama-2-7b-hf config.json
    "Llama 3.1 8B": (4096, 32, 8, 32, 131072),  # Grattafiori et al. 2024, Table 3; config.json
    "Llama 3.1 70B": (8192, 64, 8, 80, 131072),
    "Llama 3.1 405B": (16384, 128, 8, 126, 131072),
    "PaLM 62B": (8192, 32, 1, 64, 2048),  # Chowdhery et al. 2023, Table 1 (head size 256), sections 2, 5
    "Falcon-7B": (4544, 71, 1, 32, 2048),  # tiiuae/falcon-7b model card and config.json
    # 2024-2025, each from its config.json (hidden_size, num_attention_heads, num_key_value_heads,
    # num_hidden_layers, max_position_embeddings)
    "Gemma 2 27B": (4608, 32, 16, 46, 8192),
    "Gemma 3 27B": (5376, 32, 16, 62, 131072),
    "Llama 4 Scout": (5120, 40, 8, 48, 10485760),
    "Qwen3-8B": (4096, 32, 8, 36, 40960),
    "Qwen3-235B-A22B": (4096, 64, 4, 94, 40960),
    "gpt-oss-20b": (2880, 64, 8, 24, 131072),
    "gpt-oss-120b": (2880, 64, 8, 36, 131072),
    "DeepSeek-V3": (7168, 128, None, 61, 163840),
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
    assert (c.d_model, c.h, c.n_kv_heads, c.n_layers, c.context) == KNOWN[name]


@pytest.mark.parametrize("name", sorted(CACHE))
def test_what_the_cache_needs(name):
    c = MODEL_CONFIGS[name]
    assert (c.head_dim, c.window, c.global_period, c.kv_latent, c.rope_dim, c.q_latent) == CACHE[name]
    assert c.d_k == c.head_dim


def test_the_existing_23_models_are_kept_and_the_new_ones_added():
    assert len(MODEL_CONFIGS) == 23 + 8
    assert set(CACHE) - {"Mistral 7B"} <= set(MODEL_CONFIGS)


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
        ({"context": 0}, "context"),
        ({"kind": "decoder-only"}, "kind"),
        ({"source": " "}, "source"),
    ],
)
def test_invalid_configs_are_rejected(kwargs, message):
    fields = dict(name="x", d_model=64, h=8, n_kv_heads=8, n_layers=2, context=16, kind="decoder", source="s")
    with pytest.raises(ValueError, match=message):
        ModelConfig(**{**fields, **kwargs})


GEMMA3 = dict(
    name="Gemma 3 27B", d_model=5376, h=32, n_kv_heads=16, n_layers=62, context=131072, kind="decoder",
    source="s", head_dim=128, window=1024, global_period=6,
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
    assert cells["BERT-base"][columns.index("context")] == "512"


def test_rows_hold_the_table_as_data():
    rows = config_rows()
    assert [r["model"] for r in rows] == list(MODEL_CONFIGS)
    assert all(tuple(r) == COLUMNS for r in rows)
    for row, c in zip(rows, MODEL_CONFIGS.values(), strict=True):
        shape = (c.d_model, c.h, "—" if c.n_kv_heads is None else c.n_kv_heads, c.d_k)
        assert (row["d_model"], row["h"], row["n_kv_heads"], row["d_k"]) == shape
        assert row["window"] == ("—" if c.window is None else c.window)
        assert (row["attention"], row["layers"], row["kind"]) == (c.attention, c.n_layers, c.kind)
        assert row["context"] == ("—" if c.context is None else c.context)
    (vit,) = config_rows({"ViT-H/14": MODEL_CONFIGS["ViT-H/14"]})
    assert (vit["d_k"], vit["context"]) == (80, 257)
    by_name = {r["model"]: r for r in rows}
    gemma, deepseek, mistral = by_name["Gemma 3 27B"], by_name["DeepSeek-V3"], by_name["Mistral 7B"]
    assert (gemma["d_k"], gemma["window"], gemma["global layers"], gemma["latent"]) == (
        128,
        1024,
        "1 in 6",
        "—",
    )
    assert (deepseek["n_kv_heads"], deepseek["attention"], deepseek["latent"]) == ("—", "MLA", "512 + 64")
    assert (mistral["window"], mistral["global layers"]) == (4096, "none")


def test_rows_make_a_data_frame():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(config_rows()).set_index("model")
    assert list(frame.columns) == list(COLUMNS[1:])
    assert frame.loc["GPT-3 175B", "d_k"] == 128
    decoupled = frame.d_model != frame.h * frame.d_k  # the models that set the head width apart
    assert sorted(frame.index[decoupled]) == [
        "DeepSeek-V3", "Gemma 2 27B", "Gemma 3 27B", "Qwen3-235B-A22B", "gpt-oss-120b", "gpt-oss-20b"
    ]  # fmt: skip
