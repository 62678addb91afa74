"""mha: multi-head attention, small and tested, for the book "Multi-Head Attention, interactively".

``import mha`` is the attention code and nothing else: the scaled dot-product attention function, the
multi-head module (the 2017 layer, with a KV cache, and today's changes as parts it always calls: rotary
positions in full, in part or absent with a temperature, norms of queries, keys and values, soft-capping,
sinks, windows, chunks, an output gate; keys as values as a subclass), the families' parts as data
(``mha.families``), multi-head latent attention (DeepSeek-V3's layer, with its small cache and
absorbed form, and DeepSeek Sparse Attention's top-k keys), masks and positional encodings, importing only
PyTorch; and beside it ``mha.linear``, linear attention with a state instead of a cache (Gated DeltaNet,
Qwen3-Next's and Qwen3.5's layer).
Around the core, in subpackages that each import only those below them (``pyproject.toml`` states the rule
and ``lint-imports`` enforces it):

- ``mha.compute``: computations on the layers (switching heads off, tensor-parallel heads);
- ``mha.pretrained``: pretrained models running on :class:`MultiHeadAttention` (the encoder all-MiniLM-L6-v2,
  the decoder LLM SmolLM2-135M-Instruct) and today's decoders' attention layers taken from transformers
  (``from_transformers``); needs ``pip install "mha[pretrained]"`` (its modules name what they import);
- ``mha.costs``: parameter, compute and memory counts, and published model configurations.

``pip install mha`` needs PyTorch only. The book's figures, widgets and chapter material are not here: they
are the package ``book`` beside this one, which imports ``mha`` and is never imported by it.
"""

from mha.attention import scaled_dot_product_attention
from mha.cache import KVCache, LatentCache
from mha.latent import MultiHeadLatentAttention
from mha.linear import GatedDeltaNet, RecurrentState
from mha.masks import causal_mask, padding_mask
from mha.multihead import MultiHeadAttention
from mha.positional import sinusoidal_positions

__all__ = [
    "GatedDeltaNet",
    "KVCache",
    "LatentCache",
    "MultiHeadAttention",
    "MultiHeadLatentAttention",
    "RecurrentState",
    "causal_mask",
    "padding_mask",
    "scaled_dot_product_attention",
    "sinusoidal_positions",
]
