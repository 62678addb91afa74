"""Linear attention, the delta rule and Gated DeltaNet: attention with a state instead of a cache.

Beside the core (it imports only PyTorch and the core's checks and masks), as the layers of 2025-2026 hybrid
decoders that are not softmax attention: three layers in four of Qwen3-Next and Qwen3.5.

- :mod:`mha.linear.rules`: the path from softmax attention to the gated delta rule, in three forms that
  agree to round-off: :func:`recurrent` (token by token, the state), :func:`chunked` (blocks of tokens, what
  fast kernels do) and :func:`parallel` (linear attention as masked scores without a softmax);
- :mod:`mha.linear.deltanet`: :class:`GatedDeltaNet`, the layer with Qwen3-Next's options, and its
  :class:`RecurrentState`, with the call and decode contract of :class:`mha.MultiHeadAttention`.
"""

from mha.linear.deltanet import GatedDeltaNet, RecurrentState
from mha.linear.rules import chunked, parallel, recurrent

__all__ = ["GatedDeltaNet", "RecurrentState", "chunked", "parallel", "recurrent"]
