"""The browser front ends of the interactive figures, and the data a static page gives them.

The drawing code lives in ``mha/widgets/static/`` as classic scripts (``core.js``, ``heatmaps.js``,
``explorer.js``, ``stepper.js``, ``calculator.js``, ``realheads.js`` and ``mha.css``); the book's
``_config.yml`` copies that folder into the built site and loads it on every page, so a page opened from
disk works too. A figure on a static page is a root element with its data inline::

    <div class="mha-explorer"><script type="application/json">{"settings": {...}}</script></div>

and the scripts mount it: the explorer then computes its weights in the page, with a port of
:func:`mha.compute.explorer_weights` that the browser tests keep equal to the Python. This module writes
those root elements (the JSON formats are documented at the top of each script).

In a live kernel the same files are the widgets' front end: :func:`widget_esm` concatenates them into the
ES module that anywidget loads (one source, read from the package, no copies), ending in
``export default globalThis.mhaFrontEnd.anywidget("mountExplorer")``; Python then computes and the page
only draws what it is sent (see ``anywidget`` in ``core.js``).

Shape legend:
    n        number of tokens
    d_model  model width
    h        number of heads
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
from collections.abc import Callable, Sequence
from importlib import resources

import torch

from mha.compute.explorer import PARAMETERS
from mha.compute.stages import STAGES
from mha.costs.configs import MODEL_CONFIGS
from mha.multihead import MultiHeadAttention

SCRIPTS = (
    "core.js",
    "heatmaps.js",
    "explorer.js",
    "stepper.js",
    "calculator.js",
    "realheads.js",
)  # load order
STYLESHEET = "mha.css"


def static_file(name: str) -> str:
    """The text of one file of ``mha/widgets/static/``."""
    return resources.files("mha.widgets").joinpath("static", name).read_text(encoding="utf-8")


# The scripts each live front end needs, in load order, and the function that mounts it.
WIDGET_SCRIPTS = {
    "mountExplorer": ("core.js", "heatmaps.js", "explorer.js"),
    "mountStepper": ("core.js", "heatmaps.js", "stepper.js"),
    "mountCalculator": ("core.js", "calculator.js"),
    "mountRealHeads": ("core.js", "heatmaps.js", "realheads.js"),
}


def widget_esm(mount: str) -> str:
    """The ES module of a live widget: its classic scripts, then ``export default`` of the anywidget adapter.

    Args:
        mount: ``"mountExplorer"``, ``"mountStepper"``, ``"mountCalculator"`` or ``"mountRealHeads"``.
    """
    if mount not in WIDGET_SCRIPTS:
        raise ValueError(f"mount must be one of {sorted(WIDGET_SCRIPTS)}, got {mount!r}")
    sources = [static_file(name) for name in WIDGET_SCRIPTS[mount]]
    return "\n".join([*sources, f"export default globalThis.mhaFrontEnd.anywidget({json.dumps(mount)});\n"])


def widget_css() -> str:
    """The stylesheet of every front end, as anywidget's ``_css``."""
    return static_file(STYLESHEET)


def inline_json(data: object) -> str:
    """JSON for a ``<script type="application/json">`` block: ``</`` cannot end the script early."""
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def root_html(class_name: str, config: dict, *, fallback: str = "") -> str:
    """A front end's root element with its data inline, and ``fallback`` HTML for readers without scripts."""
    noscript = f"<noscript>{fallback}</noscript>" if fallback else ""
    return (
        f'<div class="{html.escape(class_name)}">'
        f'<script type="application/json">{inline_json(config)}</script>{noscript}</div>'
    )


def tensor_json(t: torch.Tensor) -> dict:
    """A tensor for the page: float32 little-endian bytes in base64, with its shape."""
    data = t.detach().to("cpu", torch.float32).contiguous().numpy().astype("<f4").tobytes()
    return {"dtype": "float32", "shape": list(t.shape), "data": base64.b64encode(data).decode("ascii")}


def model_payload(
    attn: MultiHeadAttention,
    vocabulary: Sequence[str],
    embed: Callable[[Sequence[str]], torch.Tensor],
    max_tokens: int,
    *,
    name: str = "trained model",
) -> dict:
    """The explorer's ``model``: a trained layer's projections by name, a vector per token and per position.

    ``embed`` must add a token's vector and its position's vector (as a learned or sinusoidal position
    embedding does). Any split of the sum serves, so the token vectors are ``embed([t])`` (position 0
    included) and position ``p``'s vector is the difference that position ``p`` makes:
    ``embed([t0] * max_tokens)[p] - embed([t0] * max_tokens)[0]``.

    Args:
        attn: the trained attention layer; its parameters are exported by name (:data:`PARAMETERS`).
        vocabulary: every token the model can embed.
        embed: tokens to the layer's input ``(n, d_model)``.
        max_tokens: the longest sentence the page may embed.
        name: what the page calls the model.
    """
    with torch.no_grad():
        tokens = torch.stack([embed([t])[0] for t in vocabulary])  # (len(vocabulary), d_model)
        repeated = embed([vocabulary[0]] * max_tokens)  # (max_tokens, d_model)
        positions = repeated - repeated[0]  # (max_tokens, d_model)
    state = attn.state_dict()
    return {
        "name": name,
        "d_model": attn.d_model,
        "h": attn.h,
        "vocab": list(vocabulary),
        "embeddings": tensor_json(tokens),
        "positions": tensor_json(positions),
        "params": {key: tensor_json(state[key]) if key in state else None for key in PARAMETERS},
    }


def stepper_config(stages: dict[str, torch.Tensor], tokens: Sequence[str], stage: str = "out") -> dict:
    """The stepper's data: the tokens and every stage of ``attention_stages`` with its description."""
    return {
        "tokens": list(tokens),
        "stage": stage,
        "stages": [
            {**dataclasses.asdict(s), "values": stages[s.key].to(torch.float64).tolist()} for s in STAGES
        ],
    }


def calculator_config(settings: dict) -> dict:
    """The calculator's data: the decoder-only configurations of ``MODEL_CONFIGS`` and the first settings."""
    fields = ("name", "d_model", "h", "n_kv_heads", "n_layers", "context", "kind")
    configs = [{f: getattr(c, f) for f in fields} for c in MODEL_CONFIGS.values() if c.kind == "decoder"]
    return {"configs": configs, "settings": dict(settings)}
