r"""Every intermediate tensor of multi-head self-attention, named, for one sequence.

:func:`attention_stages` runs a :class:`~mha.MultiHeadAttention` on one sequence and keeps each
intermediate result, so that a chapter can print or plot them one by one. It is the module's own forward
pass (``forward(..., record=...)`` keeps them), not a copy of it.

Shape legend:
    n        number of tokens (self-attention: n_q = n_k = n)
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mha._checks import check_float_tensor
from mha.multihead import MultiHeadAttention


@dataclass(frozen=True)
class Stage:
    """How to describe one intermediate tensor."""

    key: str  # the key in the mapping returned by attention_stages
    title: str  # a few words for a reader
    formula: str  # the step in matplotlib mathtext (a subset of LaTeX)
    shape: str  # its shape in the legend's symbols
    side_by_side: bool = False  # its columns are the h heads side by side, d_k each


# What a picture calls the axes of a stage, by the symbol of its shape (a (n, n) stage: query and key).
AXIS_NAMES = {"n": "token", "d_model": "dimension", "d_k": "dimension in the head"}

STAGES = (
    Stage("x", "input", r"$X$", "(n, d_model)"),
    Stage("q", "queries", r"$Q = X W^Q$", "(n, d_model)", side_by_side=True),
    Stage("k", "keys", r"$K = X W^K$", "(n, d_model)", side_by_side=True),
    Stage("v", "values", r"$V = X W^V$", "(n, d_model)", side_by_side=True),
    Stage("q_heads", "queries split into heads", r"$Q_i = X W_i^Q$", "(h, n, d_k)"),
    Stage("k_heads", "keys split into heads", r"$K_i = X W_i^K$", "(h, n, d_k)"),
    Stage("v_heads", "values split into heads", r"$V_i = X W_i^V$", "(h, n, d_k)"),
    Stage("scores", "scores", r"$S_i = Q_i K_i^\top$", "(h, n, n)"),
    Stage("scaled_scores", "scaled scores", r"$S_i / \sqrt{d_k}$", "(h, n, n)"),
    Stage("weights", "attention weights", r"$A_i = \mathrm{softmax}(S_i / \sqrt{d_k})$", "(h, n, n)"),
    Stage("heads", "head outputs", r"$\mathrm{head}_i = A_i V_i$", "(h, n, d_k)"),
    Stage(
        "concat",
        "concatenation",
        r"$\mathrm{Concat}(\mathrm{head}_1, \ldots, \mathrm{head}_h)$",
        "(n, d_model)",
        side_by_side=True,
    ),
    Stage("out", "output projection", r"$\mathrm{Concat}(\ldots)\, W^O$", "(n, d_model)"),
)


def stage_decimals(values: torch.Tensor, key: str) -> int:
    """How many decimals a picture prints a stage's values with: 2 for the weights, else 2, 1 or 0 as its
    largest magnitude is below 10, below 100 or larger (the stage figure and the page's stepper use it)."""
    if key == "weights":
        return 2
    biggest = float(values.abs().max()) if values.numel() else 0.0
    return 0 if biggest >= 100 else 1 if biggest >= 10 else 2


def attention_stages(attn: MultiHeadAttention, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Run multi-head self-attention on one sequence and return every intermediate tensor.

    Dropout is not applied (the result is what ``attn.eval()`` computes).

    Args:
        attn: a :class:`~mha.MultiHeadAttention` with ordinary heads (``n_kv_heads == h``).
        x: one sequence of token vectors, shape ``(n, d_model)``, with the module's dtype.

    Returns:
        A dict whose keys are ``[s.key for s in STAGES]``, in that order, each mapped to a detached tensor
        of the shape that :data:`STAGES` gives.
    """
    if not isinstance(attn, MultiHeadAttention):
        raise TypeError(f"attn must be an mha.MultiHeadAttention, got {type(attn).__name__}")
    if attn.n_kv_heads != attn.h:
        raise ValueError("attention_stages supports ordinary multi-head attention only (n_kv_heads == h)")
    check_float_tensor("x", x)
    if x.dim() != 2 or x.size(-1) != attn.d_model:
        raise ValueError(f"x must have shape (n, d_model={attn.d_model}), got {tuple(x.shape)}")
    if x.dtype != attn.W_q.weight.dtype:
        raise TypeError(f"x has dtype {x.dtype} but the module's parameters have {attn.W_q.weight.dtype}")
    training = attn.training
    try:
        with torch.no_grad():
            steps = {}  # every tensor of the one forward pass, with a batch axis of 1
            attn.eval()(x[None], record=steps)
    finally:
        attn.train(training)
    return {stage.key: (x if stage.key == "x" else steps[stage.key][0]).detach().clone() for stage in STAGES}
