"""mha: multi-head attention, small and tested, for the book "Multi-Head Attention, interactively".

The public API is what ``__all__`` lists; the book's chapters import nothing else.
"""

from mha._embeddings import embed_tokens
from mha.attention import scaled_dot_product_attention
from mha.calculator import CostCalculator, cost_calculator, cost_report
from mha.configs import MODEL_CONFIGS, ModelConfig, configs_table
from mha.cost_plots import plot_attention_macs, plot_head_widths, plot_kv_cache
from mha.costs import (
    attention_macs,
    attention_macs_parts,
    attention_macs_per_token,
    attention_params,
    attention_weights_bytes,
    format_bytes,
    format_count,
    kv_cache_bytes,
    model_costs,
    saved_for_backward_bytes,
)
from mha.masks import causal_mask, padding_mask
from mha.multihead import MultiHeadAttention
from mha.plotting import HeadPlot, plot_heads
from mha.positional import sinusoidal_positions
from mha.stages import STAGES, Stage, attention_stages
from mha.stepper import StageStepper, plot_stage, stage_stepper
from mha.tasks import TASKS, Task
from mha.training import (
    OneLayerAttentionModel,
    TrainConfig,
    ablate_heads,
    attention_by_offset,
    attention_to_markers,
    evaluate,
    head_ablation,
    load_models,
    load_results,
    train,
)
from mha.training_plots import plot_accuracy_by_heads, plot_learning_curves
from mha.tutorial_code import tutorial_class, tutorial_source
from mha.widgets import HeadExplorer
from mha.worked_example import WorkedExample, worked_example

__all__ = [
    "MODEL_CONFIGS",
    "STAGES",
    "TASKS",
    "CostCalculator",
    "HeadExplorer",
    "HeadPlot",
    "ModelConfig",
    "MultiHeadAttention",
    "OneLayerAttentionModel",
    "Stage",
    "StageStepper",
    "Task",
    "TrainConfig",
    "WorkedExample",
    "ablate_heads",
    "attention_by_offset",
    "attention_macs",
    "attention_macs_parts",
    "attention_macs_per_token",
    "attention_params",
    "attention_stages",
    "attention_to_markers",
    "attention_weights_bytes",
    "causal_mask",
    "configs_table",
    "cost_calculator",
    "cost_report",
    "embed_tokens",
    "evaluate",
    "format_bytes",
    "format_count",
    "head_ablation",
    "kv_cache_bytes",
    "load_models",
    "load_results",
    "model_costs",
    "padding_mask",
    "plot_accuracy_by_heads",
    "plot_attention_macs",
    "plot_head_widths",
    "plot_heads",
    "plot_kv_cache",
    "plot_learning_curves",
    "plot_stage",
    "saved_for_backward_bytes",
    "scaled_dot_product_attention",
    "sinusoidal_positions",
    "stage_stepper",
    "train",
    "tutorial_class",
    "tutorial_source",
    "worked_example",
]
