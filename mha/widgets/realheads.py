"""The real-heads viewer: a pretrained encoder's attention on fixed sentences, precomputed, in the page.

The weights of every head on every sentence are stored 8-bit: ``q = round(w * 255)``, so each weight is
known to within ``1/510`` (half a step of ``1/255``). The bytes, sentence after sentence, each in the order
``[layer][head][query][key]`` (``L * h * n * n`` bytes for a sentence of ``n`` tokens), are compressed with
zlib (deflate) and written in base64 into the root element of ``mha/widgets/static/realheads.js``::

    <div class="mha-realheads"><script type="application/json">{...}</script></div>

That front end needs no kernel: it inflates the bytes in the browser (``DecompressionStream``) and draws one
head with ``heatmaps.js``. :func:`viewer_config` builds the JSON, :func:`dequantise` reads it back (for the
tests and a chapter's check), :class:`RealHeadsViewer` puts it in a notebook's output, for the site.

Shape legend:
    L  number of layers
    h  heads per layer
    n  number of tokens of one sentence
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence

import numpy as np
import torch

from mha.widgets.frontend import inline_json

SCALE = 255  # a weight w is stored as round(w * SCALE), one byte
ENCODING = "uint8-zlib-base64"
CLASS_NAME = "mha-realheads"


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
    for name, value, size in (("sentence", sentence, len(texts)), ("layer", layer, L), ("head", head, h)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
            raise ValueError(f"{name} must be an index in 0..{size - 1}, got {value!r}")
    return {
        "model": model,
        "layers": int(L),
        "heads": int(h),
        "scale": SCALE,
        "encoding": ENCODING,
        "sentences": [{"text": t, "tokens": list(toks)} for t, toks in zip(texts, tokens, strict=True)],
        "data": base64.b64encode(zlib.compress(b"".join(chunks), 9)).decode("ascii"),
        "settings": {"sentence": sentence, "layer": layer, "head": head},
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


class RealHeadsViewer:
    """A notebook output that shows the viewer on the book's site, where its scripts are on every page.

    Its HTML is the root element with the config inline, and a note that the front end replaces. In a live
    notebook the scripts are not loaded (inlining them would tie the stored output to every edit of the
    front end), so the note stays and points to the Python call that draws the same head:
    :func:`mha.figures.pretrained.plot_attention_head`.

    Args:
        config: :func:`viewer_config`'s result.
    """

    def __init__(self, config: dict) -> None:
        dequantise(config)  # checks the data before anything is shown
        self.config = config

    def _repr_html_(self) -> str:
        note = (
            '<p class="mha-note">The real-heads viewer runs on the book\'s website. Here, draw any head with '
            "<code>plot_attention_head(weights[layer, head], tokens, layer=layer, head=head)</code> from "
            "<code>mha.figures.pretrained</code>, after "
            "<code>tokens, weights = attend(encoder, text)</code>.</p>"
        )
        return (
            f'<div class="{CLASS_NAME}"><script type="application/json">{inline_json(self.config)}</script>'
            f"{note}</div>"
        )

    def __repr__(self) -> str:
        c = self.config
        return (
            f"RealHeadsViewer({c['model']}: {len(c['sentences'])} sentences, {c['layers']} layers x "
            f"{c['heads']} heads, {len(c['data'])} base64 characters)"
        )
