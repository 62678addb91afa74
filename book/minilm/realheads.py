"""The real-heads viewer: a pretrained encoder's attention on fixed sentences, precomputed, in the page.

The weights of every head on every sentence are stored 8-bit: ``q = round(w * 255)``, so each weight is
known to within ``1/510`` (half a step of ``1/255``). The bytes, sentence after sentence, each in the order
``[layer][head][query][key]`` (``L * h * n * n`` bytes for a sentence of ``n`` tokens), are compressed with
zlib (deflate) and written in base64 into the root element of ``book/minilm/static/realheads.js``::

    <div class="mha-realheads"><script type="application/json">{...}</script></div>

That front end needs no kernel: it inflates the bytes in the browser (``DecompressionStream``) and draws one
head with ``heatmaps.js``. :func:`viewer_config` builds the data, :func:`dequantise` reads it back (for the
tests and a chapter's check), :func:`viewer_html` writes it in the root with its spec (the controls and
messages, :func:`viewer_spec`), and :class:`RealHeadsViewer` puts that in a notebook's output, for the site.

In a live kernel, :class:`EncoderExplorer` is the same front end as an anywidget
(:func:`book.widgets.frontend.widget_esm`), and the reader types the sentence: Python tokenizes it, runs the
encoder (:func:`mha.pretrained.attend`, cached per sentence) and sends the chosen head. The traitlets:

- ``config`` (Python to page, once): ``{"model", "layers", "heads", "max_tokens", "spec"}``; the spec
  (:func:`book.widgets.spec.realheads_spec`) holds the controls, their choices and the messages, and offers
  the corpus's sentences, if any, as suggestions in the text field.
- ``settings`` (both ways): ``{"sentence": text, "layer", "head"}``, layer and head 0-based (the page shows
  them 1-based).
- ``drawn`` (Python to page): ``{"text", "tokens", "shape": [n, n], "weights": <n n float32 little-endian
  bytes>, "layer", "head", "message", "level", "heads": <L h n n bytes>}``, the shown head's weights, and
  every head's stored as the static viewer stores them (``round(w * 255)``), from which the page draws a
  change of layer or head at once, before Python's answer; ``message`` is plain text for the reader,
  ``level`` is ``""``, ``"warning"`` (an empty or too long sentence: the picture stays that of the last
  valid one) or ``"error"`` (a bug).

Its display bundle also holds ``text/html``: the static viewer's root (a corpus's, or the shown sentence's),
which the book's site ranks above the widget view and mounts without a kernel.

Shape legend:
    L  number of layers
    h  heads per layer
    n  number of tokens of one sentence
"""

from __future__ import annotations

import base64
import zlib
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import torch

from book.widgets.frontend import (
    ROOT_CLASSES,
    ComputedWidget,
    ReaderInputError,
    inline_json,
    one_thread,
    widget_css,
    widget_esm,
)
from book.widgets.spec import (
    ENCODER,
    ENCODER_SENTENCE,
    STILL_SENTENCE,
    fill,
    is_int,
    merge_settings,
    realheads_spec,
    setting_names,
)
from mha.pretrained.minilm import MiniLMEncoder, attend

SCALE = 255  # a weight w is stored as round(w * SCALE), one byte
ENCODING = "uint8-zlib-base64"
CLASS_NAME = ROOT_CLASSES["mountRealHeads"]
MODEL_NAME = ENCODER  # what the viewers call the encoder of mha.pretrained
MAX_TOKENS = 40  # EncoderExplorer: the longest sentence drawn, in tokens, [CLS] and [SEP] included
CACHE_SIZE = 32  # EncoderExplorer: sentences whose attentions are kept, the most recent ones
SETTINGS = setting_names(realheads_spec(layers=1, heads=1))  # sentence, layer, head
DEFAULT_SENTENCE = ENCODER_SENTENCE
STILL = STILL_SENTENCE


def quantise(weights: torch.Tensor) -> bytes:
    """Attention weights in ``[0, 1]`` as bytes ``round(w * 255)``, in row-major order."""
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point():
        raise TypeError(f"weights must be a floating-point tensor, got {type(weights).__name__}")
    if weights.numel() and (weights.min() < -1e-6 or weights.max() > 1 + 1e-6):
        raise ValueError("weights must lie in [0, 1]")
    q = torch.round(weights.detach().to("cpu", torch.float64).clamp(0.0, 1.0) * SCALE)
    return q.to(torch.uint8).contiguous().numpy().tobytes()


def viewer_config(
    texts: Sequence[str],
    tokens: Sequence[Sequence[str]],
    attentions: Sequence[torch.Tensor],
    *,
    model: str,
    sentence: int = 0,
    layer: int = 0,
    head: int = 0,
) -> dict:
    """The viewer's JSON: the sentences, their tokens and every head's weights, 8-bit and compressed.

    Args:
        texts: the sentences as written.
        tokens: for each sentence its ``n`` tokens (``[CLS]`` and ``[SEP]`` included).
        attentions: for each sentence the weights ``(L, h, n, n)``, as :func:`mha.pretrained.attend` gives.
        model: the model's name, shown by the viewer.
        sentence, layer, head: what the viewer shows first (0-based indices).

    Returns:
        ``{"model", "layers", "heads", "scale", "encoding", "sentences": [{"text", "tokens"}], "data",
        "settings": {"sentence", "layer", "head"}}``.
    """
    if not (len(texts) == len(tokens) == len(attentions)) or not texts:
        raise ValueError("texts, tokens and attentions must be non-empty and of the same length")
    L, h = attentions[0].shape[:2]
    chunks = []
    for text, toks, a in zip(texts, tokens, attentions, strict=True):
        n = len(toks)
        if tuple(a.shape) != (L, h, n, n):
            raise ValueError(f"weights of {text!r} have shape {tuple(a.shape)}, expected {(L, h, n, n)}")
        chunks.append(quantise(a))
    spec = realheads_spec(layers=int(L), heads=int(h), sentences=list(texts))
    settings = merge_settings(spec, spec["defaults"], {"sentence": sentence, "layer": layer, "head": head})
    return {
        "model": model,
        "layers": int(L),
        "heads": int(h),
        "scale": SCALE,
        "encoding": ENCODING,
        "sentences": [{"text": t, "tokens": list(toks)} for t, toks in zip(texts, tokens, strict=True)],
        "data": base64.b64encode(zlib.compress(b"".join(chunks), 9)).decode("ascii"),
        "settings": settings,
    }


def dequantise(config: dict) -> list[np.ndarray]:
    """The weights a viewer config holds: for each sentence an array ``(L, h, n, n)`` of ``q / 255``."""
    if config.get("encoding") != ENCODING:
        raise ValueError(f"config must use the encoding {ENCODING!r}, got {config.get('encoding')!r}")
    raw = np.frombuffer(zlib.decompress(base64.b64decode(config["data"])), dtype=np.uint8)
    L, h, out, start = config["layers"], config["heads"], [], 0
    for sentence in config["sentences"]:
        n = len(sentence["tokens"])
        size = L * h * n * n
        out.append(raw[start : start + size].reshape(L, h, n, n) / config["scale"])
        start += size
    if start != raw.size:
        raise ValueError(f"config data holds {raw.size} weights, its sentences need {start}")
    return out


def viewer_spec(config: dict) -> dict:
    """The spec of a static viewer of ``config`` (:func:`book.widgets.spec.realheads_spec`)."""
    texts = [s["text"] for s in config["sentences"]]
    return realheads_spec(layers=config["layers"], heads=config["heads"], sentences=texts)


def viewer_html(config: dict) -> str:
    """The static viewer's root element with ``config`` inline (and its spec: data stored without one gets
    it here), and a note for pages without its scripts."""
    note = (
        '<p class="mha-note">The real-heads viewer runs on the book\'s website. Here, draw any head with '
        "<code>plot_attention_head(weights[layer, head], tokens, layer=layer, head=head)</code> from "
        "<code>book.figures.pretrained</code>, after "
        "<code>tokens, weights = attend(encoder, text)</code>.</p>"
    )
    config = {**config, "spec": viewer_spec(config)}
    return (
        f'<div class="{CLASS_NAME}"><script type="application/json">{inline_json(config)}</script>'
        f"{note}</div>"
    )


class RealHeadsViewer:
    """A notebook output that shows the viewer on the book's site, where its scripts are on every page.

    Its HTML is the root element with the config inline, and a note that the front end replaces. In a live
    notebook the scripts are not loaded (inlining them would tie the stored output to every edit of the
    front end), so the note stays and points to the Python call that draws the same head:
    :func:`book.figures.pretrained.plot_attention_head`.

    Args:
        config: :func:`viewer_config`'s result.
    """

    def __init__(self, config: dict) -> None:
        dequantise(config)  # checks the data before anything is shown
        self.config = config

    def _repr_html_(self) -> str:
        return viewer_html(self.config)

    def __repr__(self) -> str:
        c = self.config
        return (
            f"RealHeadsViewer({c['model']}: {len(c['sentences'])} sentences, {c['layers']} layers x "
            f"{c['heads']} heads, {len(c['data'])} base64 characters)"
        )


class EncoderExplorer(ComputedWidget):
    """The pretrained encoder's heads on a sentence the reader types: choose a layer and a head.

    Display it in a notebook (make it the last expression of a cell). Every change of the sentence runs the
    real encoder in the kernel (:func:`mha.pretrained.attend`; a sentence seen before comes from a cache);
    the page draws the chosen head as a heatmap, queries on rows, keys on columns. Drive it from code as a
    reader would with :meth:`update` (or by assigning ``settings``); ``tokens``, ``weights`` and ``message``
    then say what the page draws. See the module docstring for the traitlets.

    Args:
        encoder: an encoder from :func:`mha.pretrained.load_minilm` (with its tokenizer).
        sentence: the first sentence; it must have at most ``max_tokens`` tokens.
        layer: the first layer shown, 0-based.
        head: the first head shown, 0-based.
        corpus: a :func:`viewer_config` of the same encoder (e.g. the book's sentences): the text field then
            offers its sentences, and pages without a kernel show it as the static viewer. Without it they
            show the static viewer on the current sentence.
        max_tokens: the longest sentence drawn, in tokens with ``[CLS]`` and ``[SEP]``.

    Attributes:
        settings: ``{"sentence", "layer", "head"}`` (a traitlet, synced with the page both ways).
        drawn: what the page draws (a traitlet, Python to page).
        message: what the explorer tells the reader (plain text; empty when all is well).
        last_error: the last unexpected exception raised while reacting to a change, or ``None``.

    Example:
        >>> explorer = EncoderExplorer(load_minilm(), sentence="The cat sat on the mat.")  # doctest: +SKIP
        >>> explorer.update(layer=0, head=2)  # a reader's choice of layer 1, head 3  # doctest: +SKIP
        >>> explorer.weights.shape  # (n, n)  # doctest: +SKIP
        torch.Size([9, 9])
    """

    SETTINGS = SETTINGS
    STILL = STILL
    NAME = "explorer"
    _esm = widget_esm("mountRealHeads")
    _css = widget_css()

    def __init__(
        self,
        encoder: MiniLMEncoder,
        *,
        sentence: str = DEFAULT_SENTENCE,
        layer: int = 0,
        head: int = 0,
        corpus: dict | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if not isinstance(encoder, MiniLMEncoder) or encoder.tokenizer is None:
            raise TypeError(
                "encoder must be a MiniLMEncoder with its tokenizer (load_minilm()), "
                f"got {type(encoder).__name__}"
            )
        L, h = encoder.config.n_layers, encoder.config.h
        if not is_int(max_tokens) or not 2 <= max_tokens <= encoder.config.max_positions:
            raise ValueError(
                f"max_tokens must be an int in 2..{encoder.config.max_positions}, got {max_tokens!r}"
            )
        if corpus is not None:
            dequantise(corpus)  # checks the data
            if (corpus["layers"], corpus["heads"]) != (L, h):
                raise ValueError(
                    f"corpus holds {corpus['layers']} layers x {corpus['heads']} heads, "
                    f"the encoder has {L} x {h}"
                )
        super().__init__()
        self.encoder = encoder
        self.corpus = corpus
        self.max_tokens = max_tokens
        self._cache: OrderedDict[str, tuple[list[str], torch.Tensor]] = OrderedDict()
        self._state = {"sentence": "", "layer": 0, "head": 0}
        self._shown: tuple[str, list[str], torch.Tensor] | None = None  # text, tokens, (L, h, n, n)
        self.message = ""
        self._level = ""  # of the message: "", "warning" or "error"
        examples = [] if corpus is None else [s["text"] for s in corpus["sentences"]]
        self.spec = realheads_spec(layers=L, heads=h, examples=examples)
        self._merge({"sentence": sentence, "layer": layer, "head": head})
        try:
            self._shown = self._attend(sentence)
        except ReaderInputError as note:
            raise ValueError(f"sentence cannot be drawn: {note}") from None
        # the spec: the controls (a text box that suggests the examples) and the messages
        self.config = dict(model=MODEL_NAME, layers=L, heads=h, max_tokens=max_tokens, spec=self.spec)
        self._publish(self._state, self.payload())

    # -- what is shown ---------------------------------------------------------------------------------------

    @property
    def layer(self) -> int:
        """The layer shown, 0-based."""
        return self._state["layer"]

    @property
    def head(self) -> int:
        """The head shown, 0-based."""
        return self._state["head"]

    @property
    def text(self) -> str:
        """The sentence drawn: the last valid one the reader typed."""
        return self._shown[0]

    @property
    def tokens(self) -> list[str]:
        """The ``n`` tokens drawn, ``[CLS]`` and ``[SEP]`` included."""
        return list(self._shown[1])

    @property
    def attentions(self) -> torch.Tensor:
        """Every head's weights on the sentence drawn, ``(L, h, n, n)``, as :func:`attend` returns them."""
        return self._shown[2]

    @property
    def weights(self) -> torch.Tensor:
        """The shown head's weights ``(n, n)``: row ``i`` is where token ``i`` looks."""
        return self._shown[2][self.layer, self.head]

    # -- changes ---------------------------------------------------------------------------------------------

    def update(self, **changes: object) -> None:
        """Change the sentence, layer or head (0-based), as the reader's controls do, and redraw.

        A sentence that cannot be drawn (empty, or longer than ``max_tokens``) does not raise: ``message``
        says why, and the picture keeps the last valid sentence.

        Raises:
            KeyError: for an unknown setting. ValueError, TypeError: for a layer, head or sentence no control
                offers (the settings stay as they were).
        """
        super().update(**changes)

    def _react(self, changes: dict) -> None:
        try:
            self._merge(changes)
        except (TypeError, ValueError):
            # a value no control offers: the page goes back to the state
            self._publish(self._state, self.payload())
            raise
        self._compute_or_explain(self._compute, self._state)
        self._publish(self._state, self.payload())

    def _compute(self) -> None:
        self._shown = self._attend(self._state["sentence"])

    def _merge(self, changes: dict) -> None:
        """Check the changes as the page's controls do (:func:`book.widgets.spec.merge_settings`), then apply
        them; a bad value raises and changes nothing."""
        self._state = merge_settings(self.spec, self._state, changes)

    def _attend(self, text: str) -> tuple[str, list[str], torch.Tensor]:
        """``(text, tokens, attentions (L, h, n, n))``; a reader error for a sentence it cannot draw."""
        if text in self._cache:
            self._cache.move_to_end(text)
            return (text, *self._cache[text])
        if not text.strip():
            raise ReaderInputError(self.spec["messages"]["no_tokens"])
        encoding = self.encoder.tokenizer.encode(text)  # truncated at the tokenizer's limit
        n = len(encoding.ids)  # [CLS] and [SEP] included
        if encoding.overflowing or n > self.max_tokens:
            size = f"more than {n}" if encoding.overflowing else str(n)
            template = self.spec["messages"]["too_long"]
            raise ReaderInputError(fill(template, size=size, limit=self.max_tokens))
        with one_thread():  # a second thread only costs at this size, most of all on a busy machine
            tokens, attentions = attend(self.encoder, text)  # (L, h, n, n)
        self._cache[text] = (tokens, attentions)
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return text, tokens, attentions

    # -- what the page is sent -----------------------------------------------------------------------------

    def payload(self) -> dict:
        """The ``drawn`` traitlet: the shown head's weights as float32 bytes, its tokens, and the message."""
        n = len(self._shown[1])
        return {
            "text": self.text,
            "tokens": self.tokens,
            "shape": [n, n],
            "weights": self.weights.detach()
            .to("cpu", torch.float32)
            .contiguous()
            .numpy()
            .astype("<f4")
            .tobytes(),
            "layer": self.layer,
            "head": self.head,
            "message": self.message,
            "level": self._level,
            "heads": quantise(self.attentions),  # every head, 8-bit: the page draws another layer or head
        }  # at once from these, and this payload's float32 head then replaces it

    # -- display ---------------------------------------------------------------------------------------------

    def static_html(self) -> str:
        """The static viewer for pages without a kernel, at the current layer and head.

        It shows the corpus (on the current sentence, if it is one of the corpus's), or else the sentence
        drawn now, its weights stored 8-bit as the viewer stores them.
        """
        layer, head = self.layer, self.head
        if self.corpus is not None:
            texts = [s["text"] for s in self.corpus["sentences"]]
            first = texts.index(self.text) if self.text in texts else self.corpus["settings"]["sentence"]
            config = {**self.corpus, "settings": {"sentence": first, "layer": layer, "head": head}}
        else:
            config = viewer_config(
                [self.text], [self.tokens], [self.attentions], model=MODEL_NAME, layer=layer, head=head
            )
        return viewer_html(config)

    def __repr__(self) -> str:
        return (
            f"EncoderExplorer({MODEL_NAME}, layer {self.layer + 1}, head {self.head + 1}, "
            f"{len(self.tokens)} tokens: {self.text!r})"
        )
