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
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_facts(name):
    c = MODEL_CONFIGS[name]
    assert (c.d_model, c.h, c.n_kv_heads, c.n_layers, c.context) == KNOWN[name]


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
    assert kinds == {"MHA", "GQA", "MQA"}


@pytest.mark.parametrize("config", MODEL_CONFIGS.values(), ids=list(MODEL_CONFIGS))
def test_every_entry_is_consistent_and_sourced(config):
    assert MODEL_CONFIGS[config.name] is config
    assert config.d_k * config.h == config.d_model
    assert config.h % config.n_kv_heads == 0
    assert len(config.source) > 20  # a paper with a table/section, or a URL
    assert any(s in config.source for s in ("Table", "section", "https://"))


@pytest.mark.parametrize("config", MODEL_CONFIGS.values(), ids=list(MODEL_CONFIGS))
def test_every_entry_builds_an_attention_layer(config):
    # the shapes are ones mha.MultiHeadAttention accepts (built on the meta device: no memory)
    import torch

    with torch.device("meta"):
        attn = mha.MultiHeadAttention(config.d_model, config.h, n_kv_heads=config.n_kv_heads)
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
        shape = (c.d_model, c.h, c.n_kv_heads, c.d_k)
        assert (row["d_model"], row["h"], row["n_kv_heads"], row["d_k"]) == shape
        assert (row["attention"], row["layers"], row["kind"]) == (c.attention, c.n_layers, c.kind)
        assert row["context"] == ("—" if c.context is None else c.context)
    (vit,) = config_rows({"ViT-H/14": MODEL_CONFIGS["ViT-H/14"]})
    assert (vit["d_k"], vit["context"]) == (80, 257)


def test_rows_make_a_data_frame():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(config_rows()).set_index("model")
    assert list(frame.columns) == list(COLUMNS[1:])
    assert frame.loc["GPT-3 175B", "d_k"] == 128
    assert (frame.d_model == frame.h * frame.d_k).all()
