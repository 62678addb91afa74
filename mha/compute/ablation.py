"""Switch heads off: zero chosen heads' outputs before ``W_o`` mixes them.

Used to ask what a head contributes: the toy models of "Why multiple heads?" and the pretrained encoder
of :mod:`mha.pretrained` are both measured with one head (or several) removed this way.

Shape legend:
    B        batch size
    n_q      number of queries
    h        number of heads
    d_k      width of each head
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence

import torch
from torch import nn

from mha.multihead import MultiHeadAttention


@contextlib.contextmanager
def ablate_heads(attn: MultiHeadAttention, heads: Iterable[int]) -> Iterator[None]:
    """Within the ``with`` block, zero the outputs of ``heads`` before ``attn.W_o`` mixes them.

    ``W_o`` sees the heads side by side, ``Concat(head_1, ..., head_h)`` of width ``h * d_k``; a forward
    pre-hook multiplies the ``d_k`` columns of each ablated head by zero. Nothing else changes: the other
    heads, their weights and ``W_o``'s bias are untouched, and the hook is removed on exit.

    Args:
        attn: the attention layer.
        heads: indices in ``0..h-1``; an empty iterable ablates nothing.
    """
    heads = sorted(set(heads))
    if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < attn.h for i in heads):
        raise ValueError(f"heads must be ints in 0..h-1={attn.h - 1}, got {heads}")
    if not heads:
        yield
        return
    keep = torch.ones(attn.h, attn.d_k)  # (h, d_k)
    keep[heads] = 0.0

    def zero_heads(module: nn.Module, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        (concat,) = args  # (B, n_q, h * d_k)
        return (concat * keep.to(concat).flatten(),)  # (B, n_q, h * d_k)

    handle = attn.W_o.register_forward_pre_hook(zero_heads)
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def ablate_layer_heads(
    layers: Sequence[MultiHeadAttention], heads: Iterable[tuple[int, int]]
) -> Iterator[None]:
    """Within the ``with`` block, zero the heads ``heads``, ``(layer, head)`` pairs (0-based) over the
    attention layers ``layers`` of a model, each by :func:`ablate_heads` on its layer."""
    by_layer: dict[int, list[int]] = {}
    for layer, head in heads:
        by_layer.setdefault(layer, []).append(head)
    with contextlib.ExitStack() as stack:
        for layer, layer_heads in by_layer.items():
            stack.enter_context(ablate_heads(layers[layer], layer_heads))
        yield
