"""Step through the stages of multi-head attention: previous/next buttons, a slider and the stage's heatmaps.

:class:`StageStepper` is an anywidget whose front end is the book's ``stepper.js``
(:func:`book.widgets.frontend.widget_esm`). Python computes every stage once, with the module's own forward
pass (:func:`book.compute.attention_stages`), and sends them all as the ``config`` traitlet
(:func:`book.widgets.frontend.stepper_config`); the page draws each step from those numbers, so stepping
needs no round trip. ``settings`` = ``{"stage": key}`` is synced both ways: a reader's step arrives in
Python, and :meth:`StageStepper.update` moves the page. Without a kernel, the display bundle's
``text/html`` holds the same front end with the stages inline, which the book's page mounts itself.

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch
import traitlets

from book.compute.stages import STAGES
from book.widgets.frontend import (
    ROOT_CLASSES,
    FrontEndWidget,
    root_html,
    stepper_config,
    widget_css,
    widget_esm,
)
from book.widgets.spec import merge_settings, stepper_spec

_KEYS = [stage.key for stage in STAGES]
_BY_KEY = {stage.key: stage for stage in STAGES}
_SPEC = stepper_spec()  # the slider over the stages, whose rules check a stage


def _check_stage(key: object) -> str:
    """``key`` if it names a stage; else the spec's message, as the page's slider gives it (ValueError)."""
    return merge_settings(_SPEC, _SPEC["defaults"], {"stage": key})["stage"]


class StageStepper(FrontEndWidget):
    """Previous/next buttons and a slider over the stages of one forward pass, drawn as heatmaps.

    Args:
        stages: the mapping returned by :func:`book.compute.attention_stages` (one sequence, no batch axis).
        tokens: optional labels for the ``n`` tokens (``1 .. n`` without them).
        start: the stage shown first; the last stage (the output) by default.

    Attributes:
        config: the stages and tokens the page draws (a traitlet, sent once).
        settings: ``{"stage": key}``, synced with the page both ways.

    Example:
        >>> stepper = StageStepper(stages)  # doctest: +SKIP
        >>> stepper.update(stage="weights"); stepper.caption  # doctest: +SKIP
        'stage 10 of 13: attention weights, shape (2, 4, 4) = (h, n, n)'
    """

    _esm = widget_esm("mountStepper")
    _css = widget_css()

    def __init__(
        self, stages: Mapping[str, torch.Tensor], *, tokens: Sequence[str] | None = None, start: str = "out"
    ) -> None:
        _check_stage(start)
        missing = [key for key in _KEYS if key not in stages]
        if missing:
            raise ValueError(f"stages lacks {missing}; pass the mapping returned by mha.attention_stages")
        n = stages["x"].shape[0]
        if tokens is None:
            tokens = [str(i + 1) for i in range(n)]
        elif isinstance(tokens, str) or len(tokens) != n or not all(isinstance(t, str) for t in tokens):
            raise ValueError(f"tokens must be {n} strings, one per row of stages['x'], got {tokens!r}")
        super().__init__()
        self._stages = {key: stages[key] for key in _KEYS}
        self.tokens = list(tokens)
        config = stepper_config(self._stages, self.tokens, start)
        self.config = {k: v for k, v in config.items() if k != "settings"}  # settings: their own traitlet
        self.settings = {"stage": start}

    @traitlets.validate("settings")
    def _valid_settings(self, proposal: dict) -> dict:
        settings = proposal["value"]
        if set(settings) != {"stage"}:
            raise KeyError(f"the stepper's settings are {{'stage': key}}, got {settings!r}")
        _check_stage(settings["stage"])
        return settings

    @property
    def stage(self) -> str:
        """The key of the stage shown."""
        return self.settings["stage"]

    @property
    def index(self) -> int:
        """The position of the stage shown, ``0 .. len(STAGES) - 1``."""
        return _KEYS.index(self.stage)

    @property
    def values(self) -> torch.Tensor:
        """The tensor of the stage shown, ``(n, ...)`` or ``(h, n, ...)``."""
        return self._stages[self.stage]

    @property
    def caption(self) -> str:
        """What the stage is, as a line of text: position, title, shape and its symbols."""
        stage = _BY_KEY[self.stage]
        shape = tuple(self.values.shape)
        return f"stage {self.index + 1} of {len(_KEYS)}: {stage.title}, shape {shape} = {stage.shape}"

    def update(self, *, stage: str) -> None:
        """Show ``stage`` (a key of :data:`book.compute.STAGES`), as a reader's click on it does."""
        self.settings = {"stage": _check_stage(stage)}

    def next(self) -> None:
        """One stage forward (nothing at the last), as the ``next`` button does."""
        self.settings = {"stage": _KEYS[min(self.index + 1, len(_KEYS) - 1)]}

    def previous(self) -> None:
        """One stage back (nothing at the first), as the ``previous`` button does."""
        self.settings = {"stage": _KEYS[max(self.index - 1, 0)]}

    def static_html(self) -> str:
        """The stepper for pages without a kernel: the front end with every stage inline."""
        return root_html(
            ROOT_CLASSES["mountStepper"],
            {**self.config, "settings": dict(self.settings)},
            fallback=f"<p>{self.caption}</p>",
        )

    def __repr__(self) -> str:
        return f"StageStepper({self.caption})"


def stage_stepper(
    stages: Mapping[str, torch.Tensor], *, tokens: Sequence[str] | None = None, start: str = "out"
) -> StageStepper:
    """Return a :class:`StageStepper` over ``stages``, showing ``start`` (the output) first."""
    return StageStepper(stages, tokens=tokens, start=start)
