"""The small worked example of the chapter "Step by step": 4 tokens, d_model = 8, h = 2, as data.

The numbers come from a Chinese tutorial on multi-head attention (多头注意力机制：理论深度解析, section 3.2),
which gives the input, both query projections, head 1's key and value projections and the output
projection, but prints wrong intermediate results and leaves head 2's key and value projections
unspecified. Our choice for those two, stated once here and tested:

    In the tutorial, head 1's ``W_k`` and ``W_v`` are head 1's ``W_q`` with its columns reordered:
    ``W_k^1 = W_q^1[:, [1, 0, 3, 2]]`` and ``W_v^1 = W_q^1[:, [2, 3, 0, 1]]``. We build head 2's the
    same way from head 2's ``W_q``: ``W_k^2 = W_q^2[:, [1, 0, 3, 2]]``, ``W_v^2 = W_q^2[:, [2, 3, 0, 1]]``.

The matrices follow the paper's convention ``head_i = Attention(X W_q^i, X W_k^i, X W_v^i)`` with
``W_q^i`` of shape ``(d_model, d_k)`` multiplying from the right. ``torch.nn.Linear`` stores the transpose,
``(out_features, in_features)``; :meth:`WorkedExample.module` does that bookkeeping.

Shape legend:
    n        number of tokens (4)
    d_model  model width (8)
    h        number of heads (2)
    d_k      width of each head, d_model / h (4)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mha.multihead import MultiHeadAttention

# The tutorial's tables, typed as printed there. Rows are input dimensions, columns output dimensions.
_X = (  # (n, d_model): Q = K = V = X, self-attention
    (1, 2, 3, 4, 5, 6, 7, 8),
    (2, 3, 4, 5, 6, 7, 8, 9),
    (3, 4, 5, 6, 7, 8, 9, 10),
    (4, 5, 6, 7, 8, 9, 10, 11),
)
_W_Q1 = (  # (d_model, d_k)
    (0.1, 0.2, 0.3, 0.4),
    (0.2, 0.3, 0.4, 0.5),
    (0.3, 0.4, 0.5, 0.6),
    (0.4, 0.5, 0.6, 0.7),
    (0.5, 0.6, 0.7, 0.8),
    (0.6, 0.7, 0.8, 0.9),
    (0.7, 0.8, 0.9, 1.0),
    (0.8, 0.9, 1.0, 1.1),
)
_W_K1 = (
    (0.2, 0.1, 0.4, 0.3),
    (0.3, 0.2, 0.5, 0.4),
    (0.4, 0.3, 0.6, 0.5),
    (0.5, 0.4, 0.7, 0.6),
    (0.6, 0.5, 0.8, 0.7),
    (0.7, 0.6, 0.9, 0.8),
    (0.8, 0.7, 1.0, 0.9),
    (0.9, 0.8, 1.1, 1.0),
)
_W_V1 = (
    (0.3, 0.4, 0.1, 0.2),
    (0.4, 0.5, 0.2, 0.3),
    (0.5, 0.6, 0.3, 0.4),
    (0.6, 0.7, 0.4, 0.5),
    (0.7, 0.8, 0.5, 0.6),
    (0.8, 0.9, 0.6, 0.7),
    (0.9, 1.0, 0.7, 0.8),
    (1.0, 1.1, 0.8, 0.9),
)
_W_Q2 = (
    (0.2, 0.4, 0.1, 0.3),
    (0.3, 0.5, 0.2, 0.4),
    (0.4, 0.6, 0.3, 0.5),
    (0.5, 0.7, 0.4, 0.6),
    (0.6, 0.8, 0.5, 0.7),
    (0.7, 0.9, 0.6, 0.8),
    (0.8, 1.0, 0.7, 0.9),
    (0.9, 1.1, 0.8, 1.0),
)
_W_O = (  # (h * d_k, d_model)
    (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
    (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9),
    (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1),
    (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2),
    (0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3),
    (0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4),
    (0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5),
)

# The column orders that turn a head's W_q into its W_k and W_v in the tutorial (see the module docstring).
KEY_COLUMNS = (1, 0, 3, 2)
VALUE_COLUMNS = (2, 3, 0, 1)

# Head 1's projections as the tutorial prints them ("具体计算结果"), kept to compare with the true ones.
_PRINTED = {
    "Q1": (
        (22.0, 25.2, 28.4, 31.6),
        (26.0, 29.8, 33.6, 37.4),
        (30.0, 34.4, 38.8, 43.2),
        (34.0, 39.0, 44.0, 49.0),
    ),
    "K1": (
        (22.8, 19.6, 32.0, 28.8),
        (26.8, 23.0, 37.6, 33.8),
        (30.8, 26.4, 43.2, 38.8),
        (34.8, 29.8, 48.8, 43.8),
    ),
    "V1": (
        (25.6, 28.8, 19.2, 22.4),
        (30.4, 34.2, 22.8, 26.6),
        (35.2, 39.6, 26.4, 30.8),
        (40.0, 45.0, 30.0, 35.0),
    ),
}


@dataclass(frozen=True)
class WorkedExample:
    """Inputs and weights of the worked example, in float64 and in the paper's orientation."""

    x: torch.Tensor  # (n, d_model) the 4 token vectors; self-attention, so Q = K = V = x
    W_q: torch.Tensor  # (h, d_model, d_k) per-head query projections W_q^i
    W_k: torch.Tensor  # (h, d_model, d_k) per-head key projections W_k^i (head 2's: our choice)
    W_v: torch.Tensor  # (h, d_model, d_k) per-head value projections W_v^i (head 2's: our choice)
    W_o: torch.Tensor  # (h * d_k, d_model) output projection W^O
    printed: dict[str, torch.Tensor]  # the tutorial's printed Q1 = X W_q^1, K1, V1, each (n, d_k); wrong
    tokens: tuple[str, ...] = ()  # names of the n tokens, if the example has words

    @property
    def h(self) -> int:
        return self.W_q.size(0)

    @property
    def d_model(self) -> int:
        return self.x.size(-1)

    @property
    def d_k(self) -> int:
        return self.W_q.size(-1)

    def module(self) -> MultiHeadAttention:
        """A bias-free ``MultiHeadAttention`` (float64, eval mode) holding exactly these weights."""
        attn = MultiHeadAttention(self.d_model, self.h, bias=False).double().eval()
        with torch.no_grad():
            for linear, per_head in ((attn.W_q, self.W_q), (attn.W_k, self.W_k), (attn.W_v, self.W_v)):
                # Heads side by side: (h, d_model, d_k) -> (d_model, h * d_k); nn.Linear stores the transpose.
                side_by_side = per_head.permute(1, 0, 2).reshape(self.d_model, self.h * self.d_k)
                linear.weight.copy_(side_by_side.T)  # (h * d_k, d_model)
            attn.W_o.weight.copy_(self.W_o.T)  # (d_model, h * d_k)
        return attn


def worked_example() -> WorkedExample:
    """Return fresh tensors of the worked example (safe to modify).

    Returns:
        A :class:`WorkedExample` with ``x`` of shape ``(4, 8)``, per-head projections of shape
        ``(2, 8, 4)``, ``W_o`` of shape ``(8, 8)`` and the tutorial's printed (wrong) ``Q1``, ``K1``, ``V1``
        of shape ``(4, 4)``, all float64.
    """

    def t(rows: tuple) -> torch.Tensor:
        return torch.tensor(rows, dtype=torch.float64)

    w_q1, w_q2 = t(_W_Q1), t(_W_Q2)
    w_k2 = w_q2[:, list(KEY_COLUMNS)]  # our choice, by the tutorial's own rule for head 1
    w_v2 = w_q2[:, list(VALUE_COLUMNS)]
    return WorkedExample(
        x=t(_X),
        W_q=torch.stack([w_q1, w_q2]),  # (h, d_model, d_k)
        W_k=torch.stack([t(_W_K1), w_k2]),
        W_v=torch.stack([t(_W_V1), w_v2]),
        W_o=t(_W_O),
        printed={name: t(rows) for name, rows in _PRINTED.items()},
    )


# A well-scaled example to follow by hand: 4 tokens, d_model = 4, h = 2, d_k = 2, entries in {-1, 0, 1}.
# A token's vector is its word (dimensions 1-2) and its position (dimensions 3-4, a quarter turn per token).
_SMALL_TOKENS = ("the", "cat", "the", "dog")
_SMALL_X = (  # (n, d_model)
    (1, 0, 1, 0),  # "the", position 1
    (0, 1, 0, 1),  # "cat", position 2
    (1, 0, -1, 0),  # "the", position 3
    (0, -1, 0, -1),  # "dog", position 4
)
# Head 1 compares a query's position turned back a quarter (the previous position) with the keys'
# positions, and passes on the words; head 2 compares words with words, and passes on the positions.
_SMALL_W_Q = (((0, 0), (0, 0), (0, -1), (1, 0)), ((1, 0), (0, 1), (0, 0), (0, 0)))  # (h, d_model, d_k)
_SMALL_W_K = (((0, 0), (0, 0), (1, 0), (0, 1)), ((1, 0), (0, 1), (0, 0), (0, 0)))
_SMALL_W_V = (((1, 0), (0, 1), (0, 0), (0, 0)), ((0, 0), (0, 0), (1, 0), (0, 1)))


def small_example() -> WorkedExample:
    """A well-scaled example: scores of size 1, weights far from one-hot, and two heads that differ.

    Four tokens, "the cat the dog", each a word vector and a position vector side by side (d_model = 4). Head
    1 matches a query with the key one position before it (the positions go round a circle, so the first
    token's "previous" is the last); head 2 matches equal words. ``W_o`` is the identity, so the output
    is the two heads side by side. Every entry is -1, 0 or 1, so each step can be checked by hand.

    Returns:
        A :class:`WorkedExample` with ``x`` ``(4, 4)``, projections ``(2, 4, 2)``, ``W_o`` ``(4, 4)``,
        ``tokens`` and no ``printed`` tables.
    """
    return WorkedExample(
        x=torch.tensor(_SMALL_X, dtype=torch.float64),
        W_q=torch.tensor(_SMALL_W_Q, dtype=torch.float64),
        W_k=torch.tensor(_SMALL_W_K, dtype=torch.float64),
        W_v=torch.tensor(_SMALL_W_V, dtype=torch.float64),
        W_o=torch.eye(4, dtype=torch.float64),
        printed={},
        tokens=_SMALL_TOKENS,
    )
