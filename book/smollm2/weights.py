"""SmolLM2-135M-Instruct in the page: the weights scripts of "Run on your own text" (figure ``mha-smollm2``).

The page runs the model in a Web Worker with the port ``book/smollm2/static/ports/smollm2_model.js``
(tokenizer, dequantisation and forward pass, each tested against :mod:`mha.pretrained.smollm2` in
``tests/unit/book/smollm2/test_weights.py``), driven by ``book/smollm2/static/smollm2run.js``, which
gives the figure's element its contract ``el.mha.predict`` / ``el.mha.generate``. Nothing is computed in
Python for it and nothing comes from the network: the weights are the GGUF file's own blocks (Q4_1 layers,
Q8_0 embedding, float32 norms), not re-quantised, written by the book's build beside ``smollm2run.js`` as
classic scripts (``file://`` runs no ``fetch``), by :func:`write_weights_script` (the Sphinx extension
``_ext/smollm2_weights.py``):

* :data:`WEIGHTS_FILE`, one call ``globalThis.mhaSmolLM2Weights({...})`` with :func:`weights_manifest`: the
  model's sizes, the tokenizer (the file's tokens, merges and control tokens), where each tensor lies in the
  bytes, and where the bytes are;
* ``<PARTS_DIR>/<k>.js``, one call ``globalThis.mhaSmolLM2Part(k, "<base64>")`` each: bytes
  ``PART_BYTES * k`` onwards (at most :data:`PART_BYTES`) of the tensors' data laid end to end, in the file's
  order (:func:`tensor_bytes`). A part is small so that decoding its base64 on the page's main thread is one
  short task; the page transfers each part's bytes to the worker.

The Chinese site loads the English site's ``_static/`` (``scripts/zh_book.py``), so the files are written
once. They are never committed and never inlined in a page: a page loads them only when the reader asks.
"""

from __future__ import annotations

import base64
import functools
import json
import math
from pathlib import Path

from book.widgets.cached_scripts import cached_scripts
from mha.pretrained.smollm2 import CONTROL, MODEL_FILE, gguf_path, read_config, read_gguf

WEIGHTS_FILE = "smollm2-weights.js"  # written beside smollm2run.js in the built site's _static/
PARTS_DIR = "smollm2-parts"  # beside WEIGHTS_FILE: <k>.js holds part k of the tensors' bytes
CALLBACK = "mhaSmolLM2Weights"  # the global function WEIGHTS_FILE calls with the manifest
PART_CALLBACK = "mhaSmolLM2Part"  # the global function a part calls with its index and base64 text
FORMAT = "gguf-blocks-base64"  # the file's own blocks, in base64
FORMAT_VERSION = 1  # bump when the scripts change, so a cached copy is rebuilt
# Bytes per part: a multiple of 3, so every part's base64 stands alone (2,000,000 characters; the page
# decodes one in a few milliseconds).
PART_BYTES = 1_500_000
MAX_TOKENS = 128  # the page's limit: a text (and, to generate, the text and its new tokens) of at most this
BUDGET_BYTES = 135_000_000  # what the page may load in all (the bound)
# What the page loads in all (weights_size(), which reads the file: a pretrained test checks this count), so
# that the figure can say the download's size before loading and make book need not open the file.
WEIGHTS_BYTES = 130_171_297
NEW_TOKENS = 24  # the greedy continuation the figure shows
DEFAULT_TEXT = "The cat sat on the mat because the cat was tired. The cat sat on the"
# The census's kinds the figure switches off at once (book.smollm2.census), and how it names them.
KINDS_OFF = {"induction": "induction heads", "previous": "previous-token heads"}
RUN_MESSAGES = {
    "heading": "Run on your own text",
    "about": (
        "Type any text: SmolLM2-135M-Instruct runs on it in this page, offline, after a one-time load of "
        "{mb} MB (its 4-bit weights as the file holds them). The figure above then shows your text, the "
        "table the five most probable next tokens at every position, and the model continues your text "
        "greedily. Switch heads off and both change. At most {max} tokens."
    ),
    "text_label": "Your text",
    "run": "Load the model ({mb} MB) and run",
    "run_again": "Run",  # the button, once the model is in the page
    "cancel": "Cancel",
    "progress": "Loading SmolLM2-135M-Instruct",
    "idle": "Nothing is loaded yet: the first run loads {mb} MB into this page.",
    "loading": "Loading SmolLM2-135M-Instruct into this page: {done} of {mb} MB. Escape or Cancel stops it.",
    "running": "Running the model on your text…",
    "generating": "Your text, {n} {n|token|tokens}: continuing it…",
    "done": "Your text, {n} {n|token|tokens}, all heads on; {m} new {m|token|tokens}.",
    "done_off": (
        "Your text, {n} {n|token|tokens}, with {k} {k|head|heads} switched off; {m} new {m|token|tokens}."
    ),
    "empty": "Type a text first: there is nothing to run the model on.",
    "failed": "The model could not run: {error}",
    "off_summary": "Switch heads off",
    "kind_off": "Switch off the {k} {kinds}",
    "all_on": "All heads on",
    "off_count": "{k} of {total} heads switched off.",
    "none_off": "All {total} heads on.",
    "layer": "Layer {layer}",
    "group_box": "group {group}",
    "head_box_label": "Switch off layer {layer}, head {head} ({kind})",
    "top_caption": "The five most probable next tokens after each position of your text",
    "position": "position",
    "token": "token",
    "rank": "#{k}",
    "continuation": "Greedy continuation:",
    # what el.mha.predict and el.mha.generate reject with (plain Errors; the status line shows them too)
    "no_script": "could not load {file}",
    "no_worker": "this browser cannot run the model off the page (no Web Workers)",
    "unreadable": "could not read {file}",
    "cancelled": "loading was cancelled",
    "worker_failed": "the model's worker stopped",
    "not_string": "text must be a string, got {type}",
    "empty_text": "text must not be empty",
    "off_array": "off must be an array of [layer, head] pairs",
    "off_pair": "off must hold [layer, head] pairs of integers, got {pair}",
    "off_head": (
        "off names head [{pair}], which the model lacks: layers 0..{last_layer}, heads 0..{last_head}"
    ),
    "too_long": "text is {n} tokens{extra}, more than the {max} tokens this page runs the model on",
    "too_long_new": " and max_new_tokens={k}",
    "max_new": "max_new_tokens must be a positive integer, got {value}",
    "max_new_long": "max_new_tokens is {value}, more than the {max} tokens this page runs the model on",
}


def run_spec() -> dict:
    """What the figure's spec says of "Run on your own text" (``spec["run"]``): the weights' first file and
    format, their size in bytes, the page's token limit, the continuation's length, the text it opens with,
    the kinds it switches off at once and its messages."""
    return {
        "weights": WEIGHTS_FILE,
        "format": FORMAT,
        "bytes": WEIGHTS_BYTES,
        "max_tokens": MAX_TOKENS,
        "new_tokens": NEW_TOKENS,
        "default_text": DEFAULT_TEXT,
        "kinds": dict(KINDS_OFF),
        "messages": dict(RUN_MESSAGES),
    }


def _value(reader, key: str) -> object:
    return reader.fields[key].contents()


def _tensors(reader) -> list:
    return list(reader.tensors)  # the file's order


def weights_manifest(reader=None) -> dict:
    """What :data:`WEIGHTS_FILE` holds: ``{"format", "format_version", "model", "file", "config",
    "max_tokens", "tokenizer": {"tokens", "merges", "control"}, "tensors": {name: {"type", "shape", "offset",
    "bytes"}}, "bytes", "parts": {"count", "folder", "callback", "bytes"}}``. ``shape`` is the file's
    (columns first), ``offset`` where the tensor starts in :func:`tensor_bytes`."""
    reader = reader or read_gguf()
    config = read_config(reader)
    tensors, offset = {}, 0
    for t in _tensors(reader):
        size = int(t.data.nbytes)
        tensors[t.name] = {
            "type": t.tensor_type.name,
            "shape": [int(s) for s in t.shape],
            "offset": offset,
            "bytes": size,
        }
        offset += size
    types = _value(reader, "tokenizer.ggml.token_type")
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": "SmolLM2-135M-Instruct",
        "file": MODEL_FILE,
        "config": {
            "vocab_size": config.vocab_size,
            "d_model": config.d_model,
            "n_layers": config.n_layers,
            "h": config.h,
            "n_kv_heads": config.n_kv_heads,
            "d_k": config.d_k,
            "d_ff": config.d_ff,
            "theta": config.theta,
            "eps": config.eps,
            "end_of_turn": config.end_of_turn,
        },
        "max_tokens": MAX_TOKENS,
        "tokenizer": {
            "tokens": list(_value(reader, "tokenizer.ggml.tokens")),
            "merges": list(_value(reader, "tokenizer.ggml.merges")),
            "control": [i for i, kind in enumerate(types) if kind == CONTROL],
        },
        "tensors": tensors,
        "bytes": offset,
        "parts": {
            "count": math.ceil(offset / PART_BYTES),
            "folder": PARTS_DIR,
            "callback": PART_CALLBACK,
            "bytes": PART_BYTES,
        },
    }


def tensor_bytes(reader=None) -> bytes:
    """Every tensor's data as the file holds it (its blocks, not re-quantised), end to end, in the file's
    order: what the parts hold."""
    reader = reader or read_gguf()
    return b"".join(t.data.tobytes() for t in _tensors(reader))


@functools.cache
def weights_size() -> int:
    """The bytes the page loads in all: the characters of :data:`WEIGHTS_FILE` and of every part (ASCII),
    counted without writing them (a test checks it against the written files)."""
    manifest = weights_manifest()
    head = len(_manifest_script(manifest))
    parts = manifest["parts"]
    total = manifest["bytes"]
    part_chars = sum(
        len(_part_script(k, "")) + 4 * math.ceil(min(PART_BYTES, total - k * PART_BYTES) / 3)
        for k in range(parts["count"])
    )
    return head + part_chars


def _manifest_script(manifest: dict) -> str:
    return f"globalThis.{CALLBACK}({json.dumps(manifest, separators=(',', ':'))});\n"


def _part_script(index: int, text: str) -> str:
    return f'globalThis.{PART_CALLBACK}({index},"{text}");\n'


def _write_scripts(directory: Path) -> None:
    reader = read_gguf()
    manifest = weights_manifest(reader)
    (directory / WEIGHTS_FILE).write_text(_manifest_script(manifest), encoding="ascii")
    (directory / PARTS_DIR).mkdir()
    data = tensor_bytes(reader)
    for k in range(manifest["parts"]["count"]):
        text = base64.b64encode(data[k * PART_BYTES : (k + 1) * PART_BYTES]).decode("ascii")
        (directory / PARTS_DIR / f"{k}.js").write_text(_part_script(k, text), encoding="ascii")


def model_version() -> str:
    """The installed file's size and modification time: a new file rebuilds the cached scripts."""
    stat = gguf_path().stat()
    return f"{stat.st_size}-{int(stat.st_mtime)}"


def write_weights_script(target: Path, *, cache: Path | None = None) -> Path:
    """Write :data:`WEIGHTS_FILE` to ``target`` and the parts into :data:`PARTS_DIR` beside it, building them
    once per installed file into ``cache`` (:func:`book.widgets.cached_scripts.cached_scripts`).

    Returns:
        ``target``.
    """
    name = f"smollm2-weights-{model_version()}-v{FORMAT_VERSION}"
    return cached_scripts(name, _write_scripts, Path(target), (PARTS_DIR,), cache=cache)


__all__ = [
    "CALLBACK",
    "FORMAT",
    "MAX_TOKENS",
    "PARTS_DIR",
    "PART_BYTES",
    "PART_CALLBACK",
    "WEIGHTS_BYTES",
    "WEIGHTS_FILE",
    "run_spec",
    "tensor_bytes",
    "weights_manifest",
    "weights_size",
    "write_weights_script",
]
