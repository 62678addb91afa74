"""book.chapters.gates: the quiet head the gates chapter builds, with and without mha's gate."""

from __future__ import annotations

import math

import torch

from book.chapters.gates import output_size, quiet_head, quiet_head_steps, sink_inputs
from mha.gates import NoGate, OutputGate


def test_without_a_gate_only_the_sink_quiets_the_head():
    x = sink_inputs()
    spread = quiet_head_steps(x, 0.0)
    n = x.size(1)
    expected = 1 / torch.arange(1, n + 1, dtype=torch.float64)  # query t spreads 1/t over its t keys
    torch.testing.assert_close(spread["weights"][0, 0, :, 0], expected, rtol=0, atol=1e-12)
    sink = quiet_head_steps(x, 8.0)
    # the output is (1 - weight on the sink) times the average of the other values: the sink's value is 0
    assert sink["weights"][0, 0, 1:, 0].min() > 0.99
    assert output_size(sink) < 0.02 * output_size(spread)


def test_a_gate_scales_the_output_by_sigmoid_of_its_bias_and_leaves_the_weights():
    x = sink_inputs()
    plain, gated = quiet_head_steps(x, 0.0), quiet_head_steps(x, 0.0, -4.0)
    torch.testing.assert_close(gated["weights"], plain["weights"], rtol=0, atol=0)
    sigma = 1 / (1 + math.exp(4.0))
    torch.testing.assert_close(gated["out"], plain["out"] * sigma, rtol=0, atol=1e-15)
    assert isinstance(quiet_head(4, 0.0).gate, NoGate) and isinstance(
        quiet_head(4, 0.0, 1.0).gate, OutputGate
    )
