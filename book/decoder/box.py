"""The decoder in the page: the reader's text, each position's next-token guesses, any head, heads off.

The box of "Heads that work together" (``book/decoder/static/decoderbox.js``) runs the book's decoder
(:mod:`book.decoder.model`) in the reader's browser with no kernel: the port
``book/decoder/static/ports/decoder.js`` (tested equal to :func:`book.decoder.model.predict` in
``tests/unit/book/decoder/test_model.py``) computes, from the weights script that the build writes into
``_static/`` (:data:`book.decoder.page.WEIGHTS_SCRIPT`, loaded with a ``<script src>`` beside the box's
script, never inlined in the page). It shows the reader's text with the model's most probable next token after
every character (all five for the chosen position), how often the top guess is the next character (for a text
written twice, on each copy), the attention of any head, check boxes that switch heads off, and a button that
writes a random sequence twice, the chapter's test of copying.

Like every figure of the book, it is mounted from its spec by the shared controller (``controller.js``): its
controls (:class:`book.widgets.spec.Control`), defaults, the head it opens on and every text it shows
(:data:`MESSAGES`; the errors of :func:`~book.decoder.model.predict` come with the weights,
:data:`book.decoder.model.MESSAGES`) are defined here; ``decoderbox.js`` keeps the loading and the drawing,
and its look is ``mha.css``'s.

The page's contract (tests and other checks rely on it): the root element ``.mha-decoder`` carries a
property ``mha`` with ``predict(text, {off})``, a Promise of what :func:`~book.decoder.model.predict`
returns (``tokens``, ``attention[layer][head][query][key]`` as nested arrays, ``top[i]``: five ``[token,
probability]`` pairs; and ``truncated``, ``unknown``, ``note``), rejected with a plain ``Error`` whose
message says what is wrong (empty text, a head that does not exist); ``load()``, ``refresh()``, ``random()``
(the button), ``off`` (the heads switched off, ``[layer, head]`` pairs, 0-based; settable), ``shown`` (the
head drawn, ``[layer, head]``; settable), ``selected`` (the position whose guesses are listed; settable), and
the controller's ``settings`` and ``update(settings)``.

In a live kernel, :class:`DecoderWidget` is the same front end (``decoderbox.js`` as an anywidget) with
Python computing: :func:`book.decoder.model.predict` answers each request of the page. Its display bundle
also holds the static box (:func:`box_html`, with a picture of every head, which print and the PDF show).

Shape legend:
    L        number of layers
    h        heads per layer
    n        number of tokens (characters) of the text, at most the context
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from book.decoder.induction import LENGTHS, SHOWN, head_name, repeated_sequences
from book.decoder.induction_plots import plot_decoder_heads
from book.decoder.model import DECODER, ORDINARY, VOCABULARY, predict
from book.decoder.model import MESSAGES as MODEL_MESSAGES
from book.decoder.page import CALLBACK, FORMAT, WEIGHTS_SCRIPT, weights_script
from book.figures._pyplot import png
from book.figures._text import kept, tr
from book.widgets.frontend import ROOT_CLASSES, BoxWidget, inline_json, print_image, widget_css, widget_esm
from book.widgets.spec import QUERY_KEY, Control, messages

CLASS_NAME = ROOT_CLASSES["mountDecoder"]  # the root element's class, which decoderbox.js mounts
ROLES = ("previous token", "induction")  # what the chapter finds a head to be, by its scores
# What the box says, in one place; the page fills in the {fields}.
MESSAGES = {
    "loading": "Loading the decoder's weights into this page ({kb} kB)\u2026",
    "failed": "The decoder could not be loaded in this page: {error}",
    "no_weights": "could not load {file}",
    "bad_format": "the weights script is in format {got}, this page reads {expected}",
    "random": "Repeat a random sequence",
    "reset": "All heads on",
    "tokens": "Your text, one character per token, with the model's top guess for the next one under each",
    "tokens_help": (
        "The arrow keys move along the text (Home and End: first and last character); the five top guesses "
        "after the chosen character are listed below."
    ),
    "token": "character {i} \u201c{token}\u201d: top guess {guess} ({p}){hit}",
    "token_hit": ", right",
    "token_last": ", the end of your text",
    "guesses": "After character {i} \u201c{token}\u201d{next}, the model's five top guesses: {guesses}.",
    "guesses_next": " (your text goes on with \u201c{token}\u201d)",
    "guess": "\u201c{token}\u201d {p}",
    "accuracy": "The top guess is the next character at {right} of {total} positions.",
    "accuracy_copies": (
        "Your text is a sequence of {m} characters written twice. The top guess is the next character at "
        "{first} of {scored} positions of the first copy and {second} of {scored} of the second."
    ),
    "accuracy_one": "Type at least two characters to see how often the top guess is right.",
    "off_legend": "Switch heads off (their output is zeroed)",
    "off_label": "{name}{role}",
    "role": " ({role})",
    "heads_on": "All {total} heads on.",
    "heads_off": "{k} of {total} heads off: {names}.",
    "panel": "{name}: layer {layer}, head {head}{role}",
    "picture": (
        "Attention of layer {layer}, head {head} over {n} characters (queries on rows, keys on columns, "
        "the future hatched); the arrow keys move along its cells, Page Up and Page Down to the previous "
        "and next head"
    ),
    "picture_empty": "The attention of the chosen head, drawn once the model has run",
    "cell": "{name}: " + QUERY_KEY + ": weight {weight}",
    "notice": (
        "What to notice: press \u201c{random}\u201d and look at the guesses: wrong on the first copy, "
        "right on almost all of the second. Show an induction head: in the second copy each row's weight "
        "sits on the character after the earlier occurrence of its own. Then switch the previous-token heads "
        "off, or the induction heads: the second copy is guessed no better than the first. Switch off a head "
        "that is neither: almost nothing changes."
    ),
}
CONTROL_LABELS = {"text": "Your text", "head": "Show the attention of"}
FALLBACK = (
    "<p>This box runs the chapter's decoder in your browser, on the book's site (online or opened from "
    "disk). It needs JavaScript; in a live notebook, <code>book.decoder.box.DecoderWidget</code> is "
    "the same box, computed by Python.</p>"
)


def default_text() -> str:
    """The text the box opens on: the chapter's random sequence of 20 characters, written twice."""
    ids, _ = repeated_sequences(1, lengths=(20, 20))  # (1, 40): the sequence the chapter draws first
    return "".join(VOCABULARY[i] for i in ids[0].tolist())


def _is_head(pair: object) -> bool:
    return (
        isinstance(pair, Sequence)
        and not isinstance(pair, str)
        and len(pair) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
        and 0 <= pair[0] < DECODER.layers
        and 0 <= pair[1] < DECODER.h
    )


def _heads_message(name: str, got: object) -> str:
    last_layer, last_head = DECODER.layers - 1, DECODER.h - 1
    return (
        f"{name} must hold (layer, head) pairs with layer in 0..{last_layer} and head in 0..{last_head}; "
        f"{got!r} is not a head of this decoder"
    )


def box_spec(
    roles: Mapping[tuple[int, int], str] | None = None,
    *,
    text: str | None = None,
    shown_head: tuple[int, int] = (DECODER.layers - 1, 0),
) -> dict:
    """The box's spec: its controls, defaults and messages, the decoder's sizes, the heads' roles.

    Args:
        roles: what the chapter found some heads to be, ``{(layer, head): role}`` with a role of
            :data:`ROLES` (the check boxes and the head menu name them); ``None``: no head is named.
        text: the text the box opens on (default :func:`default_text`).
        shown_head: the head whose attention the box opens on, ``(layer, head)``, 0-based.

    Returns:
        ``{"figure", "controls", "defaults": {"text", "head"}, "messages", "layers", "heads", "context",
        "weights", "kb", "format", "callback", "roles", "names", "ordinary", "lengths", "shown"}``. The
        controls are the text, the head whose attention is drawn (its value ``layer * h + head``), and a check
        box per head (``off_<layer>_<head>``, a view option, no setting); ``roles[layer][head]`` is a role or
        ``""``, ``names[layer][head]`` the book's name of the head (``L1H2``), ``ordinary`` the characters the
        random sequence is drawn from, ``lengths`` its shortest and longest length, and ``shown`` what the
        page shows of a space and a newline (``␣``, ``⏎``).

    Raises:
        TypeError: ``roles`` is not a mapping or ``text`` not a string.
        ValueError: a key of ``roles`` or ``shown_head`` is not a head of the decoder, or a role is not one
            of :data:`ROLES`.
    """
    L, h = DECODER.layers, DECODER.h
    roles = {} if roles is None else roles
    if not isinstance(roles, Mapping):
        raise TypeError(
            f"roles must be a mapping of (layer, head) pairs to roles, got {type(roles).__name__}"
        )
    for pair, role in roles.items():
        if not _is_head(pair):
            raise ValueError(_heads_message("roles", pair))
        if role not in ROLES:
            raise ValueError(f"roles' values must be one of {list(ROLES)}, got {role!r}")
    if not _is_head(shown_head):
        raise ValueError(_heads_message("shown_head", shown_head))
    text = default_text() if text is None else text
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    role_of = [[roles.get((layer, head), "") for head in range(h)] for layer in range(L)]
    names = [[head_name(layer, head) for head in range(h)] for layer in range(L)]

    def described(layer: int, head: int) -> str:
        role = role_of[layer][head]
        return names[layer][head] + (MESSAGES["role"].replace("{role}", role) if role else "")

    heads = tuple(
        (layer * h + head, f"{described(layer, head)}: layer {layer + 1}, head {head + 1}")
        for layer in range(L)
        for head in range(h)
    )
    controls = [
        Control("text", "text", CONTROL_LABELS["text"]),
        Control("head", "select", CONTROL_LABELS["head"], heads),
        *(
            Control(f"off_{layer}_{head}", "checkbox", described(layer, head), setting=False)
            for layer in range(L)
            for head in range(h)
        ),
    ]
    size = len(weights_script())
    return {
        "figure": "decoder box",
        "controls": [c.to_json() for c in controls],
        "defaults": {"text": text, "head": shown_head[0] * h + shown_head[1]},
        # predict()'s own messages too, so that a page in another language words them (zh/figures.yml)
        "messages": messages(**MESSAGES, model=dict(MODEL_MESSAGES)),
        "layers": L,
        "heads": h,
        "context": DECODER.context,
        "weights": WEIGHTS_SCRIPT,
        "kb": round(size / 1e3),
        "format": FORMAT,
        "callback": CALLBACK,
        "roles": role_of,
        "names": names,
        "ordinary": list(ORDINARY),
        "lengths": list(LENGTHS),
        "shown": dict(SHOWN),
    }


def box_html(spec: dict, *, picture: bytes | None = None) -> str:
    """The box's root element, ``<div class="mha-decoder">``, with ``spec`` (:func:`box_spec`) inline.

    The :data:`FALLBACK` text is visible until ``decoderbox.js`` mounts the box (and removes it), so a
    notebook front end that does not run the book's scripts shows what the box is. ``picture``, PNG bytes,
    goes in as an image (``md-print``) that such a front end shows too; on the site it is hidden on screen and
    shown instead of the controls in print (the book's PDF is printed from the site).
    """
    image = ""
    if picture is not None:
        alt = tr("Every head of the decoder on the text: {string}", string=kept(spec["defaults"]["text"]))
        image = print_image(picture, alt=alt, class_name="md-print")
    return (
        f'<div class="{CLASS_NAME}"><script type="application/json">{inline_json(spec)}</script>'
        f'<div class="md-fallback">{tr(FALLBACK)}</div>{image}</div>'
    )


def picture(spec: dict) -> bytes:
    """PNG bytes of every head on the spec's text, the heads named with their roles
    (:func:`book.decoder.induction_plots.plot_decoder_heads`): the box in print."""
    text = spec["defaults"]["text"]
    result = predict(text)
    notes = {
        (layer, head): role
        for layer, row in enumerate(spec["roles"])
        for head, role in enumerate(row)
        if role
    }
    half = len(text) // 2
    split = half if len(text) % 2 == 0 and text[:half] == text[half:] and half > 1 else None
    fig = plot_decoder_heads(result["attention"], result["tokens"], split=split, notes=notes)
    return png(fig, dpi=90)  # 842 x 472 pixels: its labels legible on an A4 sheet


class DecoderWidget(BoxWidget):
    """The box in a live kernel: ``decoderbox.js`` as an anywidget, with Python computing what the port would.

    The page sends each request as a custom message ``{"id", "text", "off"}``; :meth:`compute` answers it
    with :func:`book.decoder.model.predict`, and the reply goes back as ``{"id", "result"}``, the attention
    as float32 bytes, or ``{"id", "error"}`` with the message of the ``TypeError`` or ``ValueError`` that
    ``predict`` raised. Its display bundle also holds the static box (:func:`box_html`, with its picture) as
    ``text/html``, which the book's site ranks above the widget view.

    Args:
        roles, text, shown_head: as for :func:`box_spec`.
    """

    _esm = widget_esm("mountDecoder", export="globalThis.mhaDecoderBox.anywidget")
    _css = widget_css()

    def __init__(
        self,
        roles: Mapping[tuple[int, int], str] | None = None,
        *,
        text: str | None = None,
        shown_head: tuple[int, int] = (DECODER.layers - 1, 0),
    ) -> None:
        super().__init__(spec=box_spec(roles, text=text, shown_head=shown_head))
        self._static = box_html(self.spec, picture=picture(self.spec))

    def compute(self, message: dict) -> tuple[dict, list[bytes]]:
        """Answer one request of the page: ``(result, buffers)``, :func:`~book.decoder.model.predict`'s
        result with the attention as float32 bytes of shape ``result["attention_shape"]``.

        Raises:
            TypeError, ValueError: as :func:`~book.decoder.model.predict` raises them.
        """
        off = message.get("off")
        result = predict(message.get("text"), off=[] if off is None else off)
        attention = result.pop("attention")  # (L, h, n, n)
        result["top"] = [[list(pair) for pair in row] for row in result["top"]]
        return self.attention_reply(result, attention)

    def __repr__(self) -> str:
        return f"DecoderWidget(text={self.spec['defaults']['text']!r})"


__all__ = [
    "CLASS_NAME",
    "MESSAGES",
    "ROLES",
    "DecoderWidget",
    "box_html",
    "box_spec",
    "default_text",
    "picture",
]
