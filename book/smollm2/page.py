"""The figure ``mha-smollm2``: any of SmolLM2-135M-Instruct's 270 heads on a prompt, and the 9 of its layer.

On "What trained heads do" the reader picks one of the prompts stored with the page
(:mod:`book.smollm2.stored`, written by ``make smollm2-heads``: ``make book`` loads no model), a layer and a
head, and sees that head's attention large, the layer's 9 heads small (rows: the 3 key/value groups, each
shared by 3 query heads), the head's scores on the prompt and over the census (sink, previous-token,
induction), its kind from the census (:mod:`book.smollm2.census`) and its key/value group, and a *Notice*
computed here for each prompt (:func:`notices`), true whatever head is shown. Everything is in the root's
inline JSON (no fetch, no module: the page works from disk), and ``book/smollm2/static/smollm2.js`` draws it;
like every figure it is mounted from its spec by the shared controller (``controller.js``): the controls
(:class:`book.widgets.spec.Control`), defaults and every text it shows (:data:`MESSAGES`) are defined here.

In a live kernel, :class:`SmolLM2Widget` is the same front end (an anywidget): the reader types a text, and
Python runs the model on it (:func:`mha.pretrained.smollm2.predict`), with the heads the reader switched off
(their outputs zeroed before ``W_o``).

The page's contract: the root ``.mha-smollm2`` gets a property ``mha`` with ``settings`` and
``update(settings)`` (``prompt``, ``layer``, ``head``, 0-based), ``ready`` (a promise, resolved once the
stored prompt it opens on is drawn), ``drawn`` (``{prompt, tokens, layer, head, live}``), ``show(result)``
(draw ``{tokens, attention, scores?, label?}`` computed elsewhere, ``attention[layer][head][query][key]``:
"SmolLM2 in the page" calls it), ``stored(name)`` (a prompt's ``{tokens, attention}``) and ``off`` (live:
the heads switched off). ``globalThis.mhaSmolLM2`` holds ``drawHead(canvas, head, tokens, options)`` and
``drawLayer(container, layer, tokens, options)``, the two pictures, for any attention.

Shape legend:
    L  number of layers, 30
    h  query heads per layer, 9; g key/value groups, 3 (query head i reads group i // 3)
    n  tokens of one prompt
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from book.figures._pyplot import figure, png
from book.figures._text import kept, tr
from book.smollm2.stored import dequantise, prompt_scores
from book.smollm2.weights import run_spec
from book.widgets.frontend import ROOT_CLASSES, BoxWidget, inline_json, print_image, widget_css, widget_esm
from book.widgets.spec import LAYER_HEAD, QUERY_KEY, Control, fill, messages
from mha.pretrained.smollm2 import SMOLLM2

CLASS_NAME = ROOT_CLASSES["mountSmolLM2"]  # "mha-smollm2", which smollm2.js mounts
MODEL_NAME = "SmolLM2-135M-Instruct"
DEFAULT_PROMPT = "repeat"  # the prompt the figure opens on; the head is its notice's
INDUCTION_SHOWS = (
    0.3  # a prompt's notice names an induction head if one scores this much on it (the census's)
)
MAX_TOKENS = 256  # the live widget runs at most this many tokens
KIND_NAMES = {  # the census's kinds (book.smollm2.census.KINDS), as the figure names a head's
    "induction": "induction head",
    "previous": "previous-token head",
    "sink": "sink head",
    "local": "local head",
    "broad": "broad head",
    "mixed": "mixed head",
}
MESSAGES = {
    "layer_choice": "layer {layer}",
    "head_choice": "head {head} (group {group})",
    "stored": (
        "Prompt {index} of {count} stored with this page ({n} tokens): every weight to the nearest 1/{scale}."
    ),
    "stored_failed": "The stored weights could not be read in this browser: {error}",
    "notice": "Notice: {text}",
    "notice_induction": (
        "layer {layer}, head {head} ({kind} in the census): each token of the second copy puts on average "
        "{share} of its weight on the token after its earlier occurrence, while the average head of layer "
        "{layer} puts {sink} of its weight on the first token, the sink."
    ),
    "notice_previous": (
        "layer {layer}, head {head} ({kind} in the census) puts on average {share} of each token's weight on "
        "the token just before it, a line one cell left of the diagonal, while the average head of layer "
        "{layer} puts {sink} of its weight on the first token, the sink."
    ),
    "notice_so": (
        "“So” now stands at position 0 and takes {share} of the average head's weight over the sentence's "
        "tokens, while the sentence's own first word, “{word}”, gets {old}: the sink is a place, not a word. "
        "Layer {layer}, head {head} ({kind} in the census) shows it."
    ),
    "layer_grid": "The 9 heads of layer {layer}: rows are the key/value groups, each shared by 3 query heads",
    "grid_help": "The arrow keys move between the heads; Enter shows the head large.",
    "group": "group {group}",
    "thumb": "head {head}, group {group}: {kind}",
    "thumb_off": ", switched off",
    "big": (
        "Layer {layer}, head {head} ({kind}, key/value group {group}){switched}: row i shows where token i "
        "looks."
    ),
    "big_switched": ", switched off: its weights are computed but its output is zeroed",
    "big_label": (
        "Attention of layer {layer}, head {head} over {n} {n|token|tokens}; the arrow keys move along its "
        "cells, "
        "Page Up and Page Down to the previous and next head"
    ),
    "big_empty": "The head shown large, drawn once the prompt is read",
    "panel": LAYER_HEAD,
    "cell": LAYER_HEAD + ": " + QUERY_KEY + ": weight {weight}",
    "scores": "Scores of layer {layer}, head {head}",
    "score_name": "score",
    "on_prompt": "this prompt",
    "on_census": "census",
    "sink": "sink (first token)",
    "previous": "previous token",
    "induction": "induction",
    "none": "–",
    "kind_line": "Kind in the census: {kind}. Key/value group {group} of 3, shared with heads {others}.",
    "two": "{a} and {b}",  # the two other heads of a group
    # live, in a kernel
    "run": "Run",
    "running": "Running SmolLM2 on your text…",
    "live": "Your text, {n} {n|token|tokens}, run by Python in this notebook's kernel{off}.",
    "live_off": ", with {k} {k|head|heads} switched off",
    "own": (
        "Your text, {n} {n|token|tokens}, run by SmolLM2 in this page (“Run on your own text”, below). "
        "Pick a prompt to see a stored one again."
    ),
    "empty": "Type a text first: there is nothing to run the model on.",
    "failed": "The model could not run: {error}",
    "toggle_off": "Switch layer {layer}, head {head} off",
    "toggle_on": "Switch layer {layer}, head {head} back on",
    "reset": "All heads on",
}
CONTROL_LABELS = {"prompt": "Prompt", "layer": "Layer", "head": "Head", "text": "Your text"}
FALLBACK = (
    "<p>This figure shows every head of SmolLM2-135M-Instruct on the prompts stored with the book's site "
    "(online or opened from disk). It needs JavaScript; in a live notebook, "
    "<code>book.smollm2.page.SmolLM2Widget</code> is the same figure, run by Python on your own text.</p>"
)


def _share(value: float) -> str:
    return f"{value:.0%}"


def notices(results: dict, stored: dict) -> list[dict]:
    """For each stored prompt, what its Notice says and the head it names: ``{"text", "layer", "head",
    "message", "fields"}`` (``layer`` and ``head`` 0-based; ``message`` is the key of :data:`MESSAGES` that
    ``fields`` fill, ``fields["kind"]`` a census kind, which the page names with ``spec["kinds"]``), computed
    from the stored weights (to the nearest 1/255) and the census's kinds.

    - The prompt with "So," before it: the mean weight of all heads' rows after "So," on position 0 and on
      the sentence's old first token (position 2), as the census's sink part measures it; the head named is
      the one with the most weight on position 0.
    - A prompt with repeated tokens on which some head scores at least :data:`INDUCTION_SHOWS`: its best
      induction head, by its score on the prompt.
    - Any other: its best previous-token head, by its score on the prompt.
    In the last two, the layer's mean sink score on the prompt (all 9 heads) is said too.
    """
    out = []
    for prompt, attention in zip(stored["prompts"], dequantise(stored), strict=True):
        scores = {k: None if v is None else np.array(v) for k, v in prompt["scores"].items()}
        if prompt["name"] == "so":
            rows = attention[:, :, 3:, :]  # (L, h, n - 3, n): the rows after "So", "," and " the"
            layer, head = np.unravel_index(int(scores["sink"].argmax()), scores["sink"].shape)
            fields = {"share": _share(rows[..., 0].mean()), "old": _share(rows[..., 2].mean())}
            fields["word"] = prompt["tokens"][2]
            kind = "notice_so"
        else:
            induction = scores["induction"]
            use = induction is not None and induction.max() >= INDUCTION_SHOWS
            score = induction if use else scores["previous"]
            layer, head = np.unravel_index(int(score.argmax()), score.shape)
            fields = {"share": _share(score[layer, head]), "sink": _share(scores["sink"][layer].mean())}
            kind = "notice_induction" if use else "notice_previous"
        layer, head = int(layer), int(head)
        fields = {"layer": layer + 1, "head": head + 1, **fields, "kind": results["labels"][layer][head]}
        text = fill(MESSAGES[kind], **{**fields, "kind": KIND_NAMES[fields["kind"]]})
        out.append(
            {
                "text": fill(MESSAGES["notice"], text=text),
                "layer": layer,
                "head": head,
                "message": kind,
                "fields": fields,
            }
        )
    return out


def figure_spec(results: dict, stored: dict, *, prompt: str = DEFAULT_PROMPT, live: bool = False) -> dict:
    """The figure's spec: its controls, defaults and messages, the census's kinds and scores, the stored
    prompts (without their weights when ``live``) and each prompt's notice.

    Args:
        results: the census, :func:`book.smollm2.census.load_results`.
        stored: the prompts, :func:`book.smollm2.stored.load_stored`.
        prompt: the name of the prompt the figure opens on; the layer and head are its notice's.
        live: the spec of :class:`SmolLM2Widget`: a text box, no stored weights.

    Returns:
        ``{"figure", "controls", "defaults": {"prompt", "layer", "head"}, "messages", "model", "layers",
        "heads", "kv_heads", "labels", "kinds", "census": {"sink", "previous", "induction"}, "prompts":
        [{"name", "text", "tokens", "scores", "notice": {"message", "fields"}}], "stored": {"scale",
        "encoding", "data"}, "live", "max_tokens"}``.
    """
    L, h, g = SMOLLM2.n_layers, SMOLLM2.h, SMOLLM2.n_kv_heads
    if (stored["layers"], stored["heads"], stored["kv_heads"]) != (L, h, g):
        raise ValueError(f"stored must hold {L} layers x {h} heads over {g} groups")
    labels = results["labels"]
    if len(labels) != L or any(len(row) != h for row in labels):
        raise ValueError(f"results must label {L} x {h} heads")
    names = [p["name"] for p in stored["prompts"]]
    if prompt not in names:
        raise ValueError(f"prompt must be one of {names}, got {prompt!r}")
    said = notices(results, stored)
    first = said[names.index(prompt)]
    group = h // g
    controls = [
        Control(
            "prompt",
            "select",
            CONTROL_LABELS["prompt"],
            tuple((p["name"], p["about"]) for p in stored["prompts"]),
        ),
        Control("layer", "select", CONTROL_LABELS["layer"], tuple((i, f"{i + 1}") for i in range(L))),
        Control(
            "head",
            "select",
            CONTROL_LABELS["head"],
            tuple((i, fill(MESSAGES["head_choice"], head=i + 1, group=i // group + 1)) for i in range(h)),
        ),
    ]
    if live:
        controls.append(Control("text", "text", CONTROL_LABELS["text"], setting=False))
    spec = {
        "figure": "SmolLM2 figure",
        "controls": [c.to_json() for c in controls],
        "defaults": {"prompt": prompt, "layer": first["layer"], "head": first["head"]},
        "messages": messages(**MESSAGES),
        "model": MODEL_NAME,
        "layers": L,
        "heads": h,
        "kv_heads": g,
        "labels": [list(row) for row in labels],
        "kinds": dict(KIND_NAMES),
        "census": {k: results["scores"][k] for k in ("sink", "previous", "induction")},
        "prompts": [
            {
                **{k: p[k] for k in ("name", "text", "tokens", "scores")},
                "notice": {"message": n["message"], "fields": n["fields"]},
            }
            for p, n in zip(stored["prompts"], said, strict=True)
        ],
        "live": live,
        "max_tokens": MAX_TOKENS,
    }
    if not live:
        spec["stored"] = {k: stored[k] for k in ("scale", "encoding", "data")}
        spec["run"] = run_spec()  # "Run on your own text": the model in the page (book.smollm2.weights)
    return spec


def figure_html(
    results: dict, stored: dict, *, picture: bytes | None = None, prompt: str = DEFAULT_PROMPT
) -> str:
    """The figure's root element, ``<div class="mha-smollm2">``, with :func:`figure_spec` inline, the
    :data:`FALLBACK` text (until ``smollm2.js`` mounts it) and ``picture`` (PNG bytes, the default view) as
    an image ``mm-print`` that print shows instead of the controls."""
    spec = figure_spec(results, stored, prompt=prompt)
    image = ""
    if picture is not None:
        d = spec["defaults"]
        alt = tr(
            "Layer {layer}, head {head} of {model} and the {heads} heads of its layer on the prompt: "
            "{prompt}",
            layer=d["layer"] + 1,
            head=d["head"] + 1,
            model=kept(MODEL_NAME),
            heads=stored["heads"],
            prompt=kept(next(p for p in stored["prompts"] if p["name"] == prompt)["text"]),
        )
        image = print_image(picture, alt=alt, class_name="mm-print")
    return (
        f'<div class="{CLASS_NAME}"><script type="application/json">{inline_json(spec)}</script>'
        f'<div class="mm-fallback">{tr(FALLBACK)}</div>{image}</div>'
    )


def picture(results: dict, stored: dict, *, prompt: str = DEFAULT_PROMPT, dpi: int = 80) -> bytes:
    """PNG bytes of the figure's view of ``prompt``: its notice's head large, the 9 heads of its layer small
    (rows: the key/value groups), from the stored weights."""
    names = [p["name"] for p in stored["prompts"]]
    index = names.index(prompt)
    note = notices(results, stored)[index]
    attention, tokens = dequantise(stored)[index], stored["prompts"][index]["tokens"]
    layer, head = note["layer"], note["head"]
    L, h, g = stored["layers"], stored["heads"], stored["kv_heads"]
    fig = figure(figsize=(11, 5.6))
    grid = fig.add_gridspec(g, 2 + h // g, width_ratios=[2.2, 0.3] + [1] * (h // g))
    big = fig.add_subplot(grid[:, 0])
    n = len(tokens)
    masked = np.ma.masked_where(np.triu(np.ones((n, n), bool), 1), attention[layer, head])
    image = big.imshow(masked, vmin=0, vmax=1, cmap="viridis")
    step = max(1, n // 24)
    shown = [kept(repr(t)[1:-1]) for t in tokens[::step]]  # the model's tokens, as they are
    big.set_xticks(range(0, n, step), shown, rotation=90, fontsize=7)
    big.set_yticks(range(0, n, step), shown, fontsize=7)
    big.set_xlabel(tr("key"))
    big.set_ylabel(tr("query"))
    kind = tr(KIND_NAMES[results["labels"][layer][head]])
    title = tr("layer {layer}, head {head} ({kind})", layer=layer + 1, head=head + 1, kind=kind)
    big.set_title(title, fontsize=10)
    fig.colorbar(image, ax=big, fraction=0.04, label=tr("weight"))
    for i in range(h):
        ax = fig.add_subplot(grid[i // (h // g), 2 + i % (h // g)])
        ax.imshow(np.ma.masked_where(np.triu(np.ones((n, n), bool), 1), attention[layer, i]), vmin=0, vmax=1)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(
            tr("head {head}: {kind}", head=i + 1, kind=tr(results["labels"][layer][i])),
            fontsize=8,
            fontweight="bold" if i == head else None,
        )
        if i % (h // g) == 0:
            ax.set_ylabel(tr("group {group}", group=i // (h // g) + 1), fontsize=8)
    about = tr(stored["prompts"][index]["about"])
    title = tr(
        "{model}, layer {layer} of {layers}: {about}",
        model=kept(MODEL_NAME),
        layer=layer + 1,
        layers=L,
        about=about,
    )
    fig.suptitle(title, fontsize=10)
    return png(fig, dpi=dpi)


class SmolLM2Figure:
    """The figure as a chapter's output: ``text/html`` (:func:`figure_html`) with its picture for print."""

    def __init__(self, results: dict, stored: dict, *, prompt: str = DEFAULT_PROMPT) -> None:
        self.prompt = prompt
        names = [p["name"] for p in stored["prompts"]]
        self.notice = notices(results, stored)[names.index(prompt)]["text"]  # the default view's
        self.html = figure_html(
            results, stored, picture=picture(results, stored, prompt=prompt), prompt=prompt
        )

    def __repr__(self) -> str:
        return f"SmolLM2Figure(prompt={self.prompt!r}): every head of {MODEL_NAME}, on the book's site"

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        return {"text/plain": repr(self), "text/html": self.html}


def smollm2_figure(results: dict, stored: dict, **kwargs: object) -> SmolLM2Figure:
    """The figure for a chapter's output (:class:`SmolLM2Figure`); live, :class:`SmolLM2Widget`."""
    return SmolLM2Figure(results, stored, **kwargs)


class SmolLM2Widget(BoxWidget):
    """The figure in a live kernel: ``smollm2.js`` as an anywidget, Python running the model on the reader's
    text. The page sends ``{"id", "type": "attend", "text", "off"}``; :meth:`compute` answers with
    :func:`mha.pretrained.smollm2.predict` (heads in ``off`` switched off): ``tokens``, ``scores``
    (:func:`book.smollm2.stored.prompt_scores`) and the attention ``(L, h, n, n)`` as float32 bytes. Its
    display bundle also holds the static figure as ``text/html``.

    Args:
        results, stored: as for :func:`figure_spec`.
        text: the text it runs first (default: the stored prompt it opens on).
    """

    _esm = widget_esm("mountSmolLM2", export="globalThis.mhaSmolLM2.anywidget")
    _css = widget_css()

    def __init__(self, results: dict, stored: dict, *, text: str | None = None) -> None:
        spec = figure_spec(results, stored, live=True)
        first = next(p for p in stored["prompts"] if p["name"] == spec["defaults"]["prompt"])
        spec["defaults"]["text"] = first["text"] if text is None else text
        super().__init__(spec=spec)
        self._static = figure_html(results, stored)

    def compute(self, message: dict) -> tuple[dict, list[bytes]]:
        """Answer one request of the page: ``(result, buffers)``.

        Raises:
            TypeError: ``text`` is not a string, or ``off`` holds no ``(layer, head)`` pairs.
            ValueError: ``type`` is unknown, the text is empty or longer than :data:`MAX_TOKENS` tokens, or
                ``off`` names a head the model lacks.
        """
        from mha.pretrained.smollm2 import predict, tokenize

        kind, text, off = message.get("type"), message.get("text"), message.get("off") or []
        if kind != "attend":
            raise ValueError(f"type must be 'attend', got {kind!r}")
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise ValueError(MESSAGES["empty"])
        if len(tokenize(text)) > MAX_TOKENS:
            raise ValueError(f"text must be at most {MAX_TOKENS} tokens here")
        if isinstance(off, str) or not all(isinstance(p, Sequence) and len(p) == 2 for p in off):
            raise TypeError("off must hold (layer, head) pairs")
        out = predict(text, off=[tuple(int(i) for i in p) for p in off])
        result = {"tokens": out["tokens"], "scores": prompt_scores(out["attention"], out["ids"])}
        return self.attention_reply(result, out["attention"])

    def __repr__(self) -> str:
        return f"SmolLM2Widget(text={self.spec['defaults']['text']!r})"


__all__ = [
    "CLASS_NAME",
    "KIND_NAMES",
    "MESSAGES",
    "SmolLM2Figure",
    "SmolLM2Widget",
    "figure_html",
    "figure_spec",
    "notices",
    "picture",
    "smollm2_figure",
]
