"""The output gate: what multiplies the merged heads before ``W_o``.

:class:`mha.MultiHeadAttention` calls ``out = W_o(gate(concat, x))``; the 2017 layer's part is
:class:`NoGate`, which returns the heads as they are. :class:`OutputGate` is the gate of Qwen3-Next and
Qwen3.5.

Shape legend:
    B        batch size
    n_q      number of queries
    d_model  model width
    h d_k    the merged heads' width (h heads of d_k)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha._checks import check_positive_int


class NoGate(nn.Module):
    """The 2017 layer's gate: none; the merged heads go to ``W_o`` as they are."""

    def forward(self, concat: Tensor, x: Tensor) -> Tensor:
        return concat


class OutputGate(nn.Module):
    """A gate per head coordinate, ``concat * sigmoid(x W_g)`` (Qiu et al. 2025, "Gated Attention for Large
    Language Models"; Qwen3-Next and Qwen3.5, whose ``q_proj`` holds each head's query then its gate).

    Args:
        d_model: the width of the layer's input ``x``, which the gate reads.
        width: the merged heads' width ``h d_k``, one gate each.
        bias: whether ``W_g`` has a bias.

    Attributes:
        W_g: ``nn.Linear(d_model, width)``.
    """

    def __init__(self, d_model: int, width: int, *, bias: bool = True) -> None:
        super().__init__()
        self.W_g = nn.Linear(
            check_positive_int("d_model", d_model), check_positive_int("width", width), bias=bias
        )

    def check(self, *, d_model: int, h: int, d_k: int) -> None:
        """Raise ``ValueError`` unless ``W_g`` reads ``d_model`` and gates ``h d_k`` coordinates."""
        if (self.W_g.in_features, self.W_g.out_features) != (d_model, h * d_k):
            raise ValueError(
                f"gate=OutputGate({self.W_g.in_features}, {self.W_g.out_features}) needs "
                f"OutputGate(d_model={d_model}, h * d_k={h * d_k})"
            )

    def forward(self, concat: Tensor, x: Tensor) -> Tensor:
        """``concat`` ``(B, n_q, h d_k)`` times ``sigmoid(x W_g)``, ``x`` the query input
        ``(B, n_q, d_model)``."""
        return concat * torch.sigmoid(self.W_g(x))  # (B, n_q, h d_k)
