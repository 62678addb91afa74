"""mha: multi-head attention, small and tested, for the book "Multi-Head Attention, interactively".

The public API is what ``__all__`` lists; the book's chapters import nothing else.
"""

from mha.attention import scaled_dot_product_attention
from mha.masks import causal_mask, padding_mask
from mha.multihead import MultiHeadAttention
from mha.plotting import HeadPlot, plot_heads
from mha.positional import sinusoidal_positions
from mha.stages import STAGES, Stage, attention_stages
from mha.stepper import StageStepper, plot_stage, stage_stepper
from mha.worked_example import WorkedExample, worked_example

__all__ = [
    "HeadPlot",
    "STAGES",
    "MultiHeadAttention",
    "Stage",
    "StageStepper",
    "WorkedExample",
    "attention_stages",
    "causal_mask",
    "padding_mask",
    "plot_heads",
    "plot_stage",
    "scaled_dot_product_attention",
    "sinusoidal_positions",
    "stage_stepper",
    "worked_example",
]
