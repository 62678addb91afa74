"""What sparse attention costs: a lightning indexer over every earlier key, attention over ``top_k`` of them.

DeepSeek Sparse Attention (DeepSeek-V3.2) scores every earlier key for each query with a cheap indexer and
attends to the query's ``top_k`` best only (:class:`mha.MultiHeadLatentAttention` with ``top_k``). Over a
causal sequence of ``n`` tokens, query ``t`` (from 1) sees ``t`` keys, so:

- dense attention scores ``n (n + 1) / 2`` query–key pairs;
- sparse attention attends to ``sum_t min(t, top_k)`` pairs, ``top_k n - top_k (top_k - 1) / 2`` once
  ``n >= top_k``: linear in ``n``;
- its indexer still scores all ``n (n + 1) / 2`` pairs, each for ``h_i d_i`` multiply-adds (plus ``h_i`` for
  the heads' weights), far fewer than a pair of attention costs.

Each pair's multiply-adds come from the caller (for DeepSeek's layer, :func:`mha.costs.layer_costs`'s
``key_macs``), so this needs no model.
"""

from __future__ import annotations

from typing import NamedTuple

from mha._checks import check_positive_int


class SparseMacs(NamedTuple):
    """Multiply-adds over one causal sequence, for one layer: dense attention, and sparse attention's two
    parts (``attention + indexer`` is what it costs)."""

    dense: int  # every pair attended to
    attention: int  # the top_k pairs of each query
    indexer: int  # every pair scored by the indexer

    @property
    def sparse(self) -> int:
        """Sparse attention's total: attention over the kept pairs plus the indexer."""
        return self.attention + self.indexer


def causal_pairs(n: int, top_k: int | None = None) -> int:
    """The query–key pairs of a causal sequence of ``n`` tokens, ``sum_{t=1..n} min(t, top_k)``
    (``top_k=None``: all of them, ``n (n + 1) / 2``)."""
    n = check_positive_int("n", n)
    if top_k is None or top_k >= n:
        return n * (n + 1) // 2
    k = check_positive_int("top_k", top_k)
    return k * (k + 1) // 2 + (n - k) * k  # the first k queries keep all they see, the rest keep k


def sparse_attention_macs(
    n: int, *, pair_macs: int, top_k: int, index_heads: int, index_dim: int
) -> SparseMacs:
    """One layer's multiply-adds over a causal sequence of ``n`` tokens, dense and sparse.

    Args:
        n: the number of tokens.
        pair_macs: the multiply-adds of attention per query–key pair (score and weighted sum, all heads).
        top_k: the keys each query keeps.
        index_heads, index_dim: the indexer's ``h_i`` heads of width ``d_i``; a pair costs it
            ``h_i d_i + h_i`` (the scores, then their weighted sum).

    Returns:
        A :class:`SparseMacs`.
    """
    for name, value in (("pair_macs", pair_macs), ("index_heads", index_heads), ("index_dim", index_dim)):
        check_positive_int(name, value)
    every = causal_pairs(n)
    return SparseMacs(
        dense=every * pair_macs,
        attention=causal_pairs(n, top_k) * pair_macs,
        indexer=every * index_heads * (index_dim + 1),
    )
