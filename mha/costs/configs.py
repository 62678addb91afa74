"""Attention shapes of well-known Transformers, each with the primary source it was checked against.

One source of truth for the chapter "Typical configurations": the numbers in its table, its plots and its
calculator are all read from :data:`MODEL_CONFIGS`. Only the attention-relevant hyperparameters are kept,
with what the key/value cache needs: the head width where a model sets it apart from ``d_model / h`` (most
models of 2025 do), the sliding window of local layers and the pattern of local and global layers, and the
widths that latent attention caches instead of keys and values.

Shape legend:
    d_model  model width
    h        number of query heads
    h_kv     number of key/value heads (``n_kv_heads``)
    d_k      width of each head: d_model / h unless a model sets it apart (``head_dim``)
    w        the window of a local layer: it attends to (and caches) the last w tokens only
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace

from mha._checks import check_heads, check_positive_int

KINDS = ("encoder-decoder", "encoder", "decoder")


@dataclass(frozen=True)
class ModelConfig:
    """The attention hyperparameters of one published model, and the shape of its key/value cache.

    A layer is *global* (it attends to, and caches, every earlier token) or *local* (only the last
    ``window`` tokens: a sliding window, or Llama 4's chunks, counted the same way for the cache). Without
    ``window`` every layer is global; with ``window`` and no ``global_period`` every layer is local
    (Mistral 7B); with both, layer ``i`` (0-based) is global iff ``(i + 1) % global_period == 0``, as the
    ``layer_types`` of Gemma 2 and 3, gpt-oss and Llama 4 say. Latent attention (DeepSeek-V3) caches one
    latent of width ``kv_latent`` and one rotary key of width ``rope_dim`` per token and layer, shared by
    all heads, instead of keys and values per head: it has no ``n_kv_heads``.

    Raises:
        TypeError, ValueError: a field of the wrong type or value; the message names the model and the field.
    """

    name: str  # the model's usual name, e.g. "GPT-2 XL"
    d_model: int  # width of the residual stream, the input and output of every attention layer
    h: int  # query heads per attention layer
    n_kv_heads: int | None  # key/value heads: h MHA, 1 < n_kv_heads < h GQA, 1 MQA; None: latent attention
    n_layers: int  # Transformer blocks per stack (encoder-decoder models have this many in each stack)
    context: int | None  # longest sequence the model was trained for, in tokens; None = no fixed limit
    kind: str  # "decoder" (causal, uses a KV cache), "encoder", or "encoder-decoder"
    source: str  # where each number was checked: paper and table/section, or config-file URL
    head_dim: int | None = None  # width d_k of each head; None: d_model / h (then h must divide d_model)
    window: int | None = None  # tokens a local layer attends to and caches; None: every layer is global
    global_period: int | None = None  # with window: layer i is global iff (i + 1) % period == 0; None: none
    kv_latent: int | None = None  # latent attention: width of the cached key/value latent (kv_lora_rank)
    rope_dim: int | None = None  # latent attention: width of the cached rotary key (qk_rope_head_dim)
    q_latent: int | None = None  # latent attention: width of the query latent (q_lora_rank); None: none

    def __post_init__(self) -> None:
        try:
            self._check()
        except (TypeError, ValueError) as error:  # the same checks as everywhere, naming the model
            raise type(error)(f"{self.name}: {error}") from None
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.source.strip():
            raise ValueError(f"{self.name}: every config needs a source")

    def _check(self) -> None:
        latent = self.kv_latent is not None
        if latent and self.n_kv_heads is not None:
            raise ValueError(
                f"n_kv_heads must be None with kv_latent={self.kv_latent}: latent attention caches one "
                f"latent shared by all heads, got n_kv_heads={self.n_kv_heads}"
            )
        if not latent and self.n_kv_heads is None:
            raise ValueError("n_kv_heads must be a positive int (None only with kv_latent, latent attention)")
        if not latent and (self.rope_dim is not None or self.q_latent is not None):
            raise ValueError("rope_dim and q_latent belong to latent attention: give kv_latent too")
        if latent:
            check_positive_int("kv_latent", self.kv_latent)
            if self.rope_dim is not None:
                check_positive_int("rope_dim", self.rope_dim)
            if self.q_latent is not None:
                check_positive_int("q_latent", self.q_latent)
        _, _, d_k = check_heads(self.d_model, self.h, self.n_kv_heads, head_dim=self.head_dim)
        object.__setattr__(self, "head_dim", d_k)  # the old derivation, d_model / h, where none is given
        check_positive_int("n_layers", self.n_layers)
        if self.context is not None:
            check_positive_int("context", self.context)
        if self.window is not None:
            check_positive_int("window", self.window)
            if self.context is not None and self.window > self.context:
                raise ValueError(f"window={self.window} must not exceed the context limit {self.context}")
        if self.global_period is not None:
            if self.window is None:
                raise ValueError(f"global_period={self.global_period} needs a window for the local layers")
            check_positive_int("global_period", self.global_period)
            if not 2 <= self.global_period <= self.n_layers:
                raise ValueError(
                    f"global_period must be in 2..n_layers={self.n_layers} (one global layer in every "
                    f"global_period), got {self.global_period}"
                )

    @property
    def d_k(self) -> int:
        """Width of one head, ``head_dim`` (``d_model // h`` unless the model sets it apart)."""
        return self.head_dim

    @property
    def attention(self) -> str:
        """``"MHA"``, ``"GQA"``, ``"MQA"`` from the number of key/value heads, or ``"MLA"`` (latent)."""
        if self.kv_latent is not None:
            return "MLA"
        if self.n_kv_heads == self.h:
            return "MHA"
        return "MQA" if self.n_kv_heads == 1 else "GQA"

    @property
    def layer_windows(self) -> tuple[int | None, ...]:
        """Per layer (0-based), the tokens it caches at most: ``window`` for a local layer, ``None`` for a
        global one."""
        if self.window is None:
            return (None,) * self.n_layers
        p = self.global_period
        return tuple(
            None if p is not None and (i + 1) % p == 0 else self.window for i in range(self.n_layers)
        )

    @property
    def cache_width(self) -> int:
        """Values cached per token and layer: a key and a value per key/value head, ``2 h_kv d_k``, or for
        latent attention the latent and the rotary key, ``kv_latent + rope_dim``."""
        if self.kv_latent is not None:
            return self.kv_latent + (self.rope_dim or 0)
        return 2 * self.n_kv_heads * self.d_k

    @property
    def pattern(self) -> str:
        """The local/global layers in words, e.g. ``"52 local (window 1024) + 10 global"``."""
        windows = self.layer_windows
        local = sum(w is not None for w in windows)
        if not local:
            return f"{self.n_layers} global"
        text = f"{local} local (window {self.window})"
        return text if local == self.n_layers else f"{text} + {self.n_layers - local} global"

    def every_layer_global(self) -> ModelConfig:
        """The same model with no local layers: what its cache would be if every layer saw every token."""
        return replace(self, window=None, global_period=None)

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
            window=4096,
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
        # 2024-2025: head widths set apart from d_model / h, local and global layers, latent attention.
        ModelConfig(
            "Gemma 2 27B", 4608, 32, 16, 46, 8192, "decoder",
            "https://huggingface.co/google/gemma-2-27b/blob/main/config.json (hidden_size 4608, "
            "num_attention_heads 32, num_key_value_heads 16, head_dim 128, num_hidden_layers 46, "
            "sliding_window 4096, max_position_embeddings 8192); Gemma Team 2024 (Gemma 2), Table 1 and "
            "section 2: local sliding window (4096) and global attention (8192) in every other layer; "
            "layer_types of transformers' Gemma2Config: layer 0 sliding, layer 1 full, ...",
            head_dim=128, window=4096, global_period=2,
        ),
        ModelConfig(
            "Gemma 3 27B", 5376, 32, 16, 62, 131072, "decoder",
            "https://huggingface.co/google/gemma-3-27b-pt/blob/main/config.json, text_config (hidden_size "
            "5376, num_attention_heads 32, num_key_value_heads 16, head_dim 128, num_hidden_layers 62, "
            "sliding_window 1024, sliding_window_pattern 6, query_pre_attn_scalar 168, "
            "max_position_embeddings 131072); Gemma Team 2025 (Gemma 3), section 2: 5 local layers (span "
            "1024) for every global layer, 128K context; transformers' Gemma3TextConfig.layer_types: layer "
            "i is full_attention iff (i + 1) % 6 == 0",
            head_dim=128, window=1024, global_period=6,
        ),
        ModelConfig(
            "Llama 4 Scout", 5120, 40, 8, 48, 10485760, "decoder",
            "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json, text_config "
            "(hidden_size 5120, num_attention_heads 40, num_key_value_heads 8, head_dim 128, "
            "num_hidden_layers 48, attention_chunk_size 8192, no_rope_layers [1, 1, 1, 0] * 12, "
            "max_position_embeddings 10485760); transformers' Llama4TextConfig.layer_types: "
            "chunked_attention where the layer has RoPE, full_attention in every 4th layer (no positions). "
            "A chunked layer is counted here as local with window 8192, the most it caches",
            head_dim=128, window=8192, global_period=4,
        ),
        ModelConfig(
            "Qwen3-8B", 4096, 32, 8, 36, 40960, "decoder",
            "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json (hidden_size 4096, "
            "num_attention_heads 32, num_key_value_heads 8, head_dim 128, num_hidden_layers 36, "
            "max_position_embeddings 40960, use_sliding_window false); Yang et al. 2025 (Qwen3), Table 1",
            head_dim=128,
        ),
        ModelConfig(
            "Qwen3-235B-A22B", 4096, 64, 4, 94, 40960, "decoder",
            "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json (hidden_size 4096, "
            "num_attention_heads 64, num_key_value_heads 4, head_dim 128, num_hidden_layers 94, "
            "max_position_embeddings 40960); Yang et al. 2025 (Qwen3), Table 2",
            head_dim=128,
        ),
        ModelConfig(
            "gpt-oss-20b", 2880, 64, 8, 24, 131072, "decoder",
            "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json (hidden_size 2880, "
            "num_attention_heads 64, num_key_value_heads 8, head_dim 64, num_hidden_layers 24, "
            "sliding_window 128, layer_types sliding_attention, full_attention, ... (alternating from layer "
            "0), "
            "max_position_embeddings 131072); OpenAI 2025, gpt-oss-120b & gpt-oss-20b model card, section 2",
            head_dim=64, window=128, global_period=2,
        ),
        ModelConfig(
            "gpt-oss-120b", 2880, 64, 8, 36, 131072, "decoder",
            "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json (hidden_size 2880, "
            "num_attention_heads 64, num_key_value_heads 8, head_dim 64, num_hidden_layers 36, "
            "sliding_window 128, layer_types sliding_attention, full_attention, ... (alternating from layer "
            "0), "
            "max_position_embeddings 131072); OpenAI 2025, gpt-oss-120b & gpt-oss-20b model card, section 2",
            head_dim=64, window=128, global_period=2,
        ),
        ModelConfig(
            "DeepSeek-V3", 7168, 128, None, 61, 163840, "decoder",
            "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (hidden_size 7168, "
            "num_attention_heads 128, num_hidden_layers 61, kv_lora_rank 512, qk_rope_head_dim 64, "
            "qk_nope_head_dim 128, v_head_dim 128, q_lora_rank 1536, max_position_embeddings 163840); "
            "DeepSeek-AI 2024 (DeepSeek-V3), section 4.2: d_c = 512, d_h^R = 64, d_h = 128, d_c' = 1536; "
            "head_dim here is d_h, the width of a head's key and value apart from the rotary part",
            head_dim=128, kv_latent=512, rope_dim=64, q_latent=1536,
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


COLUMNS = (
    "model",
    "kind",
    "d_model",
    "h",
    "n_kv_heads",
    "d_k",
    "attention",
    "layers",
    "window",
    "global layers",
    "latent",
    "context",
)


def _global_layers(c: ModelConfig) -> str:
    """Which layers are global, in words: ``"all"``, ``"none"``, or ``"1 in 6"``."""
    if c.window is None:
        return "all"
    return "none" if c.global_period is None else f"1 in {c.global_period}"


def config_rows(configs: dict[str, ModelConfig] | None = None) -> list[dict[str, str | int]]:
    """Configurations as table rows, one dict per model with the keys :data:`COLUMNS`, ready for
    ``pandas.DataFrame(config_rows()).set_index("model")``.

    Args:
        configs: the models to show; defaults to :data:`MODEL_CONFIGS`.

    Returns:
        Rows with the name and kind, the integer shapes (``d_k`` is the head width, ``d_model / h`` unless
        the model sets it apart), the attention kind (``"MHA"``, ``"GQA"``, ``"MQA"`` or ``"MLA"``),
        ``layers`` (per stack), ``window`` (tokens a local layer sees), ``global layers`` (``"all"``,
        ``"none"`` or ``"1 in p"``), ``latent`` (latent attention's cached widths, e.g. ``"512 + 64"``) and
        ``context``. A missing value is ``"—"`` (no key/value heads of its own, no window, no latent, no
        fixed context), so that a table column stays readable, not floats with a NaN.
    """
    configs = MODEL_CONFIGS if configs is None else configs

    def dash(value: int | None) -> int | str:
        return "—" if value is None else value

    return [
        {
            "model": c.name,
            "kind": c.kind,
            "d_model": c.d_model,
            "h": c.h,
            "n_kv_heads": dash(c.n_kv_heads),
            "d_k": c.d_k,
            "attention": c.attention,
            "layers": c.n_layers,
            "window": dash(c.window),
            "global layers": _global_layers(c),
            "latent": "—" if c.kv_latent is None else f"{c.kv_latent} + {c.rope_dim or 0}",
            "context": dash(c.context),
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
        text = {0, 1, header.index("attention"), header.index("global layers"), header.index("latent")}
        padded = [
            c.ljust(w) if i in text else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)])
