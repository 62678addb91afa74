"""What a decoder keeps of the tokens seen so far: the caches that ``decode`` returns and takes back.

:class:`KVCache` holds the keys and values of :class:`mha.MultiHeadAttention`, :class:`LatentCache` the latent
and the rotary key of :class:`mha.MultiHeadLatentAttention`. Each is a named tuple of tensors whose
sequence axis is the second to last, so :func:`grow` appends new tokens to either (a window or a chunk
drops the tokens it hides from every later query: :mod:`mha.bands`).

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

    A keys-as-values layer (:class:`mha.multihead.KeysAsValues`, Gemma 4's full layers) holds two tensors too,
    as transformers' cache does: its keys (normalised and rotated) and its values (the same projection,
    normalised as values), so that a decoding step works on the new tokens only.
    """

    k: Tensor
    v: Tensor
    start: int = 0

    @property
    def end(self) -> int:
        """The position of the next token: ``start + n``."""
        return self.start + self.k.size(-2)

    @property
    def nbytes(self) -> int:
        """Bytes held: ``2 B h_kv n d_k`` elements, what :func:`mha.costs.kv_cache_bytes` counts per layer."""
        return self.k.nbytes + self.v.nbytes


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
