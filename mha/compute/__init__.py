"""Computations on ``mha``'s layers that a model built from them needs beside its forward pass.

- :mod:`mha.compute.ablation`: switching heads off (``ablate_heads``, ``ablate_layer_heads``);
- :mod:`mha.compute.tensor_parallel`: Megatron-LM's tensor-parallel attention, heads split across processes.

This layer imports only the core (``mha``) and PyTorch.
"""

from mha.compute.ablation import ablate_heads

__all__ = ["ablate_heads"]
