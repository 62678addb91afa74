"""mha.gates: the 2017 layer's gate passes the heads as they are; the output gate multiplies the merged heads
by sigmoid(x W_g) before W_o."""

import pytest
import torch

from mha.gates import NoGate, OutputGate
from tests.unit.mha.parts import D_K, D_MODEL, H, inputs, layer, recorded


def test_no_gate_returns_the_merged_heads_themselves():
    concat, x = torch.randn(2, 3, 8), torch.randn(2, 3, 5)
    assert NoGate()(concat, x) is concat


def test_the_output_gate_multiplies_the_merged_heads_before_w_o():
    attn, x = layer(gate=OutputGate(D_MODEL, H * D_K)), inputs()
    steps = recorded(attn, x)
    gate = torch.sigmoid(attn.gate.W_g(x))  # (B, n, h d_k)
    torch.testing.assert_close(steps["out"], attn.W_o(steps["concat"] * gate), rtol=0, atol=1e-12)
    assert gate.shape == (2, 9, H * D_K) and set(attn.state_dict()) >= {"gate.W_g.weight", "gate.W_g.bias"}


def test_the_output_gate_checks_its_widths_and_names_them():
    with pytest.raises(ValueError, match="width must be a positive int"):
        OutputGate(24, 0)
    gate = OutputGate(24, 12)
    gate.check(d_model=24, h=2, d_k=6)  # fits
    with pytest.raises(ValueError, match=r"OutputGate\(24, 12\) needs OutputGate\(d_model=24, h \* d_k=24\)"):
        gate.check(d_model=24, h=4, d_k=6)
