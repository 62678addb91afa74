"""What the chapter "Multi-head attention since 2017" computes beside the layer itself.

- :func:`blockwise_attention`: attention over blocks of queries and keys with an online softmax, the
  arithmetic of FlashAttention (Dao et al. 2022; Milakov & Gimelshein 2018), in a few lines of PyTorch;
- :func:`largest_tensor_bytes`: the largest tensor any operation creates while a call runs (exact, counted
  per operation, so it shows whether an ``n x n`` matrix ever exists);
- :func:`layer_masks` and :func:`receptive_fields`: the masks of a stack of local (sliding-window) and global
  layers, and which inputs each position has seen after every layer. The chapter's window explorer
  (``book/widgets/static/ports/windows.js``) ports the two; ``tests/unit/book/compute/test_since_2017.py``
  keeps them equal.

Shape legend:
    B        batch size
    h        number of heads
    n_q      number of queries
    n_k      number of keys and values
    n        number of tokens (self-attention: n_q = n_k = n)
    d_k      width of each query and key head
    d_v      width of each value head
    L        number of layers
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mha._checks import check_positive_int
from mha.masks import causal_mask


def blockwise_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    is_causal: bool = False,
    block_q: int = 64,
    block_k: int = 64,
    correct: bool = True,
) -> torch.Tensor:
    r"""Scaled dot-product attention computed tile by tile, never holding the ``n_q x n_k`` scores.

    For each block of queries, the key/value blocks are visited in order while every query row keeps a
    running maximum ``m`` of its scores, a running sum ``l`` of ``exp(score - m)`` and an unnormalised output
    ``acc``. When a new block raises the maximum, the old sum and output are multiplied by
    ``exp(m_old - m_new)``: the same rescaling a softmax does at once. At the end ``acc / l`` is exactly
    :math:`\mathrm{softmax}(q k^T / \sqrt{d_k})\, v` (up to the order of additions). The largest tensor is one
    tile of scores, ``(B, h, block_q, block_k)``.

    Args:
        q: queries, shape ``(B, h, n_q, d_k)``.
        k: keys, shape ``(B, h, n_k, d_k)``.
        v: values, shape ``(B, h, n_k, d_v)``.
        is_causal: query ``i`` sees keys ``j <= i`` (as ``F.scaled_dot_product_attention(is_causal=True)``,
            aligned at the top left); key blocks wholly in the future are skipped.
        block_q: queries per block.
        block_k: keys per block.
        correct: ``False`` runs the bug of the chapter's exercise: the running sum is rescaled when the
            maximum rises, the output is not, so the blocks before the rise count too much.

    Returns:
        The attention output, shape ``(B, h, n_q, d_v)``.
    """
    if not isinstance(correct, bool):
        raise TypeError(f"correct must be a bool, got {type(correct).__name__}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name} must have shape (B, h, n, d), got {tuple(t.shape)}")
    block_q, block_k = check_positive_int("block_q", block_q), check_positive_int("block_k", block_k)
    B, h, n_q, d_k = q.shape
    n_k = k.size(-2)
    if k.shape != (B, h, n_k, d_k) or v.shape[:3] != (B, h, n_k):
        raise ValueError(
            f"k must have shape (B, h, n_k, d_k) = (B={B}, h={h}, n_k, d_k={d_k}) and v (B, h, n_k, d_v), "
            f"got k {tuple(k.shape)} and v {tuple(v.shape)}"
        )
    scale = d_k**-0.5
    out = torch.empty(B, h, n_q, v.size(-1), dtype=v.dtype, device=v.device)  # (B, h, n_q, d_v)
    for i0 in range(0, n_q, block_q):
        q_blk = q[:, :, i0 : i0 + block_q]  # (B, h, bq, d_k)
        bq = q_blk.size(-2)
        m = torch.full((B, h, bq, 1), -torch.inf, dtype=q.dtype, device=q.device)  # running maximum
        l = torch.zeros(B, h, bq, 1, dtype=q.dtype, device=q.device)  # running sum of exp(score - m)  # noqa: E741
        acc = torch.zeros(B, h, bq, v.size(-1), dtype=v.dtype, device=v.device)  # (B, h, bq, d_v)
        for j0 in range(0, n_k, block_k):
            if is_causal and j0 > i0 + bq - 1:
                break  # every key of this block and the next lies in the future of every query here
            k_blk = k[:, :, j0 : j0 + block_k]  # (B, h, bk, d_k)
            v_blk = v[:, :, j0 : j0 + block_k]  # (B, h, bk, d_v)
            s = (q_blk @ k_blk.transpose(-2, -1)) * scale  # (B, h, bq, d_k) @ (B, h, d_k, bk) -> (.., bq, bk)
            if is_causal:
                rows = torch.arange(i0, i0 + bq, device=q.device)[:, None]  # (bq, 1)
                cols = torch.arange(j0, j0 + k_blk.size(-2), device=q.device)[None, :]  # (1, bk)
                s = s.masked_fill(cols > rows, -torch.inf)  # (B, h, bq, bk)
            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (B, h, bq, 1)
            p = torch.exp(s - m_new)  # (B, h, bq, bk)
            correction = torch.exp(m - m_new)  # (B, h, bq, 1): how much the old maximum overstated
            l = l * correction + p.sum(dim=-1, keepdim=True)  # noqa: E741
            if correct:
                acc = acc * correction  # the old output, weighted as the new maximum requires
            acc = acc + p @ v_blk  # (B, h, bq, bk) @ (B, h, bk, d_v) -> (B, h, bq, d_v)
            m = m_new
        out[:, :, i0 : i0 + bq] = acc / l  # (B, h, bq, d_v)
    return out


class _LargestTensor(TorchDispatchMode):
    """Records the bytes of the largest tensor that any ATen operation returns inside the ``with`` block."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0  # bytes of the largest output seen so far

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        for t in outputs:
            if isinstance(t, torch.Tensor):
                self.largest = max(self.largest, t.numel() * t.element_size())
        return result


def largest_tensor_bytes(fn: Callable[[], object]) -> int:
    """Bytes of the largest tensor that one operation creates while ``fn()`` runs (views count too).

    Every PyTorch operation's outputs are seen as they are made, so the count is exact and the same on
    every machine, unlike a reading of the allocator. The inputs that ``fn`` closes over are not counted.
    A fused kernel counts as one operation: only its outputs are seen.

    Args:
        fn: a call with no arguments, e.g. ``lambda: blockwise_attention(q, k, v)``.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable with no arguments, got {type(fn).__name__}")
    with _LargestTensor() as mode:
        fn()
    return mode.largest


def layer_masks(n: int, *, window: int, layers: int, global_period: int | None = None) -> torch.Tensor:
    """The causal masks of a stack of local layers (sliding window) and, optionally, global layers.

    Layer ``i`` (0-based) is global iff ``global_period`` is given and ``(i + 1) % global_period == 0``, the
    rule of :class:`mha.costs.ModelConfig` (Gemma 3: period 6, five local layers then one global; gpt-oss:
    period 2, alternating). A local layer is ``causal_mask(n, window=window)``, a global one
    ``causal_mask(n)``.

    Args:
        n: number of tokens.
        window: keys a local layer sees, itself included.
        layers: number of layers ``L``.
        global_period: one global layer in every this many; ``None``: every layer is local.

    Returns:
        Boolean masks, shape ``(L, n, n)``, ``True`` where a query may attend to a key.
    """
    n, window = check_positive_int("n", n), check_positive_int("window", window)
    layers = check_positive_int("layers", layers)
    if global_period is not None and check_positive_int("global_period", global_period) < 2:
        raise ValueError(f"global_period must be at least 2 (or None: no global layer), got {global_period}")
    is_global = [global_period is not None and (i + 1) % global_period == 0 for i in range(layers)]
    masks = [causal_mask(n, window=None if g else window) for g in is_global]  # L x (n, n)
    return torch.stack(masks)  # (L, n, n)


def receptive_fields(masks: torch.Tensor) -> torch.Tensor:
    """Which inputs each position has seen after each layer of a stack with these masks.

    After layer 1 position ``i`` has seen the keys its mask allows; after layer ``l`` it has seen every input
    that some key it attends to had seen after layer ``l - 1``: ``seen_l = mask_l @ seen_{l-1}`` (boolean).

    Args:
        masks: boolean masks, shape ``(L, n, n)`` (:func:`layer_masks`).

    Returns:
        Booleans, shape ``(L, n, n)``: ``[l, i, j]`` is ``True`` if output ``i`` of layer ``l + 1`` depends on
        input token ``j``.
    """
    if not isinstance(masks, torch.Tensor) or masks.dtype != torch.bool:
        kind = getattr(masks, "dtype", type(masks).__name__)
        raise TypeError(f"masks must be a boolean torch.Tensor, got {kind}")
    if masks.dim() != 3 or masks.size(1) != masks.size(2):
        raise ValueError(f"masks must have shape (L, n, n), got {tuple(masks.shape)}")
    seen = [masks[0]]
    for mask in masks[1:]:
        seen.append((mask.to(torch.int64) @ seen[-1].to(torch.int64)) > 0)  # (n, n) @ (n, n) -> (n, n)
    return torch.stack(seen)  # (L, n, n)
