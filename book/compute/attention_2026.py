"""What the chapter "Attention in 2025–2026" computes beside the layers themselves.

- :func:`associative_recall`: write ``m`` key–value pairs into a memory, then ask for each value by its key:
  the share recalled by a linear-attention state, a delta-rule state (both ``d_v x d_k``, from
  :mod:`mha.linear.rules`) and a KV cache read by softmax attention
  (:func:`mha.scaled_dot_product_attention`);
- :func:`select_top_k`: the keys each query keeps, its ``top_k`` best by index score among those it may see,
  ties to the earlier key: the rule of DeepSeek Sparse Attention in :class:`mha.MultiHeadLatentAttention`;
- :func:`index_selection`: the sparse-attention figure's numbers for a sentence: a lightning indexer's scores
  (DeepSeek-V3.2's formula, on the explorer's token vectors, with weights from
  :mod:`book.compute.portable_random`) and :func:`select_top_k` under a causal mask. The figure
  (``book/widgets/static/ports/sparse.js``) ports it; ``tests/unit/book/compute/test_attention_2026.py``
  keeps the two equal.

Shape legend:
    n    number of tokens (queries and keys: self-attention)
    m    number of key–value pairs written to a memory
    d_k  width of a key (and of a query)
    d_v  width of a value
    h_i  number of indexer heads
    d_i  width of an indexer head and of the one index key
"""

from __future__ import annotations

import math

import torch

from book.compute.explorer import MAX_SEED, embed_tokens, split_tokens
from book.compute.portable_random import stream_key, uniform
from mha._checks import check_positive_int
from mha.attention import scaled_dot_product_attention
from mha.linear.rules import chunked
from mha.masks import causal_mask

MEMORIES = ("linear attention", "delta rule", "KV cache")  # what associative_recall writes the pairs into
INDEX_STREAM = 0x696E6478  # "indx": the stream words of the indexer's weights (the explorer's are 0..7)
INDEX_SHAPE = {
    "d_model": 16,
    "index_heads": 2,
    "index_dim": 8,
}  # the figure's indexer: small, as the explorer


def associative_recall(pairs: int, d_k: int, *, memory: str, d_v: int | None = None, seed: int = 0) -> float:
    """The share of ``pairs`` key–value pairs a memory gives back when asked with each key.

    The keys are random unit vectors of width ``d_k`` (the layers of 2025 normalise their keys so), the
    values random vectors of width ``d_v``. The pairs are written in order, then each key is the query: a
    pair counts as recalled when the value read back is nearer (by cosine) to its own value than to any other.

    - ``"linear attention"``: the state ``S = sum_j v_j k_j^T``; reading ``S k_i`` gives ``v_i`` plus every
      other value times its key's overlap with ``k_i``.
    - ``"delta rule"``: ``S_t = S_{t-1} + (v_t - S_{t-1} k_t) k_t^T`` (``beta = 1``): each write replaces
      what the state held along ``k_t``; beyond ``d_k`` pairs the keys cannot all be told apart.
    - ``"KV cache"``: every key and value kept; softmax attention of ``k_i`` over them, the scores times
      ``sqrt(d_k)`` (a sharp head, as a trained one can be).

    Args:
        pairs: ``m``, the number of pairs written.
        d_k: the key width, which fixes a state's size ``d_v x d_k``.
        memory: one of :data:`MEMORIES`.
        d_v: the value width; ``None`` means ``d_k``.
        seed: the seed of the keys and values (``torch.Generator``, float64).

    Returns:
        The share recalled, in ``[0, 1]``.
    """
    m, d_k = check_positive_int("pairs", pairs), check_positive_int("d_k", d_k)
    d_v = d_k if d_v is None else check_positive_int("d_v", d_v)
    if memory not in MEMORIES:
        raise ValueError(f"memory must be one of {MEMORIES}, got {memory!r}")
    g = torch.Generator().manual_seed(seed)
    k = torch.randn(m, d_k, generator=g, dtype=torch.float64)  # (m, d_k)
    k = k / k.norm(dim=-1, keepdim=True)  # unit keys
    v = torch.randn(m, d_v, generator=g, dtype=torch.float64)  # (m, d_v)
    if memory == "KV cache":
        q = k * d_k  # (m, d_k): softmax(q k^T / sqrt(d_k)) = softmax(sqrt(d_k) k k^T), a sharp head
        read, _ = scaled_dot_product_attention(q, k, v)  # (m, d_v)
    else:
        beta = torch.ones(1, 1, m, dtype=torch.float64) if memory == "delta rule" else None  # (B, h, m)
        _, S = chunked(
            k[None, None], k[None, None], v[None, None], beta=beta, chunk=64
        )  # S: (1, 1, d_v, d_k)
        read = k @ S[0, 0].T  # (m, d_v): row i is S k_i
    cosine = (read / read.norm(dim=-1, keepdim=True)) @ (v / v.norm(dim=-1, keepdim=True)).T  # (m, m)
    return (cosine.argmax(dim=-1) == torch.arange(m)).double().mean().item()


def select_top_k(scores: torch.Tensor, top_k: int, visible: torch.Tensor | None = None) -> torch.Tensor:
    """The keys each query keeps: its ``top_k`` highest ``scores`` among the ``visible`` keys, ties going to
    the earlier key (a stable sort), as :class:`mha.MultiHeadLatentAttention` selects with ``top_k``.

    Args:
        scores: index scores ``(..., n_q, n_k)``.
        top_k: the number of keys a query keeps; a query that sees fewer keeps them all.
        visible: boolean, broadcastable to ``scores``, ``True`` where a query may see a key; ``None``: all.

    Returns:
        Boolean ``(..., n_q, n_k)``: ``True`` for the keys kept.
    """
    check_positive_int("top_k", top_k)
    visible = torch.ones_like(scores, dtype=torch.bool) if visible is None else visible.expand(scores.shape)
    scores = scores.masked_fill(~visible, float("-inf"))  # (..., n_q, n_k): a hidden key is never chosen
    best = scores.sort(dim=-1, descending=True, stable=True).indices[..., :top_k]  # (..., n_q, top_k)
    return torch.zeros_like(visible).scatter_(-1, best, True) & visible


def index_weights(seed: int) -> dict[str, torch.Tensor]:
    """The figure's indexer: ``W_iq (h_i d_i, d_model)``, ``W_ik (d_i, d_model)``, ``W_iw (h_i, d_model)``,
    uniform in ``±1/sqrt(d_model)`` (``nn.Linear``'s range), stream ``(INDEX_STREAM, seed, i)`` for the
    ``i``-th, row-major, float64."""
    d, h_i, d_i = INDEX_SHAPE["d_model"], INDEX_SHAPE["index_heads"], INDEX_SHAPE["index_dim"]
    shapes = {"W_iq": (h_i * d_i, d), "W_ik": (d_i, d), "W_iw": (h_i, d)}
    return {
        name: ((uniform(stream_key(INDEX_STREAM, seed, i), math.prod(shape)) * 2 - 1) * d**-0.5).view(shape)
        for i, (name, shape) in enumerate(shapes.items())
    }


def index_selection(sentence: str, top_k: int, *, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A lightning indexer's scores for a sentence, and the keys each query keeps under a causal mask.

    The indexer of DeepSeek-V3.2 (as :class:`mha.MultiHeadLatentAttention` computes it, without its norms
    and rotation): ``I_ts = sum_j w_tj ReLU(q_tj . k_s / sqrt(d_i))``, ``q_tj`` from ``x_t W_iq``, one key
    ``k_s = x_s W_ik`` for all ``h_i`` heads, and the heads' weights ``w_t = x_t W_iw / sqrt(h_i)``; ``x`` is
    the head explorer's input (:func:`book.compute.explorer.embed_tokens`) at :data:`INDEX_SHAPE`'s width.

    Args:
        sentence: split into tokens by :func:`book.compute.explorer.split_tokens`; at least one.
        top_k: the number of keys each query keeps (:func:`select_top_k`).
        seed: the seed of the indexer's weights (:func:`index_weights`), ``0 .. 2**31 - 1``.

    Returns:
        ``(scores, selected)``: float64 ``(n, n)`` (``-inf`` above the diagonal) and boolean ``(n, n)``.
    """
    tokens = split_tokens(sentence)
    if not tokens:
        raise ValueError("sentence has no tokens: type at least one word")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an int in 0..{MAX_SEED}, got {seed!r}")
    n, h_i, d_i = len(tokens), INDEX_SHAPE["index_heads"], INDEX_SHAPE["index_dim"]
    W = index_weights(seed)
    x = embed_tokens(tokens, INDEX_SHAPE["d_model"], dtype=torch.float64)  # (n, d_model)
    q = (x @ W["W_iq"].T).view(n, h_i, d_i).transpose(0, 1)  # (h_i, n, d_i)
    k = x @ W["W_ik"].T  # (n, d_i): one index key for all heads
    w = x @ W["W_iw"].T * h_i**-0.5  # (n, h_i): each head's weight, per query
    relu = torch.relu(q @ k.T * d_i**-0.5)  # (h_i, n, n)
    scores = torch.einsum("qj,jqk->qk", w, relu)  # (n, n)
    visible = causal_mask(n)  # (n, n)
    return scores.masked_fill(~visible, float("-inf")), select_top_k(scores, top_k, visible)
