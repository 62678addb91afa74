"""The book's matplotlib figures: per-head heatmaps, the stages of a forward pass, costs of real models.

- :mod:`book.figures.heatmaps`: ``plot_heads``, one panel per head on a shared 0-1 scale;
- :mod:`book.figures.costs`: head widths, multiply-adds and KV-cache sizes of :data:`mha.costs.MODEL_CONFIGS`;
- :mod:`book.figures.diagrams`: the multi-head block with its shapes, and how heads are laid out in memory.

- :mod:`book.figures.block`, :mod:`book.figures.pretrained`, :mod:`book.figures.since_2017` and
  :mod:`book.figures.attention_2026`: the Transformer block, a pretrained model's heads, and the two history
  chapters' figures.

Figures take computed tensors and numbers; they compute no model maths of their own. This layer imports
``mha`` and :mod:`book.compute`, never the widgets.
"""

from book.figures.costs import plot_attention_macs, plot_head_widths, plot_kv_cache, plot_layer_caches
from book.figures.diagrams import plot_head_layout, plot_multihead_block
from book.figures.heatmaps import plot_heads

__all__ = [
    "plot_attention_macs",
    "plot_head_layout",
    "plot_head_widths",
    "plot_heads",
    "plot_kv_cache",
    "plot_layer_caches",
    "plot_multihead_block",
]
