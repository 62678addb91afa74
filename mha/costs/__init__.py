"""What attention costs, and the attention shapes of published models; needs no model.

- :mod:`mha.costs.configs`: ``MODEL_CONFIGS``, one sourced ``ModelConfig`` per published model;
- :mod:`mha.costs.counts`: parameters, multiply-adds and key/value-cache bytes, exact for
  :class:`mha.MultiHeadAttention`; a model's cache counted layer by layer (``model_kv_cache_bytes``:
  sliding windows, local/global layers, latents), and every number of a model at once (``model_costs``);
- :mod:`mha.costs.hardware`: ``GPUS``, an accelerator's published peak arithmetic and memory rates;
- :mod:`mha.costs.report`: the cost calculator's rows for one model, written from ``model_costs``, as rows
  or a report; the key/value caches of several models as rows; the formatters of sizes, counts and ratios.

This layer imports only the core's input checks and PyTorch.
"""

from mha.costs.configs import (
    MODEL_CONFIGS,
    TOPICS,
    ModelConfig,
    RopeScaling,
    config_rows,
    configs_table,
    get_config,
)
from mha.costs.counts import (
    attention_macs,
    attention_macs_parts,
    attention_macs_per_token,
    attention_params,
    attention_weights_bytes,
    kv_cache_bytes,
    layer_costs,
    model_costs,
    model_kv_cache_bytes,
    projection_params,
    saved_for_backward_bytes,
)
from mha.costs.hardware import GPUS, GpuSpec
from mha.costs.report import (
    DTYPES,
    calculator_data,
    cost_report,
    cost_rows,
    costs_and_rows,
    format_bytes,
    format_count,
    format_ratio,
    format_rows,
    kv_cache_rows,
)

__all__ = [
    "DTYPES",
    "GPUS",
    "MODEL_CONFIGS",
    "TOPICS",
    "GpuSpec",
    "ModelConfig",
    "RopeScaling",
    "attention_macs",
    "attention_macs_parts",
    "attention_macs_per_token",
    "attention_params",
    "attention_weights_bytes",
    "calculator_data",
    "config_rows",
    "configs_table",
    "cost_report",
    "cost_rows",
    "costs_and_rows",
    "format_bytes",
    "format_count",
    "format_ratio",
    "format_rows",
    "get_config",
    "kv_cache_bytes",
    "kv_cache_rows",
    "layer_costs",
    "model_costs",
    "model_kv_cache_bytes",
    "projection_params",
    "saved_for_backward_bytes",
]
