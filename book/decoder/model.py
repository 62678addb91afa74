"""A small decoder of the book's own, built from :class:`mha.MultiHeadAttention`: "Heads that work together".

A small model in which heads of two layers compose into induction heads (Elhage et al. 2021;
Olsson et al. 2022): a character-level causal decoder with rotary positions in every attention layer, pre-norm
(RMSNorm) residual blocks, no MLPs (attention only, the setting in which Elhage et al. took induction heads
apart) and an untied unembedding. :data:`DECODER` is its configuration; :mod:`book.decoder.train`
trains it on the English documentation that every CPython ships in its standard library
(``pydoc_data.topics``, under the PSF licence) with a share of rows made of repeated random strings, and
writes the weights this module loads (``data/decoder_weights.safetensors``, float16, by name) and the
training log beside them (``data/decoder_log.json``).

Tokens are characters, read in code points: a newline, the space, the 94 visible ASCII characters (the
"ordinary" tokens, :data:`ORDINARY`) and one token, :data:`UNKNOWN`, for every character the vocabulary
lacks. A character never merges with its neighbour, so a repeated string is the same tokens twice.

The contract of the chapter and of its page (``book/decoder/static/ports/decoder.js`` is the page's port of
:func:`predict`, tested equal in ``tests/unit/book/decoder/test_model.py``):

- :func:`vocabulary` lists the token strings, index = id;
- :func:`predict` returns the tokens of a text, every head's attention and the five most probable next
  tokens at every position, with chosen heads switched off. A text longer than the context keeps its last
  :data:`DECODER` ``.context`` characters, and the result says how many were cut.

Python computes from the shipped float16 values, converted to float32: the values the page has.

Shape legend:
    B        batch size
    n        number of tokens (at most ``context``)
    V        vocabulary size, 97
    d_model  model width
    L        number of layers
    h        heads per layer; d_k = d_model / h
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

import torch
from safetensors.torch import load
from torch import nn

from book.widgets.spec import fill
from mha.compute.ablation import ablate_heads
from mha.masks import causal_mask
from mha.multihead import MultiHeadAttention
from mha.positional import Rotary

UNKNOWN = "\ufffd"  # the token of every character the vocabulary lacks: U+FFFD, the replacement character
ORDINARY = tuple(chr(c) for c in range(0x21, 0x7F))  # the 94 visible ASCII characters, "!" to "~"
VOCABULARY = ("\n", " ", *ORDINARY, UNKNOWN)  # token strings, index = id
WEIGHTS_FILE = "decoder_weights.safetensors"  # in book/chapters/data/, float16, by parameter name
LOG_FILE = "decoder_log.json"  # the training log beside it: config, corpus, curves, timing
SHIPPED_DTYPE = torch.float16  # storage type of the shipped weights (the page's too); compute in float32
TOP_K = 5  # next-token candidates that predict() gives for every position
# What predict() says about its input, in one place: the page's port (ports/decoder.js) receives these with
# the weights (book.decoder.page) and fills in the same {fields}, so both sides word it alike.
MESSAGES = {
    "not_text": "text must be a string, got {type}",
    "empty": "There is no text to predict from: type at least one character.",
    "not_heads": "{name} must be a sequence of (layer, head) pairs, got {type}",
    "heads": (
        "{name} must hold (layer, head) pairs with layer in 0..{last_layer} and head in 0..{last_head}; "
        "{pair} is not a head of this decoder"
    ),
    "truncated": (
        "The text has {total} characters; the model reads at most {context}, so only the last {context} are "
        "used."
    ),
    "unknown": "{k} {k|character|characters} the vocabulary lacks became {token}: {characters}.",
}


@dataclass(frozen=True)
class DecoderConfig:
    """The decoder's shape; the one trained and shipped is :data:`DECODER`."""

    vocab_size: int = len(VOCABULARY)  # token ids 0 .. V-1, see VOCABULARY
    context: int = 128  # longest input, in tokens; a 40-token sequence repeated twice fits
    d_model: int = 64  # width of the residual stream
    layers: int = 2  # decoder blocks, each one causal attention layer
    h: int = 4  # heads per layer, d_k = d_model / h
    rope_theta: float = 10_000.0  # base of the rotary positions in every attention layer
    eps: float = 1e-6  # epsilon of every RMSNorm


DECODER = DecoderConfig()


class DecoderBlock(nn.Module):
    """``x + attn(norm(x))``: a pre-norm residual block with one causal multi-head attention layer."""

    def __init__(self, config: DecoderConfig) -> None:
        super().__init__()
        self.norm = nn.RMSNorm(config.d_model, eps=config.eps)
        self.attn = MultiHeadAttention(
            config.d_model, config.h, bias=False, positions=Rotary(config.rope_theta)
        )


class Decoder(nn.Module):
    """A causal, attention-only decoder: embedding, ``L`` blocks ``x + attn(norm(x))``, norm, unembedding.

    Args:
        config: the shape, :data:`DECODER` for the shipped model.

    Attributes:
        embed: ``nn.Embedding(V, d_model)``, one vector per token (positions are rotary, in the heads).
        layers: ``L`` :class:`DecoderBlock`, each an ``nn.RMSNorm`` (``norm``) and a
            :class:`mha.MultiHeadAttention` (``attn``: ``W_q``, ``W_k``, ``W_v``, ``W_o``, no biases).
        norm: the final ``nn.RMSNorm(d_model)``.
        unembed: ``nn.Linear(d_model, V, bias=False)``, the logits of the next token.
    """

    def __init__(self, config: DecoderConfig = DECODER) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.layers = nn.ModuleList(DecoderBlock(config) for _ in range(config.layers))
        self.norm = nn.RMSNorm(config.d_model, eps=config.eps)
        self.unembed = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def head_output(self, layer: int, heads: torch.Tensor, head: int) -> torch.Tensor:
        """What one head writes into the residual stream: its output through its ``d_k`` columns of ``W_o``.

        Args:
            layer: the head's layer.
            heads: that layer's head outputs ``(B, h, n, d_k)`` (``steps["heads"]``).
            head: the head, ``0 .. h-1``.

        Returns:
            Shape ``(B, n, d_model)``; the layer's output is the sum of its heads' (``W_o`` has no bias).
        """
        d_k = self.config.d_model // self.config.h
        W_o = self.layers[layer].attn.W_o.weight[:, head * d_k : (head + 1) * d_k]  # (d_model, d_k)
        return heads[:, head] @ W_o.T  # (B, n, d_k) @ (d_k, d_model) -> (B, n, d_model)

    def forward(
        self,
        tokens: torch.Tensor,
        *,
        off: Iterable[tuple[int, int]] = (),
        off_in: dict[str, Iterable[tuple[int, int]]] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Next-token logits and every head's attention, with heads (or some of their paths) switched off.

        Args:
            tokens: token ids of shape ``(B, n)``, ``n <= context``.
            off: ``(layer, head)`` pairs, 0-based, whose outputs are zeroed before ``W_o``
                (:func:`mha.compute.ablation.ablate_heads`): the head is switched off for everything after it.
            off_in: path patching by zero ablation: ``{"q": pairs, "k": pairs, "v": pairs}`` removes the
                outputs of the heads in ``pairs`` from what later layers' queries, keys or values read
                (each key optional), and from nothing else. ``{"k": [(0, 2)]}`` asks what the second
                layer's keys take from the first layer's third head; the residual stream itself, and so the
                second layer's queries and values and the unembedding, keep that head's output.

        Returns:
            ``(logits, attention)`` of shapes ``(B, n, V)`` and ``(B, L, h, n, n)``.

        Raises:
            TypeError: ``tokens`` is not an integer tensor.
            ValueError: ``tokens`` is not ``(B, n)`` with ``1 <= n <= context`` and ids in ``0 .. V-1``, or a
                pair of ``off`` or ``off_in`` is not a head of this decoder.
        """
        n = _check_tokens(tokens, self.config)
        off = _check_heads("off", off, self.config)
        off_in = {} if off_in is None else dict(off_in)
        if set(off_in) - {"q", "k", "v"}:
            raise ValueError(f"off_in's keys must be 'q', 'k' or 'v', got {sorted(off_in)}")
        paths = {
            kind: _check_heads(f"off_in[{kind!r}]", heads, self.config) for kind, heads in off_in.items()
        }
        sources = {pair for pairs in paths.values() for pair in pairs}  # heads whose outputs are kept apart
        mask = causal_mask(n, device=tokens.device)  # (n, n)
        x = self.embed(tokens)  # (B, n, d_model)
        written: dict[tuple[int, int], torch.Tensor] = {}  # (layer, head) -> its output (B, n, d_model)
        attention = []
        for i, block in enumerate(self.layers):
            inputs = {}
            for kind in ("q", "k", "v"):  # each reads the residual stream less the heads cut from its path
                removed = [written[pair] for pair in paths.get(kind, ()) if pair in written]
                inputs[kind] = block.norm(x - sum(removed)) if removed else block.norm(x)  # (B, n, d_model)
            with ablate_heads(block.attn, [head for layer, head in off if layer == i]):
                steps = {}  # the layer's intermediates, from its forward
                block.attn(inputs["q"], inputs["k"], inputs["v"], mask, record=steps)
            for layer, head in sources:
                if layer == i:  # 0 for a head switched off, else its output (B, n, d_model)
                    on = (layer, head) not in off
                    written[(layer, head)] = (
                        self.head_output(i, steps["heads"], head) if on else torch.zeros(())
                    )
            x = x + steps["out"]  # (B, n, d_model)
            attention.append(steps["weights"])  # (B, h, n, n)
        logits = self.unembed(self.norm(x))  # (B, n, V)
        return logits, torch.stack(attention, dim=1)  # (B, n, V), (B, L, h, n, n)


def _check_tokens(tokens: object, config: DecoderConfig) -> int:
    """Check a batch of token ids against ``config`` and return its length ``n``."""
    if (
        not isinstance(tokens, torch.Tensor)
        or tokens.is_floating_point()
        or tokens.dtype in (torch.bool, torch.complex64, torch.complex128)
    ):
        raise TypeError(
            f"tokens must be an integer tensor of ids, got {getattr(tokens, 'dtype', type(tokens))}"
        )
    if tokens.dim() != 2 or not 1 <= tokens.size(1) <= config.context:
        raise ValueError(
            f"tokens must have shape (B, n) with 1 <= n <= {config.context}, got {tuple(tokens.shape)}"
        )
    if tokens.numel() and not 0 <= int(tokens.min()) <= int(tokens.max()) < config.vocab_size:
        raise ValueError(
            f"tokens must be ids in 0..{config.vocab_size - 1}, got {int(tokens.min())}..{int(tokens.max())}"
        )
    return tokens.size(1)


def _check_heads(name: str, pairs: object, config: DecoderConfig) -> tuple[tuple[int, int], ...]:
    """``pairs`` as a tuple of ``(layer, head)`` pairs of ints, each a head of ``config``, else ValueError."""
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(MESSAGES["not_heads"].format(name=name, type=type(pairs).__name__))
    checked = []
    for pair in pairs:
        ok = (
            isinstance(pair, Sequence)
            and not isinstance(pair, (str, bytes))
            and len(pair) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
        )
        if not ok or not (0 <= pair[0] < config.layers and 0 <= pair[1] < config.h):
            limits = {"last_layer": config.layers - 1, "last_head": config.h - 1}
            raise ValueError(MESSAGES["heads"].format(name=name, pair=pair, **limits))
        checked.append((pair[0], pair[1]))
    return tuple(checked)


def vocabulary() -> list[str]:
    """The token strings, index = id: ``"\\n"``, ``" "``, ``"!"`` .. ``"~"``, and :data:`UNKNOWN` last."""
    return list(VOCABULARY)


_IDS = {token: i for i, token in enumerate(VOCABULARY)}


def encode(text: str, *, context: int = DECODER.context) -> dict:
    """Token ids of ``text``, one per code point; the last ``context`` characters of a longer text.

    Args:
        text: a non-empty string.
        context: the most tokens kept (the model's context).

    Returns:
        ``{"ids": list[int], "truncated": int, "unknown": list[str]}``: the ids, the number of characters
        cut from the start (0 if none), and the characters that became :data:`UNKNOWN`, each once, in order.

    Raises:
        TypeError: ``text`` is not a string.
        ValueError: ``text`` is empty.
    """
    if not isinstance(text, str):
        raise TypeError(MESSAGES["not_text"].format(type=type(text).__name__))
    if not text:
        raise ValueError(MESSAGES["empty"])
    characters = list(text)  # code points: an emoji is one character
    truncated = max(0, len(characters) - context)
    characters = characters[truncated:]
    unknown = {c: None for c in characters if c not in _IDS}  # a dict keeps the first occurrences' order
    ids = [_IDS.get(c, _IDS[UNKNOWN]) for c in characters]
    return {"ids": ids, "truncated": truncated, "unknown": list(unknown)}


def load_state(path: object = None) -> dict[str, torch.Tensor]:
    """The shipped weights by name, as stored (float16); ``path`` overrides the package's file."""
    if path is None:
        data = resources.files("book.decoder").joinpath("data", WEIGHTS_FILE).read_bytes()
    else:
        with open(path, "rb") as f:
            data = f.read()
    return load(data)


def build_decoder(state: dict[str, torch.Tensor] | None = None, config: DecoderConfig = DECODER) -> Decoder:
    """A float32 :class:`Decoder` in eval mode holding ``state`` (default: the shipped float16 weights).

    Loading is strict: a missing, extra, renamed or reshaped tensor raises instead of loading wrong.
    """
    model = Decoder(config)
    state = load_state() if state is None else state
    model.load_state_dict({name: t.to(torch.float32) for name, t in state.items()}, strict=True)
    return model.eval()


@functools.cache
def shipped_decoder() -> Decoder:
    """The shipped decoder, built once per process (:func:`build_decoder`); do not modify it."""
    return build_decoder()


@torch.no_grad()
def predict(text: str, *, off: Iterable[tuple[int, int]] = ()) -> dict:
    """The shipped decoder on ``text``: its tokens, every head's attention, the top next tokens everywhere.

    Args:
        text: any non-empty string; a character the vocabulary lacks becomes :data:`UNKNOWN`, and a text
            longer than the context keeps its last ``context`` characters.
        off: ``(layer, head)`` pairs, 0-based, of the heads whose outputs are zeroed.

    Returns:
        A dict with
        ``tokens`` (``list[str]``, one vocabulary string per character kept),
        ``attention`` (float32 tensor ``(L, h, n, n)``, zero above the diagonal),
        ``top`` (for each position ``i``, the :data:`TOP_K` most probable tokens after it as ``(token,
        probability)`` pairs, highest first; ties in id order),
        ``truncated`` (characters cut from the start, 0 if none), ``unknown`` (the characters that became
        :data:`UNKNOWN`, each once) and ``note`` (a sentence on both, or ``""``; :data:`MESSAGES`).

    Raises:
        TypeError: ``text`` is not a string, or ``off`` not a sequence.
        ValueError: ``text`` is empty, or ``off`` names a head the decoder does not have.
    """
    model = shipped_decoder()
    encoded = encode(text, context=model.config.context)
    off = _check_heads("off", off, model.config)
    tokens = torch.tensor([encoded["ids"]])  # (1, n)
    logits, attention = model(tokens, off=off)  # (1, n, V), (1, L, h, n, n)
    probabilities = torch.softmax(logits[0], dim=-1)  # (n, V)
    values, ids = torch.sort(probabilities, dim=-1, descending=True, stable=True)  # (n, V) each
    top = [
        [(VOCABULARY[i], p) for i, p in zip(row_ids, row_p, strict=True)]
        for row_ids, row_p in zip(ids[:, :TOP_K].tolist(), values[:, :TOP_K].tolist(), strict=True)
    ]
    return {
        "tokens": [VOCABULARY[i] for i in encoded["ids"]],
        "attention": attention[0].to(torch.float32),
        "top": top,
        "truncated": encoded["truncated"],
        "unknown": encoded["unknown"],
        "note": _note(encoded, model.config.context),
    }


def visible(character: str) -> str:
    """A character as a message lists it: itself, or its code point (``U+0009``) if it prints as nothing or
    as blank space (Unicode categories C and Z: a tab, a zero-width space); the port's ``visible`` agrees."""
    return f"U+{ord(character):04X}" if unicodedata.category(character)[0] in "CZ" else character


def _note(encoded: dict, context: int) -> str:
    """What :func:`predict` says about its input: the cut and the unknown characters, or ``""``."""
    notes = []
    if encoded["truncated"]:
        total = encoded["truncated"] + len(encoded["ids"])
        notes.append(MESSAGES["truncated"].format(total=total, context=context))
    if encoded["unknown"]:
        k, characters = len(encoded["unknown"]), ", ".join(map(visible, encoded["unknown"]))
        notes.append(fill(MESSAGES["unknown"], k=k, token=UNKNOWN, characters=characters))
    return " ".join(notes)
