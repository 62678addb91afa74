"""What attention costs, and the attention shapes of published models; needs no model.

- :mod:`mha.costs.configs`: ``MODEL_CONFIGS``, one sourced ``ModelConfig`` per published model;
- :mod:`mha.costs.layers`: the kinds of layer of 2025–2026 (full, sliding, chunked, latent, compressed,
  linear) and what each keeps per sequence (``Layer``), with the indexer's and linear layers' shapes;
- :mod:`mha.costs.counts`: parameters, multiply-adds and key/value-cache bytes, exact for
  :class:`mha.MultiHeadAttention`; a model's cache counted layer by layer (``model_kv_cache_bytes``:
  every kind of layer), and every number of a model at once (``model_costs``);
- :mod:`mha.costs.hardware`: ``GPUS``, an accelerator's published peak arithmetic and memory rates;
- :mod:`mha.costs.report`: the cost calculator's rows for one model, written from ``model_costs``, as rows
  or a report; the key/value caches of several models as rows; the formatters of sizes, counts and ratios.

This layer imports only the core's input checks and PyTorch.
"""

from mha.costs.configs import (
    EARLIER_MODELS,
    LATER_MODELS,
    MODEL_CONFIGS,
    MODELS_2025_2026,
    TOPICS,
    ModelConfig,
    RopeScaling,
    config_rows,
    configs_table,
    get_config,
    models_released,
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
    uncounted_layers,
)
from mha.costs.hardware import GPUS, GpuSpec
from mha.costs.layers import LAYER_KINDS, Indexer, Layer, LinearAttention
from mha.costs.releases import RELEASE_CUT, RELEASES, Release
from mha.costs.report import (
    DTYPES,
    cache_groups,
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
    "EARLIER_MODELS",
    "GPUS",
    "LATER_MODELS",
    "LAYER_KINDS",
    "MODELS_2025_2026",
    "MODEL_CONFIGS",
    "RELEASES",
    "RELEASE_CUT",
    "TOPICS",
    "GpuSpec",
    "Indexer",
    "Layer",
    "LinearAttention",
    "ModelConfig",
    "Release",
    "RopeScaling",
    "attention_macs",
    "attention_macs_parts",
    "attention_macs_per_token",
    "attention_params",
    "attention_weights_bytes",
    "cache_groups",
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
    "models_released",
    "projection_params",
    "saved_for_backward_bytes",
    "uncounted_layers",
]
