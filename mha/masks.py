"""Boolean attention masks, in PyTorch's convention: ``True`` means "may attend".

Every mask here broadcasts to ``(B, h, n_q, n_k)``, the shape of the attention weights.

Shape legend:
    B    batch size
    h    number of heads
    n_q  number of queries
    n_k  number of keys
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from mha._checks import check_positive_int


def causal_mask(
    n_q: int,
    n_k: int | None = None,
    *,
    window: int | None = None,
    chunk: int | None = None,
    start: int = 0,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Mask that lets each query see only keys at its own position or earlier (at most ``window`` of them, or
    only those of its own chunk).

    Queries are aligned with the *last* ``n_q`` keys, so with ``n_k > n_q`` (decoding with cached keys)
    the last query sees every key. With ``n_q == n_k`` this is the usual lower-triangular mask.

    Args:
        n_q: number of queries.
        n_k: number of keys; defaults to ``n_q``.
        window: a sliding window of ``w`` keys: query ``i`` sees keys ``j`` with ``i - w < j <= i``, itself
            included (transformers' convention; Mistral, Gemma, gpt-oss). ``None``: no window.
        chunk: chunked attention (Llama 4): the positions are cut into chunks of ``chunk`` tokens, aligned to
            position 0, and a query sees only the keys of its own chunk. ``None``: no chunks.
        start: the position of key 0 (a decoder's cache may have dropped earlier tokens); chunks are aligned
            to absolute positions.
        device: where to create the mask.

    Returns:
        Boolean tensor of shape ``(n_q, n_k)``; ``True`` where query ``i`` may attend to key ``j``.
    """
    n_k = n_q if n_k is None else n_k
    check_positive_int("n_q", n_q)
    check_positive_int("n_k", n_k)
    ones = torch.ones(n_q, n_k, dtype=torch.bool, device=device)
    mask = torch.tril(ones, diagonal=n_k - n_q)  # (n_q, n_k)
    if window is not None:
        mask &= torch.triu(ones, diagonal=n_k - n_q - check_positive_int("window", window) + 1)
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise ValueError(f"start must be a non-negative int, the position of key 0, got {start!r}")
    if chunk is not None:  # key j sits at position start + j, query i at start + n_k - n_q + i
        position = torch.arange(start + n_k - max(n_q, n_k), start + n_k, device=device)  # (max(n_q, n_k),)
        part = position // check_positive_int("chunk", chunk)  # the chunk of each position
        mask &= part[-n_q:, None] == part[-n_k:]  # (n_q, n_k): query and key in the same chunk
    return mask


def padding_mask(
    lengths: Sequence[int] | torch.Tensor, n_k: int, *, device: torch.device | str | None = None
) -> torch.Tensor:
    """Mask that hides the padding at the end of each sequence in a batch.

    Args:
        lengths: the number of real (non-padding) tokens of each of the ``B`` sequences, each in
            ``0..n_k``.
        n_k: padded length of the key sequences.
        device: where to create the mask; defaults to the device of ``lengths`` if it is a tensor.

    Returns:
        Boolean tensor of shape ``(B, 1, 1, n_k)``; ``True`` where the key is a real token.
    """
    check_positive_int("n_k", n_k)
    if isinstance(lengths, torch.Tensor):
        if lengths.dim() != 1 or lengths.is_floating_point() or lengths.is_complex():
            raise TypeError(
                "lengths must be a 1-D integer tensor of shape (B,), "
                f"got {lengths.dtype} of shape {tuple(lengths.shape)}"
            )
        device = lengths.device if device is None else device
        lengths = lengths.to(device=device, dtype=torch.long)
    else:
        values = list(lengths)
        if not values or not all(isinstance(n, int) and not isinstance(n, bool) for n in values):
            raise TypeError(f"lengths must be a non-empty sequence of ints, one per sequence, got {values!r}")
        lengths = torch.tensor(values, dtype=torch.long, device=device)
    if lengths.numel() == 0 or lengths.min() < 0 or lengths.max() > n_k:
        raise ValueError(f"each entry of lengths must lie in 0..n_k={n_k}, got {lengths.tolist()}")
    positions = torch.arange(n_k, device=lengths.device)  # (n_k,)
    return (positions < lengths[:, None])[:, None, None, :]  # (B, 1, 1, n_k)
