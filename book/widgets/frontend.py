"""The browser front ends of the interactive figures, and the data a static page gives them.

The front ends live in ``book/widgets/static/`` as classic scripts (:data:`SCRIPTS`): the ports
(``ports/*.js``, every computation the page makes that has a Python twin, each file naming its twin and tested
against it in the twin's unit test file), ``core.js``, ``controller.js`` (the one controller: controls,
status and messages from a figure's spec, :mod:`book.widgets.spec`), ``heatmaps.js`` and one file per figure,
with ``mha.css``. The book's ``_config.yml`` copies that folder into the built site, and its extension
``_ext/page_assets.py`` loads :data:`SCRIPTS` on every page that shows a figure, so a page opened from disk
works too. A figure on a static page is a root element with its data inline::

    <div class="mha-explorer"><script type="application/json">{"settings": {...}}</script></div>

and the scripts mount it: the explorer then computes its weights in the page, with the port of
:func:`book.compute.explorer_weights` (``ports/explorer.js``). This module writes
those root elements (the JSON formats are documented at the top of each script).

In a live kernel the same files are the widgets' front end: :func:`widget_esm` concatenates them into the
ES module that anywidget loads (one source, read from the package, no copies), ending in
``export default globalThis.mhaFrontEnd.anywidget("mountExplorer")``; Python then computes, and the page
draws what it is sent (see ``anywidget`` in ``core.js``); the explorer also draws a change at once from its
port, which Python's arrays replace when they arrive. Each figure's controls, rules and messages are its spec
(:mod:`book.widgets.spec`), in its root's data and in its ``config`` traitlet. The widgets share their Python
side here: :class:`FrontEndWidget` (the ``config`` and ``settings`` traitlets, and a display bundle that
carries the static front end too) and :class:`ComputedWidget` (``settings`` checked and merged by Python,
which sends back ``drawn``), with :class:`ReaderInputError` and :func:`one_thread` for the widgets that run
a model.

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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import anywidget
import torch
import traitlets

from book.compute.explorer import PARAMETERS
from book.compute.stages import STAGES, stage_decimals
from book.widgets.spec import (
    BUG,
    PROJECTIONS,
    STILL,
    calculator_spec,
    explorer_spec,
    fill,
    parameter_counts,
    stepper_spec,
    token_ranges,
)
from mha.costs.report import calculator_data
from mha.multihead import MultiHeadAttention

# The page code: the figures' in book/widgets/static/, and each model the page runs keeps its own beside its
# Python and its data (book/minilm/static/, book/decoder/static/). The site merges the folders into one
# _static/ (_config.yml's html_static_path), so a name is a path relative to any of them, and no two hold the
# same name (tests/unit/book/widgets/test_frontend.py).
STATIC_PACKAGES = ("book.widgets", "book.minilm", "book.decoder", "book.smollm2")
STATIC_ROOTS = tuple(resources.files(package).joinpath("static") for package in STATIC_PACKAGES)
# The ports (static/ports/): every computation the page makes that has a Python twin, one file per twin,
# DOM-free. They load first, in name order: each reads the others only when called.
PORTS = tuple(
    sorted(
        f"ports/{p.name}"
        for root in STATIC_ROOTS
        for p in root.joinpath("ports").iterdir()
        if p.name.endswith(".js")
    )
)
# Then the framework and the figures; every page with a figure, every deck and every test loads these.
SCRIPTS = (
    *PORTS,
    "core.js",
    "controller.js",
    "heatmaps.js",
    "explorer.js",
    "stepper.js",
    "calculator.js",
    "windows.js",
    "sparse.js",
    "minilm.js",
    "decoderbox.js",
    "smollm2run.js",  # before smollm2.js, whose mount calls it
    "smollm2.js",
)  # load order
STYLESHEET = "mha.css"


def static_path(name: str):
    """The file of the page code called ``name`` (relative to a static folder, e.g. ``ports/random.js``)."""
    for root in STATIC_ROOTS:
        candidate = root.joinpath(*name.split("/"))
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no static folder of {', '.join(STATIC_PACKAGES)} holds {name!r}")


def static_file(name: str) -> str:
    """The text of the page code's file ``name`` (see :func:`static_path`)."""
    return static_path(name).read_text(encoding="utf-8")


def copy_static(directory: Path, names: Sequence[str] = (*SCRIPTS, STYLESHEET)) -> None:
    """Copy files of the page code into ``directory``, keeping their subfolders (``ports/``): a page
    there loads them as the book's pages do (the tests' and benchmarks' harness pages)."""
    for name in names:
        target = Path(directory, name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(static_file(name), encoding="utf-8")


# The scripts each live front end needs, in load order (every port: they are small), and its mount function.
WIDGET_SCRIPTS = {
    "mountExplorer": (*PORTS, "core.js", "controller.js", "heatmaps.js", "explorer.js"),
    "mountStepper": (*PORTS, "core.js", "controller.js", "heatmaps.js", "stepper.js"),
    "mountCalculator": (*PORTS, "core.js", "controller.js", "calculator.js"),
    "mountWindows": (*PORTS, "core.js", "controller.js", "heatmaps.js", "windows.js"),
    "mountSparse": (*PORTS, "core.js", "controller.js", "heatmaps.js", "sparse.js"),
    "mountMiniLM": (
        *PORTS,
        "core.js",
        "controller.js",
        "heatmaps.js",
        "minilm.js",
    ),  # its own adapter: `export`
    "mountDecoder": (*PORTS, "core.js", "controller.js", "heatmaps.js", "decoderbox.js"),  # its own adapter
    "mountSmolLM2": (*PORTS, "core.js", "controller.js", "heatmaps.js", "smollm2.js"),  # its own adapter
}


# Each figure's root element class, by the function that mounts it: the contract by which the pages, the
# lecture decks and the tests find a figure (each script mounts the roots of its own class).
ROOT_CLASSES = {
    "mountExplorer": "mha-explorer",
    "mountStepper": "mha-stepper",
    "mountCalculator": "mha-calculator",
    "mountWindows": "mha-windows",
    "mountSparse": "mha-sparse",
    "mountMiniLM": "mha-minilm",
    "mountDecoder": "mha-decoder",
    "mountSmolLM2": "mha-smollm2",
}
FIGURES = ", ".join(f".{name}" for name in ROOT_CLASSES.values())  # a CSS selector of every figure's root


def widget_esm(mount: str, *, export: str | None = None) -> str:
    """The ES module of a live widget: its classic scripts, then ``export default`` of the anywidget adapter.

    Args:
        mount: ``"mountExplorer"``, ``"mountStepper"``, ``"mountCalculator"``,
            ``"mountWindows"``, ``"mountSparse"``, ``"mountMiniLM"`` or ``"mountDecoder"``.
        export: what the module exports instead of core.js's adapter for ``mount``: an expression, for a
            widget with an adapter of its own (``"globalThis.mhaMiniLM.anywidget"``).
    """
    if mount not in WIDGET_SCRIPTS:
        raise ValueError(f"mount must be one of {sorted(WIDGET_SCRIPTS)}, got {mount!r}")
    sources = [static_file(name) for name in WIDGET_SCRIPTS[mount]]
    default = export or f"globalThis.mhaFrontEnd.anywidget({json.dumps(mount)})"
    return "\n".join([*sources, f"export default {default};\n"])


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


def print_image(picture: bytes, *, alt: str, class_name: str) -> str:
    """A box's static picture (PNG bytes) as its ``<img>``: shown by a notebook front end that runs no page
    script, and by the site in print instead of the controls (the box's script hides it on screen)."""
    src = "data:image/png;base64," + base64.b64encode(picture).decode("ascii")
    alt = html.escape(alt, quote=True)
    return f'<img class="{class_name}" alt="{alt}" style="max-width:100%" src="{src}">'


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
    name: str = "",
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
        name: what the page calls the model ("" for no name).
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
        "known": token_ranges(vocabulary),  # the tokens, as the page names them to a reader
        "embeddings": tensor_json(tokens),
        "positions": tensor_json(positions),
        "params": {key: tensor_json(state[key]) if key in state else None for key in PARAMETERS},
        "parameters": module_parameters(attn),  # per projection and in total, as the page shows them
    }


def module_parameters(attn: MultiHeadAttention) -> dict[str, int]:
    """A layer's parameters per projection and in total (:func:`book.widgets.spec.parameter_counts`)."""
    return parameter_counts({w: sum(p.numel() for p in getattr(attn, w).parameters()) for w in PROJECTIONS})


def stepper_config(stages: dict[str, torch.Tensor], tokens: Sequence[str], stage: str = "out") -> dict:
    """The stepper's data: its spec (:func:`book.widgets.spec.stepper_spec`), the tokens, every stage of
    ``attention_stages`` with its description, and the stage shown first."""
    return {
        "spec": stepper_spec(),
        "tokens": list(tokens),
        "settings": {"stage": stage},
        "stages": [
            {
                **dataclasses.asdict(s),
                "values": stages[s.key].to(torch.float64).tolist(),
                "decimals": stage_decimals(stages[s.key], s.key),  # printed in cells large enough
            }
            for s in STAGES
        ],
    }


def explorer_config(settings: dict, model: dict | None = None) -> dict:
    """The explorer's data: its spec (:func:`book.widgets.spec.explorer_spec`), first settings and trained
    model (:func:`model_payload`, or ``None``)."""
    return {"spec": explorer_spec(trained=model is not None), "settings": dict(settings), "model": model}


def calculator_config(settings: dict) -> dict:
    """The calculator's data: its spec, per decoder-only model of ``MODEL_CONFIGS`` what the page needs to add
    up its costs (:func:`mha.costs.calculator_data`), and the first settings."""
    configs = calculator_data()
    return {
        "spec": calculator_spec([c["name"] for c in configs]),
        "configs": configs,
        "settings": dict(settings),
    }


# -- the widgets' Python side -------------------------------------------------------------------------------


class ReaderInputError(Exception):
    """A reader's input that cannot be drawn: the widget shows the message, it is not a bug."""


@contextmanager
def one_thread() -> Iterator[None]:
    """Run PyTorch single-threaded inside the block, then restore the caller's setting.

    The widgets' tensors are tiny (at most 16 tokens in the explorer), so a thread pool only costs: on a busy
    two-core machine, waking PyTorch's second thread made a (10, 32) projection take 5-25 ms instead of 10 us.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


class BoxWidget(anywidget.AnyWidget):
    """A box whose page asks Python (chapter 1's MiniLM box, the decoder box): ``spec`` goes to the page once;
    each request comes as a custom message ``{"id", ...}`` and :meth:`compute` answers it, sent back as
    ``{"id", "result"}`` (an attention as float32 bytes in the buffers: :meth:`attention_reply`) or as
    ``{"id", "error"}`` with the message of the ``TypeError`` or ``ValueError`` a reader's input raised (the
    page's side: ``pythonCalls`` and ``pythonBox`` in ``core.js``). The display bundle also holds the static
    box, ``_static``, as ``text/html``, which the book's site ranks above the widget view. A subclass sets
    ``_esm``, ``_css``, ``_static`` and defines :meth:`compute` and ``__repr__``."""

    spec = traitlets.Dict().tag(sync=True)  # the box's spec, sent to the page once
    _static = ""  # the box for renderers without a kernel

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.on_msg(self._on_message)

    def compute(self, message: dict) -> tuple[dict, list[bytes]]:
        """Answer one request of the page: ``(result, buffers)``."""
        raise NotImplementedError

    @staticmethod
    def attention_reply(result: dict, attention: torch.Tensor) -> tuple[dict, list[bytes]]:
        """``result`` and ``attention`` (any shape) as a reply: float32 little-endian bytes, the shape in
        ``result["attention_shape"]``."""
        data = attention.to(torch.float32).contiguous().numpy().astype("<f4").tobytes()
        return {**result, "attention_shape": list(attention.shape)}, [data]

    def reply(self, content: dict) -> tuple[dict, list[bytes]]:
        """The reply to one request of the page, ``(message, buffers)``: ``{"id", "result"}`` and the
        result's bytes, or ``{"id", "error"}`` and none where a reader's input raised."""
        try:
            with one_thread():
                result, data = self.compute(content)
        except (TypeError, ValueError) as error:
            return {"id": content["id"], "error": str(error)}, []
        return {"id": content["id"], "result": result}, data

    def _on_message(self, widget: object, content: dict, buffers: list) -> None:
        """A request from the page (a dict with an ``id``): send back its :meth:`reply`."""
        if isinstance(content, dict) and "id" in content:
            self.send(*self.reply(content))

    def _repr_mimebundle_(self, **kwargs: object) -> tuple[dict, dict]:
        """The widget for live front ends, plus the static box for renderers without a kernel."""
        data, metadata = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = repr(self)
        data["text/html"] = self._static
        return data, metadata


class FrontEndWidget(anywidget.AnyWidget):
    """An anywidget whose front end is one of the book's scripts: ``config`` and ``settings``, live or static.

    ``config`` goes from Python to the page once, ``settings`` (the controls' values) is synced both ways.
    The display bundle holds the widget view for live front ends and, for renderers without a kernel, the
    same front end's root element with its data inline (:meth:`static_html`) as ``text/html``, with
    ``repr(self)`` as ``text/plain``. A subclass sets ``_esm`` and ``_css`` and defines :meth:`static_html`.
    """

    config = traitlets.Dict().tag(sync=True)
    settings = traitlets.Dict().tag(sync=True)

    def static_html(self) -> str:
        """HTML for pages without a kernel: the front end's root element with its data inline."""
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs) -> tuple[dict, dict]:
        """The widget for live front ends, plus the static front end for renderers without a kernel."""
        data, metadata = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = repr(self)
        data["text/html"] = self.static_html()
        return data, metadata


class ComputedWidget(FrontEndWidget):
    """A front end that draws what Python computes: ``settings`` in, the ``drawn`` traitlet out.

    A change arrives through :meth:`update` (from code) or as an assignment of ``settings`` (from the page,
    or a notebook); either way only the known settings (``SETTINGS``) that changed reach :meth:`_react`,
    which checks and applies them and sends the result with :meth:`_publish`. While the widget itself writes
    its traitlets, the page's assignments are not reacted to.

    Attributes:
        last_error: the last unexpected exception raised while reacting to a change, or ``None``.
    """

    SETTINGS: tuple[str, ...] = ()  # the names of the settings, in the page's order
    NAME = "widget"  # how its messages name it
    STILL = STILL  # after a message about the reader's input (book.widgets.spec)
    drawn = traitlets.Dict().tag(sync=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.last_error: BaseException | None = None
        self._publishing = False  # set while the widget itself writes its traitlets

    def update(self, **changes: object) -> None:
        """Change some settings, as a reader's controls do; ``KeyError`` for an unknown one."""
        unknown = sorted(set(changes) - set(self.SETTINGS))
        if unknown:
            raise KeyError(f"unknown settings {unknown}; the settings are {list(self.SETTINGS)}")
        self._react(changes)

    @traitlets.observe("settings")
    def _settings_changed(self, change: dict) -> None:
        """The page (or a notebook) assigned ``settings``: merge what changed, as :meth:`update` does."""
        if self._publishing:
            return
        old, new = change["old"] or {}, change["new"] or {}
        self._react({k: v for k, v in new.items() if k in self.SETTINGS and old.get(k, ...) != v})

    def _react(self, changes: dict) -> None:
        """Check and apply the changed settings, recompute, and :meth:`_publish` the result."""
        raise NotImplementedError

    def _compute_or_explain(self, compute: Callable[[], None], settings: dict) -> None:
        """Run ``compute``. A reader's unusable input (:class:`ReaderInputError`) becomes ``message`` and the
        picture stays; anything else is a bug: shown, kept in ``last_error``, published and raised."""
        try:
            compute()
            self.message, self._level = "", ""
        except ReaderInputError as note:
            self.message, self._level = str(note) + self.STILL, "warning"
        except Exception as error:
            self.last_error = error
            self.message = fill(BUG, figure=self.NAME, error=f"{type(error).__name__}: {error}")
            self._level = "error"
            self._publish(settings, self.payload())
            raise

    def payload(self) -> dict:
        """The ``drawn`` traitlet for the current state."""
        raise NotImplementedError

    def _publish(self, settings: dict, drawn: dict) -> None:
        """Write ``settings`` and ``drawn`` to the traitlets: the page shows the controls and the picture."""
        self._publishing = True
        try:
            with self.hold_sync():
                if self.settings != settings:
                    self.settings = dict(settings)
                self.drawn = drawn
        finally:
            self._publishing = False
