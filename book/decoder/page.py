"""The decoder's weights for the page: a classic script that the book's build writes into ``_static/``.

The page of "Heads that work together" runs :func:`book.decoder.model.predict` in the reader's browser with
no kernel: ``book/decoder/static/ports/decoder.js`` is its port; the weights are a separate classic script,
:data:`WEIGHTS_SCRIPT`, written from the shipped safetensors when an HTML build finishes (the Sphinx extension
``_ext/decoder_weights.py`` calls :func:`write_weights_script`). It is never committed and never inlined in
a page; a page loads it with ``<script src>``, which works from ``file://`` as from ``http://``.

Its format (:data:`FORMAT`), one call::

    globalThis.mhaDecoderWeights({"format": "float16-base64", "format_version": 1, "config": {...},
                                  "vocab": [token, ...], "unknown": id, "top_k": 5, "messages": {...},
                                  "tensors": {name: {"shape": [...], "data": b64}}})

``name`` is a parameter of :class:`book.decoder.model.Decoder` (``embed.weight``,
``layers.0.attn.W_q.weight``, ...), and ``data`` its shipped float16 values, little-endian, in row-major
order, in base64: the very values Python computes with. ``config`` is :data:`book.decoder.model.DECODER`,
``vocab`` :func:`book.decoder.model.vocabulary`, and ``messages`` the texts of the errors that
:func:`~book.decoder.model.predict` raises, so that the port words them as Python does.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path

import numpy as np
import torch

from book.decoder.model import DECODER, MESSAGES, SHIPPED_DTYPE, TOP_K, UNKNOWN, VOCABULARY, load_state

WEIGHTS_SCRIPT = "decoder-weights.js"  # the file's name in the built site's _static/
FORMAT = "float16-base64"  # how the script stores every tensor
FORMAT_VERSION = 1  # bump when the script's layout changes
CALLBACK = "mhaDecoderWeights"  # the global function the script calls with its data


def weights_payload(state: dict[str, torch.Tensor] | None = None) -> dict:
    """The weights script's data (see the module docstring), from ``state`` (default: the shipped weights).

    Raises:
        ValueError: a tensor of ``state`` is not stored as float16 (the page must have Python's values).
    """
    state = load_state() if state is None else state
    tensors = {}
    for name, t in sorted(state.items()):  # by name: the same script from the same weights
        if t.dtype != SHIPPED_DTYPE:
            raise ValueError(
                f"state[{name!r}] must be {SHIPPED_DTYPE}, as the shipped weights, got {t.dtype}"
            )
        values = t.detach().to("cpu").contiguous().numpy().astype("<f2")  # float16, little-endian
        data = base64.b64encode(values.tobytes()).decode("ascii")
        tensors[name] = {"shape": list(values.shape), "data": data}
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "config": dataclasses.asdict(DECODER),
        "vocab": list(VOCABULARY),
        "unknown": VOCABULARY.index(UNKNOWN),
        "top_k": TOP_K,
        "messages": dict(MESSAGES),
        "tensors": tensors,
    }


def decode_tensor(entry: dict) -> np.ndarray:
    """One tensor of :func:`weights_payload` back as a float32 array (for the tests)."""
    values = np.frombuffer(base64.b64decode(entry["data"]), dtype="<f2")
    return values.astype(np.float32).reshape(entry["shape"])


def weights_script(state: dict[str, torch.Tensor] | None = None) -> str:
    """The text of :data:`WEIGHTS_SCRIPT`: one call of :data:`CALLBACK` with :func:`weights_payload`."""
    payload = json.dumps(weights_payload(state), separators=(",", ":"), ensure_ascii=True)
    return f"globalThis.{CALLBACK}({payload});\n"


def write_weights_script(target: str | Path) -> Path:
    """Write :func:`weights_script` to ``target`` (the built site's ``_static/decoder-weights.js``)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(weights_script(), encoding="ascii")
    return target
