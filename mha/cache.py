"""What a decoder keeps of the tokens seen so far: the caches that ``decode`` returns and takes back.

:class:`KVCache` holds the keys and values of :class:`mha.MultiHeadAttention`, :class:`LatentCache` the latent
and the rotary key of :class:`mha.MultiHeadLatentAttention`. Each is a named tuple of tensors whose
sequence axis is the second to last, so :func:`grow` appends new tokens to either; :func:`trim` drops the
tokens a window or a chunk hides from every later query.

Shape legend:
    B     batch size
    n     number of tokens held
    h_kv  number of key/value heads
    d_k   head width
    d_c   width of the key-value latent
    d_r   width of the rotary key
    d_i   width of the lightning indexer's key
"""

from __future__ import annotations

from typing import NamedTuple, TypeVar

import torch
from torch import Tensor


class KVCache(NamedTuple):
    """The keys and values of the tokens seen so far, per key/value head, as :meth:`MultiHeadAttention.decode`
    keeps them: ``k`` and ``v`` of shape ``(B, h_kv, n, d_k)`` (keys already rotated in a rotary layer).

    A sliding-window or chunked layer keeps only the tokens a later query may still see; ``start`` is the
    position of the first one held (0 until tokens are dropped), so the next token sits at ``start + n``.

    A keys-as-values layer (``k_eq_v``, Gemma 4's full layers) holds one tensor per token, not two: ``k`` is
    the key projection before its norm and rotation, from which the layer computes both its keys and its
    values, and ``v`` is ``None``.
    """

    k: Tensor
    v: Tensor | None
    start: int = 0

    @property
    def nbytes(self) -> int:
        """Bytes held: ``2 B h_kv n d_k`` elements (``B h_kv n d_k`` with keys as values), what
        :func:`mha.costs.kv_cache_bytes` counts per layer."""
        return sum(t.nbytes for t in (self.k, self.v) if t is not None)


class LatentCache(NamedTuple):
    """What :meth:`MultiHeadLatentAttention.decode` keeps of the tokens seen so far: the normalised latent
    ``c_kv`` ``(B, n, d_c)`` and the rotated key ``k_rope`` ``(B, n, d_r)``, one for all heads; with DeepSeek
    Sparse Attention, also the lightning indexer's key ``k_index`` ``(B, n, d_i)`` (else ``None``)."""

    c_kv: Tensor
    k_rope: Tensor
    k_index: Tensor | None = None

    @property
    def nbytes(self) -> int:
        """Bytes held: ``B n (d_c + d_r)`` elements (``B n (d_c + d_r + d_i)`` with an indexer), whatever the
        number of heads."""
        return sum(t.nbytes for t in self if t is not None)


Cache = TypeVar("Cache", KVCache, LatentCache)


def grow(cache: Cache | None, new: Cache) -> Cache:
    """``cache`` with the tokens of ``new`` (a cache of the same kind) appended along the sequence axis, -2;
    ``new`` itself at the start. Whatever is not a tensor (``KVCache.start``) is the old cache's."""
    if cache is None:
        return new
    fields = zip(cache, new, strict=True)
    return type(new)(*(torch.cat([a, b], dim=-2) if isinstance(b, Tensor) else a for a, b in fields))


def trim(cache: KVCache, window: int | None, chunk: int | None) -> KVCache:
    """``cache`` without the tokens that no later query sees, through a sliding window of ``window`` keys or
    in its chunk of ``chunk`` positions."""
    end = cache.start + cache.k.size(-2)  # the position of the next token
    first = max(cache.start, end - (window or end), end // chunk * chunk if chunk else 0)  # the first it sees
    if first == cache.start:
        return cache
    drop = first - cache.start
    # clone: a slice would keep the whole storage alive, and nbytes would undercount it
    k, v = (None if t is None else t[..., drop:, :].clone() for t in cache[:2])  # (B, h_kv, n, d_k) each
    return KVCache(k, v, first)
