"""mha: multi-head attention, small and tested, for the book "Multi-Head Attention, interactively".

The public API is what ``__all__`` lists; the book's chapters import nothing else.
"""

from mha.attention import scaled_dot_product_attention
from mha.masks import causal_mask, padding_mask
from mha.multihead import MultiHeadAttention
from mha.plotting import HeadPlot, plot_heads
from mha.positional import sinusoidal_positions

__all__ = [
    "HeadPlot",
    "MultiHeadAttention",
    "causal_mask",
    "padding_mask",
    "plot_heads",
    "scaled_dot_product_attention",
    "sinusoidal_positions",
]
