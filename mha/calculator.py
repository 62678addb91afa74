"""A cost calculator for real models: pick a model, a context length, a batch and a dtype; read off the
attention parameters, multiply-adds and key/value-cache memory.

:func:`cost_report` computes the numbers (text or HTML) and is what a chapter prints deterministically;
:class:`CostCalculator` is the same report behind ``ipywidgets`` controls. Its display bundle also carries
the report as plain HTML, so a page built without a kernel shows the initial numbers.
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import torch

from mha.configs import MODEL_CONFIGS, ModelConfig
from mha.costs import format_bytes, format_count, kv_cache_bytes, model_costs

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float8_e4m3fn": torch.float8_e4m3fn,
}


def _decoder(model: str | ModelConfig) -> ModelConfig:
    config = MODEL_CONFIGS.get(model) if isinstance(model, str) else model
    if not isinstance(config, ModelConfig):
        known = ", ".join(n for n, c in MODEL_CONFIGS.items() if c.kind == "decoder")
        raise KeyError(f"unknown model {model!r}; decoder-only models: {known}")
    if config.kind != "decoder":
        raise ValueError(
            f"{config.name} is an {config.kind} model; the calculator covers decoder-only models"
        )
    return config


def _macs(n: int) -> str:
    return f"{format_count(n)} = {format_count(2 * n)}FLOP (attention layers only)"


def cost_rows(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16"
) -> list[tuple[str, str]]:
    """The calculator's numbers as ``(label, value)`` rows.

    Args:
        model: a name in :data:`mha.configs.MODEL_CONFIGS` (decoder-only) or a ``ModelConfig``.
        context: tokens per sequence.
        batch: sequences at once.
        dtype: a key of :data:`DTYPES`, the element type of the key/value cache.
    """
    config = _decoder(model)
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {list(DTYPES)}, got {dtype!r}")
    costs = model_costs(config, context, batch=batch, dtype=DTYPES[dtype])
    as_mha = kv_cache_bytes(config.n_layers, config.h, config.d_k, context, batch=batch, dtype=DTYPES[dtype])
    shape = f"d_model={config.d_model}, h={config.h}, n_kv_heads={config.n_kv_heads}, d_k={config.d_k}"
    rows = [
        ("model", f"{config.name} ({config.attention}: {shape}, {config.n_layers} layers)"),
        ("attention parameters, all layers", f"{format_count(costs.params)} parameters ({costs.params:,})"),
        ("multiply-adds per new token", _macs(costs.macs_per_token)),
        ("multiply-adds, forward over the batch", _macs(costs.macs_per_sequence)),
        ("KV cache", f"{format_bytes(costs.kv_cache_bytes)} ({costs.kv_cache_bytes:,} bytes, {dtype})"),
    ]
    if config.n_kv_heads != config.h:
        rows.append(
            (
                "KV cache if every head kept its own K, V",
                f"{format_bytes(as_mha)} ({as_mha // costs.kv_cache_bytes}x)",
            )
        )
    if config.context is not None and context > config.context:
        rows.append(
            ("note", f"{context} tokens is longer than the {config.context} the model was trained for")
        )
    return rows


def cost_report(
    model: str | ModelConfig, context: int, *, batch: int = 1, dtype: str = "bfloat16", fmt: str = "text"
) -> str:
    """:func:`cost_rows` as aligned text lines (``fmt="text"``) or an HTML table (``fmt="html"``)."""
    rows = cost_rows(model, context, batch=batch, dtype=dtype)
    rows.insert(1, ("context x batch", f"{context} tokens x {batch} sequence{'s' if batch != 1 else ''}"))
    if fmt == "html":
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table class='mha-cost-report'>{body}</table>"
    if fmt != "text":
        raise ValueError(f"fmt must be 'text' or 'html', got {fmt!r}")
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in rows)


class CostCalculator(widgets.VBox):
    """Controls for model, context, batch and dtype above a live :func:`cost_report`.

    Args:
        model: the decoder-only model shown first.
        context: the context length shown first.
        batch: the batch size shown first.
        dtype: the cache dtype shown first, a key of :data:`DTYPES`.

    Attributes:
        model, dtype: ``ipywidgets.Dropdown``.
        context, batch: ``ipywidgets.BoundedIntText``.
        report: ``ipywidgets.HTML`` holding ``cost_report(..., fmt="html")`` for the current values.
    """

    def __init__(
        self, model: str = "Llama 3.1 8B", *, context: int = 4096, batch: int = 1, dtype: str = "bfloat16"
    ) -> None:
        _decoder(model)
        names = [n for n, c in MODEL_CONFIGS.items() if c.kind == "decoder"]
        style = {"description_width": "70px"}
        self.model = widgets.Dropdown(options=names, value=model, description="model", style=style)
        self.context = widgets.BoundedIntText(
            value=context, min=1, max=2**20, description="context", style=style
        )
        self.batch = widgets.BoundedIntText(value=batch, min=1, max=2**12, description="batch", style=style)
        self.dtype = widgets.Dropdown(options=list(DTYPES), value=dtype, description="dtype", style=style)
        self.report = widgets.HTML()
        for control in (self.model, self.context, self.batch, self.dtype):
            control.observe(self._update, names="value")
        super().__init__(
            [widgets.HBox([self.model, self.dtype]), widgets.HBox([self.context, self.batch]), self.report]
        )
        self._update()

    def _update(self, _change: object = None) -> None:
        self.report.value = cost_report(
            self.model.value, self.context.value, batch=self.batch.value, dtype=self.dtype.value, fmt="html"
        )

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        # Plain HTML of the current numbers, for pages rendered without a kernel.
        return {**bundle, "text/html": self.report.value}


def cost_calculator(
    model: str = "Llama 3.1 8B", *, context: int = 4096, batch: int = 1, dtype: str = "bfloat16"
) -> CostCalculator:
    """Return a :class:`CostCalculator` showing ``model`` at ``context`` tokens first."""
    return CostCalculator(model, context=context, batch=batch, dtype=dtype)
