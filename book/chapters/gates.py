"""The constructed example of the chapter "Attention in 2025–2026": two ways to make a head say nothing.

One head of width ``d_model`` over ``n`` tokens, every weight set by hand: every query scores token 1 at
``sink_score`` and the other tokens at 0, token 1's value is zero and the others' values are their inputs.
Without a gate the head can only quiet its output by putting its weight on token 1 (a sink, raising
``sink_score``); with an output gate (``mha.MultiHeadAttention(gate=OutputGate(d_model, d_model))``) of bias
``gate_bias`` and no weights, every output is multiplied by ``sigmoid(gate_bias)`` whatever the attention
weights.

Shape legend:
    n        number of tokens (token 1 is the sink)
    d_model  model width, one head: d_k = d_model
"""

from __future__ import annotations

import torch

from mha.gates import OutputGate
from mha.masks import causal_mask
from mha.multihead import MultiHeadAttention


def sink_inputs(n: int = 8, d_model: int = 4, *, seed: int = 0) -> torch.Tensor:
    """The inputs ``(1, n, d_model)``, float64: token 1 is the unit vector ``e_1``, the others random vectors
    with a zero first coordinate (``torch.Generator`` seeded with ``seed``)."""
    x = torch.zeros(1, n, d_model, dtype=torch.float64)  # (B, n, d_model)
    x[0, 0, 0] = 1.0  # token 1: its own direction, the sink
    g = torch.Generator().manual_seed(seed)
    x[0, 1:, 1:] = torch.randn(n - 1, d_model - 1, generator=g, dtype=torch.float64)
    return x


def quiet_head(d_model: int, sink_score: float, gate_bias: float | None = None) -> MultiHeadAttention:
    """The hand-set head (module docstring), float64: ``q = (2 s, 0, ..., 0)`` for every token (the layer
    scales by ``1 / sqrt(d_k)``, so with ``d_k = 4`` token 1 scores ``s``), ``k_1 = e_1`` and the others'
    keys 0, ``v_1 = 0`` and ``v_j = x_j``; ``W_o`` the identity; with ``gate_bias``, a gate of that bias."""
    gate = None if gate_bias is None else OutputGate(d_model, d_model)
    attn = MultiHeadAttention(d_model, 1, gate=gate).double()
    with torch.no_grad():
        for W in (attn.W_q, attn.W_k, attn.W_v, attn.W_o) + (() if gate is None else (attn.gate.W_g,)):
            W.weight.zero_()
            W.bias.zero_()
        attn.W_q.bias[0] = sink_score * d_model**0.5  # q . k_1 / sqrt(d_k) = sink_score
        attn.W_k.weight[0, 0] = 1.0  # k_1 = e_1; every other token's first coordinate is 0
        attn.W_v.weight[1:, 1:] = torch.eye(d_model - 1)  # v_1 = 0, v_j = x_j
        attn.W_o.weight.copy_(torch.eye(d_model))
        if gate is not None:
            attn.gate.W_g.bias.fill_(gate_bias)  # sigmoid(gate_bias) on every coordinate
    return attn.eval()


def quiet_head_steps(
    x: torch.Tensor, sink_score: float, gate_bias: float | None = None
) -> dict[str, torch.Tensor]:
    """The intermediates (its forward's ``record``) of :func:`quiet_head` on ``x`` ``(1, n, d_model)``,
    causal."""
    steps = {}
    quiet_head(x.size(-1), sink_score, gate_bias)(x, mask=causal_mask(x.size(1)), record=steps)
    return steps


def output_size(steps: dict[str, torch.Tensor]) -> float:
    """The mean length of the outputs of queries 2 to n (query 1 sees only the sink)."""
    return steps["out"][0, 1:].norm(dim=-1).mean().item()
