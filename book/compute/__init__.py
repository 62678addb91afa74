"""What the book's figures and widgets show, computed once, on ``mha``'s layers.

- :mod:`book.compute.stages`: every intermediate tensor of one forward pass, named (``attention_stages``);
- :mod:`book.compute.explorer`: the head explorer's weights (``explorer_weights``), its tokens and inputs;
- :mod:`book.compute.portable_random`: the counter-based generator that the explorer's page port reproduces;
- :mod:`book.compute.since_2017` and :mod:`book.compute.attention_2026`: what the two history chapters
  compute beside the layers themselves (their windows, and DeepSeek Sparse Attention's selection).

This layer imports only ``mha`` and PyTorch.
"""

from book.compute.explorer import embed_tokens, explorer_weights, fresh_attention, split_tokens
from book.compute.stages import STAGES, Stage, attention_stages

__all__ = [
    "STAGES",
    "Stage",
    "attention_stages",
    "embed_tokens",
    "explorer_weights",
    "fresh_attention",
    "split_tokens",
]
