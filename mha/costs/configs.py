"""Attention shapes of well-known Transformers, each with the primary source it was checked against.

One source of truth for the chapter "Typical configurations": the numbers in its table, its plots and its
calculator are all read from :data:`MODEL_CONFIGS`. Only the attention-relevant hyperparameters are kept.
Every model here has ``d_model == h * d_k``; models that decouple the two (T5-3B/11B, PaLM 540B) are left
out on purpose, because :class:`mha.MultiHeadAttention` ties them.

Shape legend:
    d_model  model width
    h        number of query heads
    h_kv     number of key/value heads (``n_kv_heads``)
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from mha._checks import check_heads, check_positive_int

KINDS = ("encoder-decoder", "encoder", "decoder")


@dataclass(frozen=True)
class ModelConfig:
    """The attention hyperparameters of one published model."""

    name: str  # the model's usual name, e.g. "GPT-2 XL"
    d_model: int  # width of the residual stream, the input and output of every attention layer
    h: int  # query heads per attention layer
    n_kv_heads: int  # key/value heads: h for multi-head, 1 < n_kv_heads < h grouped-query, 1 multi-query
    n_layers: int  # Transformer blocks per stack (encoder-decoder models have this many in each stack)
    context: int | None  # longest sequence the model was trained for, in tokens; None = no fixed limit
    kind: str  # "decoder" (causal, uses a KV cache), "encoder", or "encoder-decoder"
    source: str  # where each number was checked: paper and table/section, or config-file URL

    def __post_init__(self) -> None:
        try:
            check_heads(self.d_model, self.h, self.n_kv_heads)
            check_positive_int("n_layers", self.n_layers)
            if self.context is not None:
                check_positive_int("context", self.context)
        except (TypeError, ValueError) as error:  # the same check as everywhere, naming the model
            raise type(error)(f"{self.name}: {error}") from None
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.source.strip():
            raise ValueError(f"{self.name}: every config needs a source")

    @property
    def d_k(self) -> int:
        """Width of one head, ``d_model // h``."""
        return self.d_model // self.h

    @property
    def attention(self) -> str:
        """``"MHA"``, ``"GQA"`` or ``"MQA"``, from the number of key/value heads."""
        if self.n_kv_heads == self.h:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def n_attention_layers(self) -> int:
        """Attention layers in the whole model: an encoder-decoder has self-attention in both stacks and
        cross-attention in the decoder, so three per block."""
        return 3 * self.n_layers if self.kind == "encoder-decoder" else self.n_layers


_GPT2 = "https://huggingface.co/openai-community/{}/blob/main/config.json (n_embd, n_head, n_layer, n_ctx)"
_LLAMA2 = (
    "https://huggingface.co/meta-llama/{}/blob/main/config.json (hidden_size, num_attention_heads, "
    "num_key_value_heads, num_hidden_layers); context and GQA: Touvron et al. 2023b, Table 1"
)
_LLAMA31 = (
    "Grattafiori et al. 2024, Table 3; context: max_position_embeddings in "
    "https://huggingface.co/meta-llama/{}/blob/main/config.json"
)

MODEL_CONFIGS: dict[str, ModelConfig] = {
    c.name: c
    for c in (
        # name, d_model, h, n_kv_heads, n_layers, context, kind, source
        ModelConfig(
            "Transformer base", 512, 8, 8, 6, None, "encoder-decoder",
            "Vaswani et al. 2017, Table 3 (base: N=6, d_model=512, h=8, d_k=64); sinusoidal positions",
        ),
        ModelConfig(
            "Transformer big", 1024, 16, 16, 6, None, "encoder-decoder",
            "Vaswani et al. 2017, Table 3 (big: N=6, d_model=1024, h=16); sinusoidal positions",
        ),
        ModelConfig(
            "BERT-base", 768, 12, 12, 12, 512, "encoder",
            "Devlin et al. 2019, section 3 (L=12, H=768, A=12); context: max_position_embeddings=512 in "
            "https://huggingface.co/google-bert/bert-base-uncased/blob/main/config.json",
        ),
        ModelConfig(
            "BERT-large", 1024, 16, 16, 24, 512, "encoder",
            "Devlin et al. 2019, section 3 (L=24, H=1024, A=16); context: max_position_embeddings=512 in "
            "https://huggingface.co/google-bert/bert-large-uncased/blob/main/config.json",
        ),
        ModelConfig("GPT-2 small", 768, 12, 12, 12, 1024, "decoder", _GPT2.format("gpt2")),
        ModelConfig("GPT-2 medium", 1024, 16, 16, 24, 1024, "decoder", _GPT2.format("gpt2-medium")),
        ModelConfig("GPT-2 large", 1280, 20, 20, 36, 1024, "decoder", _GPT2.format("gpt2-large")),
        ModelConfig("GPT-2 XL", 1600, 25, 25, 48, 1024, "decoder", _GPT2.format("gpt2-xl")),
        ModelConfig(
            "GPT-3 175B", 12288, 96, 96, 96, 2048, "decoder",
            "Brown et al. 2020, Table 2.1 (n_layers=96, d_model=12288, n_heads=96, d_head=128); context: "
            "n_ctx=2048 tokens for all models, section 2.1",
        ),
        ModelConfig(
            "T5-base", 768, 12, 12, 12, 512, "encoder-decoder",
            "Raffel et al. 2020, section 3.1.1 (12 blocks per stack, d_model=768, 12 heads, d_kv=64); "
            "https://huggingface.co/google-t5/t5-base/blob/main/config.json; context: 512-token inputs, "
            "section 3.1.2",
        ),
        ModelConfig(
            "T5-large", 1024, 16, 16, 24, 512, "encoder-decoder",
            "Raffel et al. 2020, section 3.7 (d_model=1024, 16 heads, d_kv=64, 24 layers per stack); "
            "https://huggingface.co/google-t5/t5-large/blob/main/config.json; context: 512-token inputs, "
            "section 3.1.2",
        ),
        ModelConfig(
            "ViT-B/16", 768, 12, 12, 12, 197, "encoder",
            "Dosovitskiy et al. 2021, Table 1 (ViT-Base: 12 layers, hidden 768, 12 heads); context: "
            "(224/16)^2 patches + [class] = 197 tokens at the 224x224 pre-training resolution",
        ),
        ModelConfig(
            "ViT-H/14", 1280, 16, 16, 32, 257, "encoder",
            "Dosovitskiy et al. 2021, Table 1 (ViT-Huge: 32 layers, hidden 1280, 16 heads); context: "
            "(224/14)^2 patches + [class] = 257 tokens at 224x224",
        ),
        ModelConfig(
            "LLaMA 7B", 4096, 32, 32, 32, 2048, "decoder",
            "Touvron et al. 2023a, Table 2 (dimension 4096, 32 heads, 32 layers); context: Touvron et al. "
            "2023b, Table 1",
        ),
        ModelConfig(
            "LLaMA 65B", 8192, 64, 64, 80, 2048, "decoder",
            "Touvron et al. 2023a, Table 2 (dimension 8192, 64 heads, 80 layers); context: Touvron et al. "
            "2023b, Table 1",
        ),
        ModelConfig("Llama 2 7B", 4096, 32, 32, 32, 4096, "decoder", _LLAMA2.format("Llama-2-7b-hf")),
        ModelConfig("Llama 2 70B", 8192, 64, 8, 80, 4096, "decoder", _LLAMA2.format("Llama-2-70b-hf")),
        ModelConfig("Llama 3.1 8B", 4096, 32, 8, 32, 131072, "decoder", _LLAMA31.format("Llama-3.1-8B")),
        ModelConfig("Llama 3.1 70B", 8192, 64, 8, 80, 131072, "decoder", _LLAMA31.format("Llama-3.1-70B")),
        ModelConfig(
            "Llama 3.1 405B", 16384, 128, 8, 126, 131072, "decoder", _LLAMA31.format("Llama-3.1-405B")
        ),
        ModelConfig(
            "Mistral 7B", 4096, 32, 8, 32, 8192, "decoder",
            "Jiang et al. 2023, Table 1 (dim 4096, n_layers 32, head_dim 128, n_heads 32, n_kv_heads 8, "
            "context_len 8192, window_size 4096: a sliding window, so its rolling-buffer KV cache keeps at "
            "most 4096 tokens, section 2)",
        ),
        ModelConfig(
            "PaLM 62B", 8192, 32, 1, 64, 2048, "decoder",
            "Chowdhery et al. 2023, Table 1 (64 layers, 32 heads, d_model 8192; head size 256), section 2 "
            "(multi-query attention) and section 5 (sequence length 2048)",
        ),
        ModelConfig(
            "Falcon-7B", 4544, 71, 1, 32, 2048, "decoder",
            "https://huggingface.co/tiiuae/falcon-7b (model card, table 'Model Architecture and Objective': "
            "32 layers, d_model 4544, head_dim 64, sequence length 2048, multiquery); 71 heads: n_head in "
            "https://huggingface.co/tiiuae/falcon-7b/blob/main/config.json",
        ),
    )
}  # fmt: skip


def get_config(model: str | ModelConfig, *, decoder_only: bool = False) -> ModelConfig:
    """Look a model up by name in :data:`MODEL_CONFIGS` (a ``ModelConfig`` is returned as it is).

    Args:
        model: a name in :data:`MODEL_CONFIGS` or a ``ModelConfig``.
        decoder_only: require a decoder-only model (one that keeps a key/value cache).

    Raises:
        KeyError: an unknown name. ValueError: not decoder-only when ``decoder_only`` is set.
    """
    config = MODEL_CONFIGS.get(model) if isinstance(model, str) else model
    if not isinstance(config, ModelConfig):
        known = [n for n, c in MODEL_CONFIGS.items() if c.kind == "decoder" or not decoder_only]
        raise KeyError(f"unknown model {model!r}; known models: {', '.join(known)}")
    if decoder_only and config.kind != "decoder":
        raise ValueError(f"{config.name} is an {config.kind} model; only decoder-only models keep a KV cache")
    return config


COLUMNS = ("model", "kind", "d_model", "h", "n_kv_heads", "d_k", "attention", "layers", "context")


def config_rows(configs: dict[str, ModelConfig] | None = None) -> list[dict[str, str | int]]:
    """Configurations as table rows, one dict per model with the keys :data:`COLUMNS`, ready for
    ``pandas.DataFrame(config_rows()).set_index("model")``.

    Args:
        configs: the models to show; defaults to :data:`MODEL_CONFIGS`.

    Returns:
        Rows with the name and kind, the integer shapes (``d_k`` computed), the attention kind (``"MHA"``,
        ``"GQA"`` or ``"MQA"``), ``layers`` (per stack) and ``context``, which is ``"—"`` where the model has
        no fixed limit (so that a table column of contexts stays readable, not floats with a NaN).
    """
    configs = MODEL_CONFIGS if configs is None else configs
    return [
        {
            "model": c.name,
            "kind": c.kind,
            "d_model": c.d_model,
            "h": c.h,
            "n_kv_heads": c.n_kv_heads,
            "d_k": c.d_k,
            "attention": c.attention,
            "layers": c.n_layers,
            "context": "—" if c.context is None else c.context,
        }
        for c in configs.values()
    ]


def configs_table(configs: dict[str, ModelConfig] | None = None, *, fmt: str = "markdown") -> str:
    """Render configurations as a table, one row per model, columns computed from the data.

    Args:
        configs: the models to show; defaults to :data:`MODEL_CONFIGS`.
        fmt: ``"markdown"`` (plain text that reads well in a terminal too) or ``"html"``.

    Returns:
        The table of :func:`config_rows` as a string, with the columns :data:`COLUMNS`.
    """
    header = list(COLUMNS)
    rows = [[str(v) for v in row.values()] for row in config_rows(configs)]
    if fmt == "html":
        head = "".join(f"<th>{html.escape(x)}</th>" for x in header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in row) + "</tr>" for row in rows)
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    if fmt != "markdown":
        raise ValueError(f"fmt must be 'markdown' or 'html', got {fmt!r}")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        # text columns to the left, numbers to the right
        padded = [
            c.ljust(w) if i < 2 or i == 6 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
