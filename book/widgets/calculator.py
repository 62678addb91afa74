"""The cost calculator: model, context, batch and dtype, and the attention costs they imply.

:class:`CostCalculator` is an anywidget whose front end is the book's ``calculator.js``
(:func:`book.widgets.frontend.widget_esm`). ``settings`` = ``{"model", "context", "batch", "dtype"}`` is
synced both ways; on every change Python looks the model up once, computes its costs and the rows of
:func:`mha.costs.cost_report` from them (:func:`mha.costs.costs_and_rows`, the function behind the report),
and sends them as ``drawn`` = ``{"rows": [[label, value], ...], "numbers": {name: decimal string},
"message": ""}``, which the page draws. The static book has no kernel: there, the display bundle's
``text/html`` holds the front end with its settings and, per model, the numbers Python computed that do not
depend on them (:func:`book.widgets.frontend.calculator_config`, :func:`mha.costs.calculator_data`); the page
only adds and multiplies them for the reader's context, batch and dtype. Every model's cache is counted
layer by layer: sliding windows, local and global layers and latent attention included.
"""

from __future__ import annotations

import dataclasses
import html

from book.widgets.frontend import (
    ROOT_CLASSES,
    ComputedWidget,
    calculator_config,
    root_html,
    widget_css,
    widget_esm,
)
from book.widgets.spec import (
    BUG,
    CALCULATOR_DEFAULTS,
    MAX_BATCH,
    MAX_CONTEXT,
    calculator_spec,
    fill,
    merge_settings,
    setting_names,
)
from mha.costs.configs import MODEL_CONFIGS, ModelConfig, get_config
from mha.costs.counts import ModelCosts
from mha.costs.report import costs_and_rows, format_rows

_D = CALCULATOR_DEFAULTS  # the first settings, defined once (book.widgets.spec)
_SPEC = calculator_spec([m for m, c in MODEL_CONFIGS.items() if c.kind == "decoder"])  # the page's rules
SETTINGS = setting_names(_SPEC)  # model, dtype, context, batch
__all__ = ["MAX_BATCH", "MAX_CONTEXT", "SETTINGS", "CostCalculator", "cost_calculator"]


class CostCalculator(ComputedWidget):
    """Controls for model, context, batch and dtype above a live table of :func:`cost_report`'s rows.

    Args:
        model: the decoder-only model shown first, a name in :data:`mha.costs.MODEL_CONFIGS`.
        context: the context length shown first, ``1 .. 2**24``.
        batch: the batch size shown first, ``1 .. 2**12``.
        dtype: the cache dtype shown first, a key of :data:`mha.costs.report.DTYPES`.

    Attributes:
        settings: the controls' values (a traitlet, synced both ways).
        drawn: the rows the page shows (a traitlet, Python to page).
        rows: those rows as ``(label, value)`` pairs; ``costs``: the :class:`mha.costs.ModelCosts`.
        last_error: the last unexpected exception raised while reacting to a change, or ``None``.
    """

    SETTINGS = SETTINGS
    _esm = widget_esm("mountCalculator")
    _css = widget_css()

    def __init__(
        self,
        model: str = _D["model"],
        *,
        context: int = _D["context"],
        batch: int = _D["batch"],
        dtype: str = _D["dtype"],
    ) -> None:
        settings = {"model": model, "context": context, "batch": batch, "dtype": dtype}
        self._check(settings)
        super().__init__()
        self.rows: list[tuple[str, str]] = []
        self.costs: ModelCosts | None = None
        self._state: dict = {}  # the last settings computed, to which a bad value from the page goes back
        self.config = {k: v for k, v in calculator_config(settings).items() if k != "settings"}
        self._apply(settings, self._check(settings))

    @staticmethod
    def _check(settings: dict) -> ModelConfig:
        """The model's configuration, looked up once; raise for settings no control offers: the spec's rules
        (:func:`book.widgets.spec.merge_settings`, which the page applies too), an encoder or unknown model
        (named by :func:`get_config`)."""
        unknown = sorted(set(settings) - set(SETTINGS))
        if unknown:
            raise KeyError(f"unknown settings {unknown}; the settings are {list(SETTINGS)}")
        config = get_config(settings["model"], decoder_only=True)
        merge_settings(_SPEC, _SPEC["defaults"], settings)
        return config

    def update(self, **changes: object) -> None:
        """Change some settings (``model``, ``context``, ``batch``, ``dtype``) and recompute the rows."""
        super().update(**changes)

    def _react(self, changes: dict) -> None:
        settings = {**self.settings, **changes}  # from the page, ``settings`` already holds the changes
        try:
            config = self._check(settings)
        except (KeyError, ValueError):
            if self.settings != self._state:
                self._apply(self._state, self._config)  # the page goes back to the last valid settings
            raise
        self._apply(settings, config)

    def _apply(self, settings: dict, config: ModelConfig) -> None:
        try:
            s = {**settings}
            self.costs, self.rows = costs_and_rows(config, s["context"], batch=s["batch"], dtype=s["dtype"])
            drawn = {
                "rows": [list(row) for row in self.rows],
                "numbers": {  # None: weights and multiply-adds not counted for this model
                    k: None if v is None else str(v) for k, v in dataclasses.asdict(self.costs).items()
                },
                "message": "",
            }
        except Exception as error:
            self.last_error = error
            message = fill(BUG, figure="calculator", error=f"{type(error).__name__}: {error}")
            self.drawn = {**self.drawn, "message": message}
            raise
        self._state, self._config = s, config
        self._publish(s, drawn)

    def report(self) -> str:
        """The current rows as :func:`mha.costs.cost_report`'s aligned text."""
        return format_rows(self.rows)

    def static_html(self) -> str:
        """The calculator for pages without a kernel: the front end with its settings inline."""
        table = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in self.rows)
        fallback = f"<table class='mha-cost-report'>{table}</table>"
        return root_html(ROOT_CLASSES["mountCalculator"], calculator_config(self.settings), fallback=fallback)

    def __repr__(self) -> str:
        s = self.settings
        return (
            f"CostCalculator(model={s['model']!r}, context={s['context']}, batch={s['batch']}, "
            f"dtype={s['dtype']!r})"
        )


def cost_calculator(
    model: str = _D["model"],
    *,
    context: int = _D["context"],
    batch: int = _D["batch"],
    dtype: str = _D["dtype"],
) -> CostCalculator:
    """Return a :class:`CostCalculator` showing ``model`` at ``context`` tokens first."""
    return CostCalculator(model, context=context, batch=batch, dtype=dtype)
