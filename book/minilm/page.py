"""Your own sentence, in the page: all-MiniLM-L6-v2 running in the reader's browser, heads switchable off.

The box of ``book/minilm/static/minilm.js`` tokenizes the reader's sentence (WordPiece, as the model's
``tokenizers`` tokenizer does), runs the whole encoder in a Web Worker, draws all ``L * h`` heads at once and
one of them large, and lets the reader switch heads off, as :func:`mha.pretrained.ablate_encoder_heads` does
(the head's output zeroed before ``W_o``), to see what the sentence embedding loses and, in its difference
view, how every head's weights move. The tokenizer and the encoder are the port
``book/minilm/static/ports/minilm.js``, tested against :mod:`mha.pretrained` by
``tests/unit/mha/pretrained/test_minilm.py``.
Nothing is computed in Python and nothing comes from the network: the page carries only the box's spec (this
module's :func:`box_spec`); the weights are classic scripts that the book's build writes beside
``minilm.js`` (:func:`write_weights_script`, called by the Sphinx extension ``_ext/minilm_weights.py``) and
that the box inserts only when used: on first use :data:`WEIGHTS_FILE` (the vocabulary and the embeddings'
small tensors), then the layers' tensors in parts of at most :data:`PART_CHARACTERS` characters (in the
folder :data:`LAYERS_DIR`), in order, so that the box draws layer 1's heads as soon as layer 1 is in, says how
far the load has come, and never holds up the page long with one file; and a file of
:data:`WORD_ROWS` rows of the word embeddings (in the folder :data:`WORDS_DIR`) when a sentence first needs
one of its rows. So a first use loads about half of the weights (the word embeddings are half of them), and
every weight keeps the precision of float16. The page reads each script on its main thread and hands its
text to the worker, which decodes it (base64, float16, float32). Like every figure of the book, the box is
mounted from its spec by the shared controller (``controller.js``): its controls
(:class:`book.widgets.spec.Control`), defaults, the head it opens on and every text it shows
(:data:`MESSAGES`) are defined here; ``minilm.js`` keeps the loading and the drawing, and its look is
``mha.css``'s.

The weights scripts' format (:data:`FORMAT`), one call each::

    globalThis.mhaMiniLMWeights({"format": "float16-base64", "model", "version", "config": {...},
                                 "vocab": [token, ...], "tensors": {name: {"shape": [...], "data": b64}},
                                 "layers": {"count", "folder", "callback",
                                            "parts": [{"layer", "names": [...], "characters"}, ...]},
                                 "words": {"name", "count", "rows", "shards", "folder", "callback"}})
    globalThis.mhaMiniLMLayer(part, {"layer": layer, "tensors": {name: {"shape": [...], "data": b64}}})
    globalThis.mhaMiniLMWords(index, {"first": WORD_ROWS * index, "shape": [rows, d_model], "data": b64})

``name`` is a parameter of :class:`mha.pretrained.MiniLMEncoder` (``layers.0.attn.W_q.weight``, ...), and
``data`` its values as IEEE float16, little-endian, in row-major order, in base64. :func:`weights_payload`
is every tensor the page holds but the word embeddings; :data:`WEIGHTS_FILE` holds those outside the layers,
and ``<layers.folder>/<part>.js`` (:func:`layer_shard`) the tensors ``layers.parts[part].names``, all of
layer ``layers.parts[part].layer``, with ``characters`` base64 characters, so that the page can say how much
is in; the parts hold the layers' tensors in order. The word embeddings
(``word_embeddings.weight``, one row per token of ``vocab``) are not among the ``tensors``: ``words`` says
where their rows are (``<folder>/<index>.js``, :func:`word_shard`). Position embeddings are cut to the
:data:`MAX_TOKENS` positions the tokenizer can give, and the segment embeddings to segment A
(``token_type_embeddings.weight`` of shape ``(1, d_model)``), the only one a single sentence uses.

Given the stored attention of :mod:`book.minilm.stored` (``stored=``, "What trained heads do"), the box
suggests its sentences and draws every head on one of them at once from the spec, 8-bit, without loading the
model: when it opens, and when the reader picks one of them, as long as no head is switched off and the model
is not in the page. A sentence of the reader's own, or a head switched off, and Run loads the model as above.

In a live kernel, :class:`MiniLMWidget` is the same front end (``minilm.js`` as an anywidget) with Python
computing instead of the worker: :func:`mha.pretrained.attend` and
:func:`mha.pretrained.ablated_embeddings`, heads switched off with
:func:`mha.pretrained.ablate_encoder_heads`.

The page's contract (tests and other checks rely on it): the root element ``.mha-minilm`` carries a
property ``mha`` with ``attend(sentence)``, resolving to ``{tokens, attention}`` (``attention[layer][head]
[query][key]``, as :func:`mha.pretrained.attend`), ``embed(sentence, {off})``, resolving to the 384 values of
the normalised sentence embedding with the ``[layer, head]`` pairs of ``off`` (0-based) switched off, as
:func:`mha.pretrained.ablated_embeddings`, ``tokenize(sentence)``, ``load()``, ``refresh()`` (the Run
button), ``cancel()`` (Escape or the Cancel button while the model loads), ``off`` and ``shown`` (the head
shown large, ``[layer, head]``, 0-based; settable), ``ready`` (a promise, resolved once the box has drawn a
stored sentence it opens on), ``stored(sentence)``, resolving to ``{tokens, attention}`` from the stored
weights or to ``null``, and ``drawn``, what the picture shows: ``{sentence, tokens, stored}`` or ``null``.

Shape legend:
    L        number of layers, 6
    h        heads per layer, 12
    n        number of tokens of one sentence, [CLS] and [SEP] included, at most MAX_TOKENS
    d_model  model width, 384
"""

from __future__ import annotations

import base64
import functools
import json
import math
import weakref
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from tokenizers import Tokenizer

from book.figures._pyplot import png
from book.figures._text import kept, tr
from book.figures.pretrained import plot_head_grid
from book.minilm.stored import dequantise
from book.widgets.cached_scripts import cached_scripts
from book.widgets.frontend import ROOT_CLASSES, BoxWidget, inline_json, print_image, widget_css, widget_esm
from book.widgets.spec import ENCODER, ENCODER_CELL, ENCODER_SENTENCE, LAYER_HEAD, Control, fill, messages
from mha.pretrained.heads import PATTERNS, ablate_encoder_heads, ablated_embeddings
from mha.pretrained.minilm import MINILM, MiniLMEncoder, attend, load_minilm, model_version

CLASS_NAME = ROOT_CLASSES["mountMiniLM"]  # the root element's class, which minilm.js mounts
WEIGHTS_FILE = "minilm-weights.js"  # written beside minilm.js in the built site's _static/
FORMAT = "float16-base64"  # how the weights scripts store every tensor
FORMAT_VERSION = 3  # bump when the weights scripts change, so a cached copy is rebuilt
CALLBACK = "mhaMiniLMWeights"  # the global function the weights script calls with its data
LAYERS_DIR = "minilm-layers"  # beside WEIGHTS_FILE: <part>.js holds a part of one layer's tensors
LAYER_CALLBACK = "mhaMiniLMLayer"  # the global function a part's script calls with its index and data
# The most base64 characters a part holds, unless one tensor has more: the page reads a script and hands its
# text to the worker in one task of its main thread, which this keeps short (3 parts of 1.6 MB per layer).
PART_CHARACTERS = 2_000_000
WORDS_DIR = "minilm-words"  # beside WEIGHTS_FILE: <index>.js holds rows WORD_ROWS * index onwards
WORD_ROWS = 64  # rows of the word embeddings per file: small, so a sentence loads little beyond WEIGHTS_FILE
WORDS_CALLBACK = "mhaMiniLMWords"  # the global function a word rows script calls with its index and data
MAX_TOKENS = 128  # the tokenizer's truncation (tokenizer.json), [CLS] and [SEP] included
MAX_CHARS = 10_000  # the box takes at most this many characters of a sentence (the rest is cut, and said)
MODEL_NAME = ENCODER
DEFAULT_SENTENCE = ENCODER_SENTENCE
DEFAULT_OTHER = "The dog did not go over the road, as it was exhausted."
# The head the box opens on: the first head (layers, then heads, in order) of the first of these census
# labels that some head has. A previous-token head draws a line just below the diagonal on any sentence: a
# pattern a newcomer recognises at once, which the chapter's first figure has already shown.
TELLING = ("previous", "next", "self", "same_token", "sep", "cls", "mixed", "broad")
# Head labels of classify_heads that the box offers to switch off together, and how it names them.
PATTERN_NAMES = {
    "cls": "look at [CLS]",
    "sep": "look at [SEP]",
    "previous": "look at the previous token",
    "next": "look at the next token",
    "self": "look at themselves",
    "same_token": "look at the same word elsewhere",
    "broad": "spread their weight broadly",
    "mixed": "are focused, but on no listed pattern",
}
# The same, for one head: how a thumbnail and the large head's title say what kind of head it is.
KIND_NAMES = {
    "cls": "looks at [CLS]",
    "sep": "looks at [SEP]",
    "previous": "looks at the previous token",
    "next": "looks at the next token",
    "self": "looks at itself",
    "same_token": "looks at the same word elsewhere",
    "broad": "spreads its weight broadly",
    "mixed": "focused, but on no listed pattern",
}
# What the box says, in one place; {mb} and {kb} are filled in by box_spec, the other {fields} by the page.
MESSAGES = {
    "idle": (
        "Type a sentence and press Run. The first Run loads the model into this page: {mb} MB, and {kb} kB "
        "more for each new block of the vocabulary that your words fall in."
    ),
    "loading": (
        "Loading all-MiniLM-L6-v2 into this page: {done} of {mb} MB, {layers} of {total} layers in. "
        "Escape or Cancel stops it."
    ),
    "partial": (
        "Loading all-MiniLM-L6-v2 into this page: {done} of {mb} MB, {layers} of {total} layers drawn, the "
        "others follow. Escape or Cancel stops it."
    ),
    "progress": "Loading all-MiniLM-L6-v2",
    "cancelled": "Loading stopped. Press Run to load the model ({mb} MB).",
    "cancel": "Cancel",
    "running": "Running the model on your sentence…",
    "stored": (
        "Sentence {index} of the {count} stored with this page: every head's weights, to the nearest "
        "1/{scale}. To switch heads off, or for a sentence of your own, press Run: it loads the model into "
        "this page ({mb} MB)."
    ),
    "stored_failed": "The stored weights could not be read in this browser: {error}",
    "empty": "Type a sentence first: there is nothing to run the model on.",
    "truncated": (
        "Your sentence has {n} {n|token|tokens}; the model reads at most {max} ([CLS] and [SEP] "
        "included), as its "
        "tokenizer truncates, so only the first {max} are shown and used."
    ),
    "too_long": "Only the first {chars} characters are used ({cut} cut off).",
    "unknown": "{k} {k|word is|words are} not in the vocabulary and became [UNK]: {words}.",
    "shown": (
        "{n} {n|token|tokens}. Click a head, or reach it with the arrow keys and press Enter, to see it "
        "large."
    ),
    "failed": "The model could not be loaded in this page: {error}",
    "no_worker": "This browser cannot run the model off the page's main thread (no Web Workers).",
    "no_weights": "could not load {file}",
    "bad_format": "the weights script is in format {got}, this page reads {expected}",
    "worker_failed": "the model's worker stopped",
    # the buttons, the grid of all heads and the large head
    "run": "Run",
    "reset": "All heads on",
    "toggle_off": "Switch layer {layer}, head {head} off",
    "toggle_on": "Switch layer {layer}, head {head} back on",
    "grid": "All heads, layers down, heads across",
    "grid_help": "The arrow keys move between the heads; Enter shows the head large.",
    "grid_layer": "layer {layer}",
    "grid_head": "head {head}",
    "thumb": "layer {layer}, head {head}: {pattern}",
    "thumb_off": ", switched off",
    "thumb_waiting": ", its layer is still loading",
    "menu_help": "Choose with the arrow keys, then press Enter (or leave the menu) to switch them off.",
    "big": "Layer {layer}, head {head} ({pattern}){switched}: row i shows where token i looks{others}.",
    "big_switched": ", switched off: its weights are computed but its output is zeroed",
    "big_others": ", in the model with {k} {k|head|heads} off (later layers' weights change too)",
    "big_waiting": "Layer {layer}, head {head} ({pattern}): its layer is still loading.",
    "big_diff": (
        "Layer {layer}, head {head} ({pattern}): its weights with {k} {k|head|heads} off minus the intact "
        "model's. "
        "Red: more weight than intact, blue: less; the largest change is {largest}."
    ),
    "big_diff_before": (
        "Layer {layer}, head {head} ({pattern}): its weights are the intact model's, since every head "
        "switched off is in layer {first} or later, and switching a head off changes only the layers after "
        "its own."
    ),
    "big_diff_none": (
        "Layer {layer}, head {head} ({pattern}): no head is off, so nothing differs from the intact model. "
        "Switch heads off to see which weights change."
    ),
    "panel": LAYER_HEAD,
    "diff_scale": "change",
    "big_label": (
        "Attention of layer {layer}, head {head} over {n} {n|token|tokens}; the arrow keys move along its "
        "cells, Page "
        "Up and Page Down to the previous and next head"
    ),
    "big_label_diff": (
        "Change of the attention of layer {layer}, head {head} over {n} {n|token|tokens} with {k} "
        "{k|head|heads} off; the "
        "arrow keys move along its cells, Page Up and Page Down to the previous and next head"
    ),
    "big_empty": "The head shown large, drawn once the model has run",
    "cell": ENCODER_CELL,
    "cell_diff": ENCODER_CELL + " (intact {intact}, change {change})",
    # the read-out of what switching heads off changes
    "all_on": "All {total} heads on.",
    "some_off": "{k} of {total} heads off. Your sentence's embedding vs. the intact model's: cosine {cos}.",
    "pair": " Similarity of your two sentences: {sim}.",
    "pair_off": " Similarity of your two sentences: {sim} (intact: {sim0}).",
}
# The controls' labels, and the first choice of a menu that switches heads off (it switches none).
CONTROL_LABELS = {
    "sentence": "Your sentence",
    "other": "Compare with",
    "layer_off": "Switch off all heads of",
    "pattern_off": "Switch off the heads that",
    "difference": "Show the difference from the intact model",
}
CHOOSE = "\u2026"
FALLBACK = (
    "<p>This box runs all-MiniLM-L6-v2 in your browser, on the book's site (online or opened from disk). "
    "It needs JavaScript; in a live notebook, <code>book.minilm.page.MiniLMWidget</code> is the same "
    "box, computed by Python.</p>"
)


def box_spec(
    labels: Sequence[Sequence[str]],
    *,
    sentence: str = DEFAULT_SENTENCE,
    other: str = DEFAULT_OTHER,
    stored: dict | None = None,
) -> dict:
    """The box's spec: its controls, defaults and messages, the model's sizes and limits, the head labels.

    Args:
        labels: ``labels[layer][head]``, an ``L x h`` nested list of pattern names, as
            :func:`mha.pretrained.classify_heads` gives; the box offers to switch off each pattern's heads.
        sentence: the sentence the box shows first.
        other: the second sentence, whose similarity to the first the box reports with heads switched off.
        stored: every head on some sentences, as :func:`book.minilm.stored.load_stored` gives: the sentence
            field suggests them, and the page draws every head on one of them at once, without the model,
            as long as no head is switched off and the model is not loaded.

    Returns:
        ``{"figure", "controls", "defaults": {"sentence", "other"}, "messages", "model", "layers", "heads",
        "d_model", "max_tokens", "max_chars", "weights", "characters", "format", "callback", "labels",
        "kinds", "shown"}``, and ``"stored": {"scale", "encoding", "sentences", "data"}`` if given. The
        controls (:class:`book.widgets.spec.Control`) are the two sentences, two menus that switch heads off,
        a layer's or a pattern's (named with its number of heads), and the difference view;
        ``controller.js`` mounts them. ``characters`` is the size of the first load (:func:`weights_size`),
        ``kinds`` names each label for one head, and ``shown`` is the head the box opens on
        (:func:`telling_head`).
    """
    L, h = MINILM.n_layers, MINILM.h
    if (
        isinstance(labels, str)
        or len(labels) != L
        or any(isinstance(row, str) or len(row) != h for row in labels)
        or not all(isinstance(label, str) for row in labels for label in row)
    ):
        raise ValueError(f"labels must be an L x h = {L} x {h} nested list of strings (classify_heads)")
    unknown = sorted({label for row in labels for label in row} - set(PATTERN_NAMES))
    if unknown:
        raise ValueError(f"labels must be classify_heads names {sorted(PATTERN_NAMES)}, got {unknown}")
    for name, text in (("sentence", sentence), ("other", other)):
        if not isinstance(text, str):
            raise TypeError(f"{name} must be a string, got {type(text).__name__}")
    if stored is not None:
        dequantise(stored)  # checks the data
        if (stored["layers"], stored["heads"]) != (L, h):
            got = f"{stored['layers']} x {stored['heads']}"
            raise ValueError(f"stored must hold {L} layers x {h} heads, got {got}")
    examples = () if stored is None else tuple((s["text"], s["text"]) for s in stored["sentences"])
    count = Counter(label for row in labels for label in row)
    present = [p for p in (*PATTERNS, "broad", "mixed") if count[p]]
    layers = tuple((layer, fill(MESSAGES["grid_layer"], layer=layer + 1)) for layer in range(L))
    patterns = tuple((p, f"{PATTERN_NAMES[p]} ({count[p]})") for p in present)
    menus = {"layer_off": layers, "pattern_off": patterns}  # actions, not settings; "" does nothing
    controls = [
        Control("sentence", "text", CONTROL_LABELS["sentence"], examples),  # suggestions: any text goes
        Control("other", "text", CONTROL_LABELS["other"]),
        *(
            Control(name, "select", CONTROL_LABELS[name], (("", CHOOSE), *choices), setting=False)
            for name, choices in menus.items()
        ),
        Control("difference", "checkbox", CONTROL_LABELS["difference"], setting=False),  # a view option
    ]
    characters = weights_size()[1]
    sizes = {
        "{mb}": f"{characters / 1e6:.0f}",
        "{kb}": f"{_base64_length(WORD_ROWS * MINILM.d_model) / 1e3:.0f}",
    }

    def sized(text: str) -> str:
        for field, value in sizes.items():
            text = text.replace(field, value)
        return text

    spec = {
        "figure": "MiniLM box",
        "controls": [c.to_json() for c in controls],
        "defaults": {"sentence": sentence, "other": other},
        "messages": messages(**{key: sized(text) for key, text in MESSAGES.items()}),
        "model": MODEL_NAME,
        "layers": L,
        "heads": h,
        "d_model": MINILM.d_model,
        "max_tokens": MAX_TOKENS,
        "max_chars": MAX_CHARS,
        "weights": WEIGHTS_FILE,
        "characters": characters,
        "format": FORMAT,
        "callback": CALLBACK,
        "labels": [list(row) for row in labels],
        "kinds": {label: KIND_NAMES[label] for label in present},
        "shown": list(telling_head(labels)),
    }
    if stored is not None:
        spec["stored"] = {key: stored[key] for key in ("scale", "encoding", "sentences", "data")}
    return spec


def telling_head(labels: Sequence[Sequence[str]]) -> tuple[int, int]:
    """The head the box opens on, ``(layer, head)``, 0-based: the first head with the first label of
    :data:`TELLING` that ``labels`` (``labels[layer][head]``, as for :func:`box_spec`) holds; for
    all-MiniLM-L6-v2's census, its one previous-token head."""
    for label in TELLING:
        for layer, row in enumerate(labels):
            if label in row:
                return layer, list(row).index(label)
    raise ValueError(f"labels must hold one of {list(TELLING)}")


def box_html(
    labels: Sequence[Sequence[str]],
    *,
    picture: bytes | None = None,
    sentence: str = DEFAULT_SENTENCE,
    other: str = DEFAULT_OTHER,
    stored: dict | None = None,
) -> str:
    """The box's root element, ``<div class="mha-minilm">``, with :func:`box_spec` inline.

    The :data:`FALLBACK` text is visible until ``minilm.js`` mounts the box (and removes it), so a notebook
    front end that does not run the book's scripts shows what the box is instead of nothing. ``picture``, PNG
    bytes, goes in as an image (``mm-print``) that such a front end shows too; on the site, ``minilm.js``
    hides it on screen and shows it, instead of the controls, in print (the book's PDF is printed from the
    site).
    """
    spec = inline_json(box_spec(labels, sentence=sentence, other=other, stored=stored))
    image = ""
    if picture is not None:
        model, shown = kept(MODEL_NAME), kept(sentence)
        alt = tr("Every head of {model} on the sentence: {sentence}", model=model, sentence=shown)
        image = print_image(picture, alt=alt, class_name="mm-print")
    return (
        f'<div class="{CLASS_NAME}"><script type="application/json">{spec}</script>'
        f'<div class="mm-fallback">{tr(FALLBACK)}</div>{image}</div>'
    )


class MiniLMBox:
    """The box as a chapter's output: ``text/html`` (:func:`box_html`), with, when made with an encoder, a
    static picture of all heads on the first sentence, for print and for notebooks.

    Args:
        labels: the census's head labels, as for :func:`box_spec`.
        encoder: an encoder from :func:`mha.pretrained.load_minilm`, to draw the static picture with (none
            without it).
        sentence, other, stored: as for :func:`box_spec`.
    """

    def __init__(
        self,
        labels: Sequence[Sequence[str]],
        *,
        encoder: MiniLMEncoder | None = None,
        sentence: str = DEFAULT_SENTENCE,
        other: str = DEFAULT_OTHER,
        stored: dict | None = None,
    ) -> None:
        self.sentence = sentence
        picture = _picture(encoder, sentence) if encoder is not None else None
        self.html = box_html(labels, picture=picture, sentence=sentence, other=other, stored=stored)

    def __repr__(self) -> str:
        return f"MiniLMBox(sentence={self.sentence!r}): all-MiniLM-L6-v2 in the page, on the book's site"

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return {"text/plain": repr(self), "text/html": self.html}


def _picture(encoder: MiniLMEncoder, sentence: str) -> bytes:
    """PNG bytes of every head on ``sentence`` (:func:`book.figures.pretrained.plot_head_grid`)."""
    tokens, attentions = attend(encoder, sentence)  # (L, h, n, n)
    return png(plot_head_grid(attentions, tokens, title=sentence), dpi=60)


def minilm_box(labels: Sequence[Sequence[str]], **kwargs: object) -> MiniLMBox:
    """The box for a chapter's output (:class:`MiniLMBox`).

    On the book's site ``minilm.js`` mounts it and runs the model in the reader's browser; the PDF shows its
    static picture; a notebook shows its fallback text and picture (in a live kernel, :class:`MiniLMWidget` is
    the same box, computed by Python).
    """
    return MiniLMBox(labels, **kwargs)


# -- in a live kernel: the same box, computed by Python ----------------------------------------------------

_UNTRUNCATED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # encoder -> its tokenizer, uncut


def page_tokens(encoder: MiniLMEncoder, sentence: str) -> dict:
    """What the box says of a sentence's tokens (the page's port, ``tokenize`` of ``ports/minilm.js``, gives
    the same): ``tokens`` and ``ids``, ``[CLS]`` and ``[SEP]`` included, cut at :data:`MAX_TOKENS` as the
    tokenizer truncates; ``total``, the number of tokens before the cut, and ``truncated``; ``unknown``, the
    words (as the tokenizer normalises them: lower case, no accents) that became ``[UNK]``.
    """
    tokenizer = encoder.tokenizer
    if encoder not in _UNTRUNCATED:
        _UNTRUNCATED[encoder] = Tokenizer.from_str(tokenizer.to_str())
        _UNTRUNCATED[encoder].no_truncation()
    full, cut = _UNTRUNCATED[encoder].encode(sentence), tokenizer.encode(sentence)
    words = tokenizer.pre_tokenizer.pre_tokenize_str(tokenizer.normalizer.normalize_str(sentence))
    unknown = [words[w][0] for t, w in zip(full.tokens, full.word_ids, strict=True) if t == "[UNK]"]
    total = len(full.ids)
    return {
        "tokens": cut.tokens,
        "ids": cut.ids,
        "truncated": total > MAX_TOKENS,
        "total": total,
        "unknown": unknown,
    }


class MiniLMWidget(BoxWidget):
    """The box in a live kernel: ``minilm.js`` as an anywidget, with Python computing what the worker would.

    The page sends each request as a custom message ``{"id", "type", "sentence", "off"}`` (``type``: one of
    ``"tokenize"``, ``"attend"``, ``"embed"``); :meth:`compute` answers it with :mod:`mha.pretrained`
    (heads switched off with :func:`mha.pretrained.ablate_encoder_heads`), and the reply goes back as
    ``{"id", "result"}``, the attention as float32 bytes, or ``{"id", "error"}``. Its display bundle also
    holds the static box (:func:`box_html`, with its picture and ``stored``) as ``text/html``, which the
    book's site ranks above the widget view.

    Args:
        labels: the census's head labels, as for :func:`box_spec`.
        encoder: an encoder from :func:`mha.pretrained.load_minilm` (default: that one).
        sentence, other, stored: as for :func:`box_spec`; the live box suggests the stored sentences, and
            Python computes them as any other (the stored weights go to the static box only).
    """

    _esm = widget_esm("mountMiniLM", export="globalThis.mhaMiniLM.anywidget")
    _css = widget_css()

    def __init__(
        self,
        labels: Sequence[Sequence[str]],
        *,
        encoder: MiniLMEncoder | None = None,
        sentence: str = DEFAULT_SENTENCE,
        other: str = DEFAULT_OTHER,
        stored: dict | None = None,
    ) -> None:
        spec = box_spec(labels, sentence=sentence, other=other, stored=stored)
        spec.pop("stored", None)
        super().__init__(spec=spec)
        self.encoder = encoder if encoder is not None else load_minilm()
        box = MiniLMBox(labels, encoder=self.encoder, sentence=sentence, other=other, stored=stored)
        self._static = box.html

    def compute(self, message: dict) -> tuple[dict, list[bytes]]:
        """Answer one request of the page: ``(result, buffers)``, as the page's worker would.

        Raises:
            TypeError: ``sentence`` is not a string.
            ValueError: ``type`` is unknown, or ``off`` holds a pair that is not a head.
        """
        kind, sentence, off = message.get("type"), message.get("sentence"), message.get("off") or []
        if kind not in ("tokenize", "attend", "embed"):
            raise ValueError(f"type must be 'tokenize', 'attend' or 'embed', got {kind!r}")
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a string, got {type(sentence).__name__}")
        result = page_tokens(self.encoder, sentence)
        ids = result.pop("ids")
        if kind == "tokenize":
            return {**result, "ids": ids}, []
        heads = [tuple(pair) for pair in off]
        result["embedding"] = ablated_embeddings(self.encoder, [sentence], heads)[0].tolist()  # (d_model,)
        if kind == "embed":
            return result, []
        with ablate_encoder_heads(self.encoder, heads):
            _, attention = attend(self.encoder, sentence)  # (L, h, n, n)
        return self.attention_reply(result, attention)

    def __repr__(self) -> str:
        return f"MiniLMWidget(sentence={self.spec['defaults']['sentence']!r})"


# -- the weights scripts, written at build time --------------------------------------------------------------

WORDS = "word_embeddings.weight"  # the one tensor the page loads a block of rows at a time


def _page_shapes(state: dict) -> dict:
    """The shape of each tensor as the weights scripts store it (positions and segments cut)."""
    shapes = {name: tuple(t.shape) for name, t in state.items()}
    shapes["position_embeddings.weight"] = (MAX_TOKENS, shapes["position_embeddings.weight"][1])
    shapes["token_type_embeddings.weight"] = (1, shapes["token_type_embeddings.weight"][1])
    return shapes


def _base64_length(count: int) -> int:
    """The base64 characters of ``count`` float16 values."""
    return 4 * math.ceil(2 * count / 3)


def _float16_base64(values: np.ndarray | torch.Tensor) -> str:
    """Values as IEEE float16, little-endian, row-major, in base64 (:func:`decode_tensor` reads it back)."""
    array = values.detach().to("cpu").numpy() if isinstance(values, torch.Tensor) else values
    return base64.b64encode(np.ascontiguousarray(array).astype("<f2").tobytes()).decode("ascii")


@functools.cache
def weights_size() -> tuple[int, int]:
    """``(values, characters)``: how many weights the page holds (the word embeddings included), and how many
    base64 characters of them its first use loads: every tensor but the word embeddings, whose rows come
    :data:`WORD_ROWS` at a time as a sentence needs them (:data:`WEIGHTS_FILE`'s and the layers' files').

    Counted from :data:`mha.pretrained.MINILM`'s sizes, without loading the weights (a test checks it against
    :func:`weights_payload`).
    """
    c = MINILM
    d, d_ff = c.d_model, c.d_ff
    per_layer = [(d, d), (d,)] * 4 + [(d,), (d,), (d_ff, d), (d_ff,), (d, d_ff), (d,), (d,), (d,)]
    shapes = [(MAX_TOKENS, d), (1, d), (d,), (d,)] + per_layer * c.n_layers  # all but the word embeddings
    values = sum(math.prod(shape) for shape in shapes) + c.vocab_size * d
    characters = sum(_base64_length(math.prod(shape)) for shape in shapes)  # float16 in base64
    return values, characters


def _layer_of(name: str) -> int | None:
    """The layer a parameter belongs to (``layers.<layer>.``), or ``None`` for the embeddings'."""
    return int(name.split(".")[1]) if name.startswith("layers.") else None


def weights_payload(encoder: MiniLMEncoder) -> dict:
    """Every tensor the page holds but the word embeddings, in float16, the vocabulary, where the layers'
    tensors are (:func:`layer_shard`) and where the word embeddings' rows are (:func:`word_shard`); see the
    module docstring. :data:`WEIGHTS_FILE` holds it without the layers' tensors (:func:`weights_script`)."""
    state = encoder.state_dict()
    shapes = _page_shapes(state)  # positions: (MAX_TOKENS, d_model), segments: (1, d_model), segment A
    tensors = {
        name: {"shape": list(shapes[name]), "data": _float16_base64(t[: shapes[name][0]])}
        for name, t in state.items()
        if name != WORDS
    }
    vocab = encoder.tokenizer.get_vocab()  # token -> id
    by_id = sorted(vocab, key=vocab.__getitem__)
    if [vocab[t] for t in by_id] != list(range(len(by_id))) or len(by_id) != encoder.config.vocab_size:
        raise ValueError("the tokenizer's vocabulary ids must be 0..V-1, one per row of the word embeddings")
    c = encoder.config
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": MODEL_NAME,
        "version": model_version(),
        "config": {"d_model": c.d_model, "h": c.h, "d_ff": c.d_ff, "layers": c.n_layers, "eps": c.eps},
        "max_tokens": MAX_TOKENS,
        "vocab": by_id,
        "tensors": tensors,
        "layers": {
            "count": c.n_layers,
            "folder": LAYERS_DIR,
            "callback": LAYER_CALLBACK,
            "parts": _parts(tensors, c.n_layers),
        },
        "words": {
            "name": WORDS,
            "count": c.vocab_size,
            "rows": WORD_ROWS,
            "shards": math.ceil(c.vocab_size / WORD_ROWS),
            "folder": WORDS_DIR,
            "callback": WORDS_CALLBACK,
        },
    }


def _parts(tensors: dict, layers: int) -> list[dict]:
    """The layers' tensors in parts, in order: each part one layer's, at most :data:`PART_CHARACTERS` base64
    characters unless one tensor has more, as ``{"layer", "names", "characters"}``."""
    parts: list[dict] = []
    for layer in range(layers):
        start = len(parts)
        for name, t in tensors.items():
            if _layer_of(name) != layer:
                continue
            size = len(t["data"])
            last = parts[-1] if len(parts) > start else None
            if last is None or last["characters"] + size > PART_CHARACTERS:
                last = {"layer": layer, "names": [], "characters": 0}
                parts.append(last)
            last["names"].append(name)
            last["characters"] += size
    return parts


def layer_shard(payload: dict, part: int) -> dict:
    """Part ``part`` of the layers' tensors of a :func:`weights_payload`, as ``{"layer", "tensors"}``:
    ``minilm-layers/<part>.js`` holds it."""
    parts = payload["layers"]["parts"]
    if not 0 <= part < len(parts):
        raise ValueError(f"part must lie in 0..{len(parts) - 1}, got {part}")
    names = parts[part]["names"]
    return {"layer": parts[part]["layer"], "tensors": {name: payload["tensors"][name] for name in names}}


def word_shard(encoder: MiniLMEncoder, index: int) -> dict:
    """Rows ``WORD_ROWS * index`` onwards (at most :data:`WORD_ROWS`) of the word embeddings, as
    ``{"first", "shape", "data"}``: ``minilm-words/<index>.js`` holds it."""
    words = encoder.word_embeddings.weight  # (V, d_model)
    first = WORD_ROWS * index
    if not 0 <= first < words.shape[0]:
        raise ValueError(f"index must lie in 0..{math.ceil(words.shape[0] / WORD_ROWS) - 1}, got {index}")
    rows = words[first : first + WORD_ROWS]  # (at most WORD_ROWS, d_model)
    return {"first": first, "shape": list(rows.shape), "data": _float16_base64(rows)}


def decode_tensor(entry: dict) -> np.ndarray:
    """One tensor of :func:`weights_payload` or :func:`word_shard` back as float32: the page's values."""
    values = np.frombuffer(base64.b64decode(entry["data"]), dtype="<f2")
    return values.astype(np.float32).reshape(entry["shape"])


def weights_script(encoder: MiniLMEncoder | None = None, payload: dict | None = None) -> str:
    """The text of ``minilm-weights.js``: one call of :data:`CALLBACK` with :func:`weights_payload`, less the
    layers' tensors (``payload``: that payload, if computed already)."""
    payload = payload or weights_payload(encoder if encoder is not None else load_minilm())
    tensors = {name: t for name, t in payload["tensors"].items() if _layer_of(name) is None}
    return f"globalThis.{CALLBACK}({json.dumps({**payload, 'tensors': tensors}, separators=(',', ':'))});\n"


def layer_script(payload: dict, part: int) -> str:
    """The text of ``minilm-layers/<part>.js``: one call of :data:`LAYER_CALLBACK` with its
    :func:`layer_shard`."""
    shard = json.dumps(layer_shard(payload, part), separators=(",", ":"))
    return f"globalThis.{LAYER_CALLBACK}({part},{shard});\n"


def word_script(encoder: MiniLMEncoder, index: int) -> str:
    """The text of ``minilm-words/<index>.js``: one call of :data:`WORDS_CALLBACK` with its
    :func:`word_shard`."""
    shard = json.dumps(word_shard(encoder, index), separators=(",", ":"))
    return f"globalThis.{WORDS_CALLBACK}({index},{shard});\n"


def _write_scripts(directory: Path) -> None:
    """Write :data:`WEIGHTS_FILE`, the folder :data:`LAYERS_DIR` of the layers' parts and the folder
    :data:`WORDS_DIR` of word rows into ``directory``."""
    encoder = load_minilm()
    payload = weights_payload(encoder)
    (directory / WEIGHTS_FILE).write_text(weights_script(payload=payload), encoding="ascii")
    (directory / LAYERS_DIR).mkdir()
    for part in range(len(payload["layers"]["parts"])):
        (directory / LAYERS_DIR / f"{part}.js").write_text(layer_script(payload, part), encoding="ascii")
    (directory / WORDS_DIR).mkdir()
    for index in range(math.ceil(encoder.config.vocab_size / WORD_ROWS)):
        (directory / WORDS_DIR / f"{index}.js").write_text(word_script(encoder, index), encoding="ascii")


def write_weights_script(target: Path, *, cache: Path | None = None) -> Path:
    """Write ``minilm-weights.js`` to ``target``, and the layers and the word rows into the folders
    :data:`LAYERS_DIR` and :data:`WORDS_DIR` beside it, building them once per model version into ``cache``.

    Args:
        target: the file to write (the built site's ``_static/minilm-weights.js``).
        cache: where the built scripts are kept between builds; default ``$MHA_CACHE`` or ``~/.cache/mha``.

    Returns:
        ``target``.
    """
    name = f"minilm-weights-{model_version()}-v{FORMAT_VERSION}"
    return cached_scripts(name, _write_scripts, Path(target), (LAYERS_DIR, WORDS_DIR), cache=cache)


__all__ = [
    "CLASS_NAME",
    "FORMAT",
    "LAYERS_DIR",
    "MAX_TOKENS",
    "MESSAGES",
    "WEIGHTS_FILE",
    "MiniLMBox",
    "MiniLMWidget",
    "box_html",
    "box_spec",
    "decode_tensor",
    "layer_script",
    "layer_shard",
    "minilm_box",
    "page_tokens",
    "telling_head",
    "weights_payload",
    "weights_script",
    "weights_size",
    "word_script",
    "word_shard",
    "write_weights_script",
]
