"""The book's interactive figures: the head explorer, the stage stepper and the cost calculator.

A pretrained encoder's real heads (the static viewer and the live ``EncoderExplorer``) are in
:mod:`book.minilm.realheads`, imported on its own: it loads the tokenizer packages of :mod:`mha.pretrained`.

Widgets hold controls and front ends only; what they show is computed by the layers below
(:mod:`mha.compute`, :mod:`mha.costs`) and drawn by :mod:`book.figures`.
"""

from book.widgets.calculator import CostCalculator, cost_calculator
from book.widgets.explorer import HeadExplorer
from book.widgets.stepper import StageStepper, stage_stepper

__all__ = ["CostCalculator", "HeadExplorer", "StageStepper", "cost_calculator", "stage_stepper"]
