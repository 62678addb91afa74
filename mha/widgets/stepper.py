"""Step through the stages of multi-head attention: a slider and previous/next buttons over the figures.

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import torch

from mha.compute.stages import STAGES
from mha.figures.stages import check_stage_key, figure_png, plot_stage

_BY_KEY = {stage.key: stage for stage in STAGES}


class StageStepper(widgets.VBox):
    """A slider and previous/next buttons over the stages, showing :func:`plot_stage` of the current one.

    The picture is an ``ipywidgets.Image`` holding PNG bytes, so it needs no kernel once drawn: saved widget
    state shows it in a static page, and the display bundle also carries it as a plain ``image/png``.

    Args:
        stages: the mapping returned by :func:`mha.attention_stages`.
        tokens: optional labels for the ``n`` tokens.
        start: the stage shown first; the last stage (the output) by default.

    Attributes:
        slider: ``ipywidgets.SelectionSlider`` whose value is the current stage's key.
        previous, next: ``ipywidgets.Button`` moving one stage back or forward.
        caption: ``ipywidgets.Label`` naming the stage and its shape.
        image: ``ipywidgets.Image`` with the current figure as PNG.
    """

    def __init__(
        self, stages: Mapping[str, torch.Tensor], *, tokens: Sequence[str] | None = None, start: str = "out"
    ) -> None:
        check_stage_key(stages, start)
        self._stages = dict(stages)
        self._tokens = None if tokens is None else list(tokens)
        self._keys = [s.key for s in STAGES]
        options = [(f"{i + 1}. {s.title}", s.key) for i, s in enumerate(STAGES)]
        self.slider = widgets.SelectionSlider(
            options=options,
            value=start,
            description="stage",
            continuous_update=False,
            layout=widgets.Layout(width="520px"),
        )
        self.previous = widgets.Button(description="◀ previous", layout=widgets.Layout(width="110px"))
        self.next = widgets.Button(description="next ▶", layout=widgets.Layout(width="110px"))
        self.caption = widgets.Label()
        self.image = widgets.Image(format="png")
        self.previous.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))
        self.slider.observe(lambda change: self._draw(change["new"]), names="value")
        super().__init__([widgets.HBox([self.previous, self.slider, self.next]), self.caption, self.image])
        self._draw(start)

    def _move(self, step: int) -> None:
        i = min(max(self._keys.index(self.slider.value) + step, 0), len(self._keys) - 1)
        self.slider.value = self._keys[i]  # triggers _draw through the observer

    def _draw(self, key: str) -> None:
        stage = _BY_KEY[key]
        i = self._keys.index(key)
        shape = tuple(self._stages[key].shape)
        self.caption.value = (
            f"stage {i + 1} of {len(self._keys)}: {stage.title}, shape {shape} = {stage.shape}"
        )
        self.previous.disabled, self.next.disabled = i == 0, i == len(self._keys) - 1
        self.image.value = figure_png(plot_stage(self._stages, key, tokens=self._tokens))

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        # The picture, base64 as in a notebook file, for viewers that cannot show widgets, and a short
        # text instead of ipywidgets' repr (which would spell out the PNG's bytes).
        png = base64.b64encode(bytes(self.image.value)).decode("ascii")
        return {**bundle, "image/png": png, "text/plain": f"StageStepper: {self.caption.value}"}


def stage_stepper(
    stages: Mapping[str, torch.Tensor], *, tokens: Sequence[str] | None = None, start: str = "out"
) -> StageStepper:
    """Return a :class:`StageStepper` over ``stages``, showing ``start`` (the output) first."""
    return StageStepper(stages, tokens=tokens, start=start)
