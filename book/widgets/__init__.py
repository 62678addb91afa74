"""The book's interactive figures: the head explorer, the stage stepper, the cost calculator, and the windows
and sparse-attention figures (:mod:`book.widgets.windows`, :mod:`book.widgets.sparse`).

Each is Python (a live kernel's widget, a static page's data: :mod:`book.widgets.frontend`, with the controls,
rules and texts of :mod:`book.widgets.spec`) and page code (``static/``), which the models the page runs
(:mod:`book.minilm`, :mod:`book.decoder`) share. Widgets hold controls and front ends only; what they show is
computed by :mod:`book.compute` and :mod:`mha.costs` and drawn by :mod:`book.figures`.
"""

from book.widgets.calculator import CostCalculator, cost_calculator
from book.widgets.explorer import HeadExplorer
from book.widgets.stepper import StageStepper, stage_stepper

__all__ = ["CostCalculator", "HeadExplorer", "StageStepper", "cost_calculator", "stage_stepper"]
