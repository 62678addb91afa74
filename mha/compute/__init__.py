"""Computations built on the core: what the book's figures and widgets show, computed once.

- :mod:`mha.compute.stages`: every intermediate tensor of one forward pass, named (``attention_stages``);
- :mod:`mha.compute.explorer`: the head explorer's weights (``explorer_weights``), its tokens and inputs;
- :mod:`mha.compute.portable_random`: the counter-based generator that the browser port reproduces;
- :mod:`mha.compute.ablation`: switching heads off (``ablate_heads``).

This layer imports only the core (``mha``) and PyTorch.
"""

from mha.compute.ablation import ablate_heads
from mha.compute.explorer import embed_tokens, explorer_weights, fresh_attention, split_tokens
from mha.compute.stages import STAGES, Stage, attention_stages

__all__ = [
    "STAGES",
    "Stage",
    "ablate_heads",
    "attention_stages",
    "embed_tokens",
    "explorer_weights",
    "fresh_attention",
    "split_tokens",
]
