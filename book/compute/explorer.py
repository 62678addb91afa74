"""What the head explorer draws: per-head attention weights of a fresh layer on a typed sentence.

:func:`explorer_weights` is the one function behind the explorer's picture, in a live kernel (the widget calls
it) and on the static site (``book/widgets/static/ports/explorer.js`` ports it, and
``tests/unit/book/compute/test_explorer.py`` keeps the two equal). It splits the sentence into tokens, gives
each token a fixed vector plus its sinusoidal positional encoding, builds a freshly initialised
:class:`mha.MultiHeadAttention` from a seed, and returns the weights of its forward pass under the chosen
mask.

Token vectors and initial weights come from :mod:`book.compute.portable_random`, so JavaScript draws the same
numbers: a token's vector depends only on its text and ``d_model`` (a repeated word gives repeated rows
and columns, structure a fresh layer can show), and the weights depend only on ``d_model`` and the seed,
not on ``h`` (every ``h`` splits the same ``W_q, W_k, W_v, W_o`` into heads differently).

Shape legend:
    n        number of tokens (queries and keys: this is self-attention)
    d_model  model width
    h        number of heads
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence

import torch

from book.compute.portable_random import stream_key, text_word, uniform
from mha._checks import check_heads, check_positive_int
from mha.masks import causal_mask, padding_mask
from mha.multihead import MultiHeadAttention
from mha.positional import sinusoidal_positions

MASKS = ("none", "causal", "padding", "causal + padding")
D_MODELS = (8, 12, 16, 24, 32, 48, 64)  # the explorer's widths: many divisors, quick to draw
MAX_HEADS = 16  # the explorer offers at most this many heads
MAX_TOKENS = 16  # and at most this many tokens
MAX_SEED = 2**31 - 1
PARAMETERS = (
    "W_q.weight",
    "W_q.bias",
    "W_k.weight",
    "W_k.bias",
    "W_v.weight",
    "W_v.bias",
    "W_o.weight",
    "W_o.bias",
)
_TOKEN_STREAM = 0x746F6B65  # "toke": the stream words of token vectors and of weights never coincide
# Characters of scripts written without spaces between words: CJK radicals, symbols and punctuation, kana,
# bopomofo, the unified ideographs (with extension A, the compatibility block and the planes 2 and 3) and the
# full-width forms. Each is a token of its own, as a character-level model reads Chinese or Japanese.
CJK = (
    "\u2e80-\u2fff\u3001-\u303f\u3040-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff"
)
_TOKEN = re.compile(f"[{CJK}]|[^ \t\n\r\u3000{CJK}]+")


def split_tokens(sentence: str) -> list[str]:
    """The sentence's tokens: its pieces between runs of whitespace (space, tab, newline, return and the
    ideographic space U+3000), with each Chinese or Japanese character (:data:`CJK`) a token of its own.

    "猫坐在垫子上" is six tokens, "the cat" two, "多头 attention" three. Other characters, other Unicode
    spaces included, belong to tokens and are kept as they are.
    """
    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
    return _TOKEN.findall(sentence)


def head_choices(d_model: int, *, most: int = MAX_HEADS) -> list[int]:
    """The numbers of heads the explorer offers for ``d_model``: its divisors up to ``most``."""
    check_positive_int("d_model", d_model)
    return [h for h in range(1, min(d_model, most) + 1) if d_model % h == 0]


def token_vectors(tokens: Sequence[str], d_model: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A fixed vector per token, uniform in ``[-sqrt(3), sqrt(3))`` (mean 0, variance 1) per entry.

    A token's vector depends only on its text and ``d_model``.

    Returns:
        Tensor of shape ``(n, d_model)``.
    """
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise TypeError(f"tokens must be a sequence of strings, got {type(tokens).__name__}")
    if not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must contain only strings, got {[type(t).__name__ for t in tokens]}")
    if not tokens:
        raise ValueError("tokens must not be empty")
    check_positive_int("d_model", d_model)
    rows = [uniform(stream_key(_TOKEN_STREAM, text_word(t)), d_model) for t in tokens]  # n x (d_model,)
    return ((torch.stack(rows) * 2 - 1) * math.sqrt(3)).to(dtype)  # (n, d_model)


def embed_tokens(tokens: Sequence[str], d_model: int, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """:func:`token_vectors` plus :func:`mha.sinusoidal_positions`: the explorer's input ``(n, d_model)``.

    Example:
        >>> x = embed_tokens(["the", "cat", "the"], d_model=8)
        >>> x.shape
        torch.Size([3, 8])
    """
    x = token_vectors(tokens, d_model, dtype=torch.float64)  # (n, d_model)
    return (x + sinusoidal_positions(len(tokens), d_model, dtype=torch.float64)).to(dtype)


@functools.lru_cache(maxsize=32)
def _fresh_parameters(d_model: int, seed: int) -> tuple[torch.Tensor, ...]:
    bound = d_model**-0.5  # PyTorch's default for nn.Linear: uniform in +-1/sqrt(fan_in), fan_in = d_model
    shapes = [(d_model, d_model), (d_model,)] * 4
    return tuple(
        ((uniform(stream_key(seed, i), math.prod(shape)) * 2 - 1) * bound).view(shape)
        for i, shape in enumerate(shapes)
    )


def fresh_attention(
    d_model: int, h: int, seed: int, *, dtype: torch.dtype = torch.float64
) -> MultiHeadAttention:
    """A newly initialised :class:`mha.MultiHeadAttention` in eval mode, the same for the same arguments.

    Every parameter is uniform in ``±1/sqrt(d_model)``, PyTorch's default range for ``nn.Linear``, drawn
    from :mod:`book.compute.portable_random` (stream ``(seed, i)`` for the ``i``-th name in
    :data:`PARAMETERS`, entries in row-major order), so it does not depend on ``h``, and the global random
    state is left alone.
    """
    check_heads(d_model, h)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an int in 0..{MAX_SEED}, got {seed!r}")
    with torch.random.fork_rng(devices=[]):  # the constructor's own initialisation touches the global RNG
        model = MultiHeadAttention(d_model, h).to(dtype)
    state = dict(zip(PARAMETERS, _fresh_parameters(d_model, seed), strict=True))
    model.load_state_dict(state, strict=True)
    return model.eval()


def build_mask(kind: str, n: int, valid_length: int | None = None) -> torch.Tensor | None:
    """The explorer's mask of a kind in :data:`MASKS` for ``n`` tokens.

    Args:
        kind: ``"none"``, ``"causal"``, ``"padding"`` or ``"causal + padding"``.
        n: number of tokens.
        valid_length: for the padding masks, the number of real tokens, in ``1..n`` (``None`` means ``n``);
            the other kinds ignore it.

    Returns:
        ``None`` for ``"none"``, else a boolean tensor broadcastable to ``(1, h, n, n)``, ``True`` = may
        attend.
    """
    if kind not in MASKS:
        raise ValueError(f"mask must be one of {MASKS}, got {kind!r}")
    check_positive_int("n", n)
    if kind == "none":
        return None
    mask = causal_mask(n) if "causal" in kind else None  # (n, n)
    if "padding" in kind:
        valid_length = n if valid_length is None else check_positive_int("valid_length", valid_length)
        if valid_length > n:
            raise ValueError(f"valid_length must lie in 1..n={n} (the number of tokens), got {valid_length}")
        padding = padding_mask([valid_length], n)  # (1, 1, 1, n)
        mask = padding if mask is None else mask & padding  # (1, 1, n, n)
    return mask


def head_weights(
    model: MultiHeadAttention, x: torch.Tensor, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """The per-head weights of ``model`` on one sequence ``x`` of shape ``(n, d_model)``: ``(h, n, n)``."""
    with torch.no_grad():
        _, weights = model(x.to(model.W_q.weight)[None], mask=mask)  # (1, h, n, n)
    return weights[0]  # (h, n, n)


def explorer_weights(
    sentence: str, *, d_model: int, h: int, mask: str, valid_length: int | None = None, seed: int = 0
) -> torch.Tensor:
    """The per-head attention weights that the head explorer draws.

    Args:
        sentence: split into tokens by :func:`split_tokens` (at whitespace; CJK by character); at least one.
        d_model: model width.
        h: number of heads; must divide ``d_model``.
        mask: one of :data:`MASKS`.
        valid_length: the number of real tokens (``1..n``) for the two padding masks; ``None`` means ``n``.
            Ignored by the other masks.
        seed: seed of the fresh layer's weights, ``0 .. 2**31 - 1``.

    Returns:
        float32 tensor of shape ``(h, n, n)``: row ``i`` of head ``j`` is how query token ``i`` spreads
        its attention over the key tokens (a masked row is all zeros).

    Example:
        >>> explorer_weights("the cat sat", d_model=16, h=4, mask="causal").shape
        torch.Size([4, 3, 3])
    """
    tokens = split_tokens(sentence)
    if not tokens:
        raise ValueError("sentence has no tokens: type at least one word")
    model = fresh_attention(d_model, h, seed)
    attention_mask = build_mask(mask, len(tokens), valid_length if "padding" in mask else None)
    x = embed_tokens(tokens, d_model, dtype=torch.float64)  # (n, d_model)
    return head_weights(model, x, attention_mask).float()  # (h, n, n)
