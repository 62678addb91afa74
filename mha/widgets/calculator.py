"""The cost calculator: controls for model, context, batch and dtype above a live cost report.

The numbers come from :func:`mha.costs.cost_report`; this module adds only the controls. Its display
bundle also carries the report as plain HTML, so a page built without a kernel shows the initial numbers.
"""

from __future__ import annotations

import ipywidgets as widgets

from mha.costs.configs import MODEL_CONFIGS, get_config
from mha.costs.report import DTYPES, cost_report


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
        get_config(model, decoder_only=True)
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
