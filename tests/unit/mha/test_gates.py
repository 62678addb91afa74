"""book.chapters.gates: the hand-set head that a sink or a gate quiets."""

from __future__ import annotations

import math

import torch

from book.chapters.gates import quiet_head, quiet_head_steps, sink_inputs
from mha.gates import NoGate, OutputGate


def test_a_gate_scales_the_output_by_sigmoid_of_its_bias_and_leaves_the_weights():
    x = sink_inputs()
    plain, gated = quiet_head_steps(x, 0.0), quiet_head_steps(x, 0.0, -4.0)
    torch.testing.assert_close(gated["weights"], plain["weights"], rtol=0, atol=0)
    sigma = 1 / (1 + math.exp(4.0))
    torch.testing.assert_close(gated["out"], plain["out"] * sigma, rtol=0, atol=1e-15)
    assert isinstance(quiet_head(4, 0.0).gate, NoGate) and isinstance(
        quiet_head(4, 0.0, 1.0).gate, OutputGate
    )
