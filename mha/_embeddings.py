"""Inputs for pictures of attention: a fixed random vector per token plus sinusoidal positions.

A freshly initialised attention layer shows structure only if its input has some: here a word always gets
the same vector (so a repeated word gives repeated rows and columns) and neighbouring positions get similar
positional encodings (so nearby tokens look alike). The vector of a token is drawn from a generator seeded
with a hash of the token's text, BLAKE2b rather than Python's ``hash()``, which is salted differently in
every process; so the same word gets the same vector in every session and on every machine.

Shape legend:
    n        number of tokens
    d_model  width of each vector
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import torch

from mha._checks import check_positive_int
from mha.positional import sinusoidal_positions


def token_seed(token: str) -> int:
    """A stable 63-bit seed for ``token``: the first 8 bytes of its BLAKE2b digest."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1  # torch.Generator.manual_seed takes up to 2**63 - 1


def embed_tokens(
    tokens: Sequence[str], d_model: int, *, positions: bool = True, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """Return a fixed random embedding of each token, plus its sinusoidal positional encoding.

    Each token's vector has independent standard normal entries, drawn from a ``torch.Generator`` seeded
    with :func:`token_seed`; it depends only on the token's text and ``d_model``. The positional encodings
    are :func:`mha.sinusoidal_positions` (Vaswani et al. 2017, section 3.5), added as in the paper.

    Args:
        tokens: the ``n`` tokens, strings.
        d_model: width of each vector.
        positions: add the positional encodings (``True``, the default) or not.
        dtype: floating-point dtype of the result.

    Returns:
        Tensor of shape ``(n, d_model)``.

    Raises:
        TypeError: tokens that are not a sequence of strings.
        ValueError: no tokens, or a ``d_model`` that is not a positive int.

    Example:
        >>> x = embed_tokens(["the", "cat", "the"], d_model=8, positions=False)
        >>> bool((x[0] == x[2]).all())  # the same word, the same vector
        True
    """
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a sequence of strings, got {type(tokens).__name__}")
    if not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must contain only strings, got {[type(t).__name__ for t in tokens]}")
    if not tokens:
        raise ValueError("tokens must not be empty")
    check_positive_int("d_model", d_model)
    generator = torch.Generator()
    rows = []
    for token in tokens:
        generator.manual_seed(token_seed(token))
        rows.append(torch.randn(d_model, generator=generator, dtype=torch.float64))  # (d_model,)
    x = torch.stack(rows)  # (n, d_model)
    if positions:
        x = x + sinusoidal_positions(len(tokens), d_model, dtype=torch.float64)  # (n, d_model)
    return x.to(dtype)
