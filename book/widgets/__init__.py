"""The book's interactive figures: the head explorer, the stage stepper and the cost calculator.

The figures of the models the page runs are with those models: all-MiniLM-L6-v2's box in :mod:`book.minilm`,
the decoder's in :mod:`book.decoder`.

Widgets hold controls and front ends only; what they show is computed by the layers below
(:mod:`mha.compute`, :mod:`mha.costs`) and drawn by :mod:`book.figures`.
"""

from book.widgets.calculator import CostCalculator, cost_calculator
from book.widgets.explorer import HeadExplorer
from book.widgets.stepper import StageStepper, stage_stepper

__all__ = ["CostCalculator", "HeadExplorer", "StageStepper", "cost_calculator", "stage_stepper"]
