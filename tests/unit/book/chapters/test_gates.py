"""book.chapters.gates: the quiet head the gates chapter builds, with and without mha's gate."""

from __future__ import annotations

import torch

from book.chapters.gates import output_size, quiet_head_steps, sink_inputs


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
