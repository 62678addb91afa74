"""Bands: which keys a query may see on top of the mask it is given, and what a decoder may then forget.

:class:`mha.MultiHeadAttention` calls ``mask = band(mask, q, k, start)`` before the scores are masked,
and :meth:`~mha.MultiHeadAttention.decode` keeps ``band.trim(cache)``. The 2017 layer's part is
:class:`NoBand`: the mask as given, every token kept. :class:`Window` (Mistral, Gemma, gpt-oss) and
:class:`Chunk` (Llama 4) are causal bands; both masks come from :func:`mha.causal_mask`.

Shape legend:
    B    batch size
    h    number of heads; h_kv of key/value heads
    n_q  number of queries (the new tokens)
    n_k  number of keys (the cached tokens, then the new ones)
    d_k  head width
"""

from __future__ import annotations

from torch import Tensor, nn

from mha._checks import check_positive_int
from mha.cache import KVCache
from mha.masks import causal_mask


class NoBand(nn.Module):
    """The 2017 layer's band: none. Every key the mask allows; a decoder keeps every token."""

    def forward(self, mask: Tensor | None, q: Tensor, k: Tensor, start: int) -> Tensor | None:
        return mask

    def trim(self, cache: KVCache) -> KVCache:
        return cache


class Window(nn.Module):
    """A sliding window of ``w`` keys (Beltagy et al. 2020; Mistral 7B, Gemma 2 and 3, gpt-oss): query ``i``
    sees keys ``j`` with ``i - w < j <= i``, itself included (transformers' ``sliding_window``), on top of the
    mask it is given; a decoder keeps only the last ``w`` tokens.

    Args:
        w: the number of keys a query sees.
    """

    def __init__(self, w: int) -> None:
        super().__init__()
        self.w = check_positive_int("w", w)

    def extra_repr(self) -> str:
        return f"w={self.w}"

    def forward(self, mask: Tensor | None, q: Tensor, k: Tensor, start: int) -> Tensor:
        """``mask`` and the window, for queries ``q`` ``(B, h, n_q, d_k)`` and keys ``k``
        ``(B, h_kv, n_k, d_k)`` with key 0 at position ``start``: ``(n_q, n_k)``, or broadcast to
        ``(B, h, n_q, n_k)`` with a mask."""
        band = causal_mask(q.size(-2), k.size(-2), window=self.w, start=start, device=q.device)  # (n_q, n_k)
        return band if mask is None else mask & band

    def trim(self, cache: KVCache) -> KVCache:
        """``cache`` without the tokens before the last ``w``, which no later query sees."""
        return _drop(cache, cache.end - self.w)


class Chunk(nn.Module):
    """Chunked attention (Llama 4's ``attention_chunk_size``): the positions are cut into chunks of ``c``,
    aligned to position 0, and a query sees the earlier keys of its own chunk only, on top of the mask it is
    given; a decoder keeps only the current chunk.

    Args:
        c: the length of a chunk.
    """

    def __init__(self, c: int) -> None:
        super().__init__()
        self.c = check_positive_int("c", c)

    def extra_repr(self) -> str:
        return f"c={self.c}"

    def forward(self, mask: Tensor | None, q: Tensor, k: Tensor, start: int) -> Tensor:
        band = causal_mask(q.size(-2), k.size(-2), chunk=self.c, start=start, device=q.device)  # (n_q, n_k)
        return band if mask is None else mask & band

    def trim(self, cache: KVCache) -> KVCache:
        """``cache`` without the tokens of earlier chunks."""
        return _drop(cache, cache.end // self.c * self.c)


def _drop(cache: KVCache, first: int) -> KVCache:
    """``cache`` from position ``first`` on (nothing dropped if it starts there or later)."""
    drop = first - cache.start
    if drop <= 0:
        return cache
    # clone: a slice would keep the whole storage alive, and nbytes would undercount it
    k, v = (t[..., drop:, :].clone() for t in (cache.k, cache.v))  # (B, h_kv, n, d_k) each
    return KVCache(k, v, first)
