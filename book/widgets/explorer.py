"""The head explorer: change ``d_model``, ``h``, the mask and the sentence, and watch what every head does.

:class:`HeadExplorer` is an `anywidget <https://anywidget.dev>`_ whose front end is the book's one
JavaScript explorer (``book/widgets/static/``, see :func:`book.widgets.frontend.widget_esm`). In a live
kernel (JupyterLab 4, Notebook 7, VS Code, Colab) Python is the authority: a reader's change in the page
arrives as the ``settings`` traitlet, Python computes the weights with the real :mod:`mha`
(:func:`book.compute.explorer.explorer_weights` for a fresh layer, :func:`book.compute.explorer.head_weights`
for a trained one) and sends them back as ``drawn``, float32 bytes that ipywidgets carries as a binary
buffer, which replace the picture. For a fresh layer the page has already drawn the change from the tested
port (within a few milliseconds, without waiting for the kernel); a trained model's weights stay in Python,
which alone draws it. The traitlets:

- ``config`` (Python to page, once): ``{"trained": {"name", "d_model", "h"} or None, "spec": ...}``, the
  spec being :func:`book.widgets.spec.explorer_spec` (controls, masks, defaults, messages).
- ``settings`` (both ways): ``{"d_model", "h", "mask", "valid_length", "sentence", "seed", "source"}``,
  the controls' values, with the meaning they have for :func:`explorer_weights`; ``source`` is
  ``"fresh"`` or ``"trained"``.
- ``drawn`` (Python to page): ``{"tokens", "shape": [h, n, n], "weights": <h n n float32 little-endian
  bytes>, "mask": <n n bytes, 1 = may attend> or None, "d_model", "h", "d_k", "parameters", "message",
  "level"}``. ``message`` is plain text for the reader (the page shows it literally), ``level`` is ``""``,
  ``"warning"`` (the reader's input cannot be drawn; the picture stays that of the last valid input) or
  ``"error"`` (a bug).

Without a kernel (the built book) no widget can run, so the display bundle also holds ``text/html``: the
same front end's root element with its settings inline (:meth:`HeadExplorer.static_html`), which the page's
scripts mount and compute themselves (the tested port of :func:`explorer_weights`). myst-nb ranks the
widget view first unless told otherwise; the book's ``_config.yml`` ranks it below ``text/html``::

    sphinx:
      config:
        nb_mime_priority_overrides: [[html, application/vnd.jupyter.widget-view+json, 55]]

Chapters are saved without widget state (``nbclient``'s ``store_widget_state=False``), which would only
make every page load the widget JavaScript from a CDN for nothing.

Errors: a reader's input never raises (an empty or over-long sentence, a word a trained model's vocabulary
lacks); the explorer says what is wrong instead. Anything else that goes wrong while reacting to a change
is a bug: it is shown in the explorer, kept in ``last_error`` and raised again, so a notebook cell that
changes the settings fails, and so does its nbval run.

Shape legend:
    n        number of tokens (queries and keys: this is self-attention)
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import torch

from book.compute.explorer import (
    MAX_TOKENS,
    build_mask,
    embed_tokens,
    explorer_weights,
    head_weights,
    split_tokens,
)
from book.widgets.frontend import (
    ROOT_CLASSES,
    ComputedWidget,
    ReaderInputError,
    explorer_config,
    model_payload,
    module_parameters,
    one_thread,
    root_html,
    widget_css,
    widget_esm,
)
from book.widgets.spec import (
    EXPLORER_DEFAULTS,
    PROJECTIONS,
    SHAPE_ROWS,
    explorer_choices,
    explorer_spec,
    fill,
    follow_notes,
    is_int,
    merge_settings,
    parameter_counts,
    setting_names,
    token_ranges,
)
from mha.costs.counts import projection_params
from mha.multihead import MultiHeadAttention

DEFAULT_SENTENCE = EXPLORER_DEFAULTS["sentence"]
_D = EXPLORER_DEFAULTS  # the first settings, defined once (book.widgets.spec)
STATIC_NOTE = (
    "This explorer's model cannot run in the page. Interaction needs a live kernel – "
    "use the launch button (rocket icon) at the top of the page to open this chapter in Binder or Colab."
)
SETTINGS = setting_names(explorer_spec(trained=True))

Embed = Callable[[Sequence[str]], torch.Tensor]


class HeadExplorer(ComputedWidget):
    """Interactive per-head attention heatmaps for a sentence.

    Display it in a notebook (make it the last expression of a cell). The controls choose ``d_model``, the
    number of heads ``h`` (only divisors of ``d_model``), the mask, the sentence, the seed of a freshly
    initialised layer, and whether to use that fresh layer or a trained one. Beside the heatmaps it lists
    the shapes these settings imply. Drive it from code as a reader would with :meth:`update` (or by
    assigning ``settings``); ``weights``, ``tokens``, ``message`` and :meth:`shapes` then describe what the
    front end draws.

    Args:
        model: a trained :class:`mha.MultiHeadAttention` to explore; it fixes ``d_model`` and ``h``. Without
            it, only freshly initialised layers are offered.
        embed: turns the tokens into the model's input: a callable from a list of ``n`` strings to a tensor
            of shape ``(n, d_model)``, including positional information if the model expects it. It may
            raise ``KeyError`` or ``ValueError`` for a token it cannot embed; the explorer shows that
            message to the reader. ``None`` uses :func:`book.compute.explorer.embed_tokens`. Fresh layers
            always use :func:`~book.compute.explorer.embed_tokens`.
        sentence: the initial sentence; with a trained model, one its ``embed`` accepts.
        d_model: the initial model width of a fresh layer, one of ``D_MODELS``.
        h: the initial number of heads of a fresh layer; must divide ``d_model``.
        mask: the initial mask, one of ``MASKS``.
        valid_length: the initial number of real tokens for the padding masks; ``None`` means all but the
            last two.
        seed: the initial seed of a fresh layer.
        vocabulary: with a trained model, every token its ``embed`` accepts; given, a static page carries
            the model (its projections and embeddings, :func:`book.widgets.frontend.model_payload`) and runs
            it in the reader's browser. ``embed`` must then add a token vector and a position vector.
        max_tokens: with a trained model, the longest sentence ``embed`` accepts (at most ``MAX_TOKENS``).
        name: with a trained model, what the explorer calls it (its note reads "Trained model (name): ...").

    Attributes:
        settings: the controls' values (a traitlet, synced with the page both ways).
        drawn: what the page draws (a traitlet, Python to page).
        tokens: the tokens shown, ``weights``: their attention weights ``(h, n, n)``, ``mask``: the mask
            used (or ``None``), ``shown``: ``(d_model, h)`` of the picture.
        message: what the explorer tells the reader (plain text; empty when all is well).
        trained: the trained model, or ``None``.
        last_error: the last unexpected exception raised while reacting to a change, or ``None``.

    Example:
        >>> explorer = HeadExplorer(d_model=16, h=4)
        >>> explorer.update(mask="causal")  # what a reader's click does
        >>> explorer.weights.shape
        torch.Size([4, 10, 10])
    """

    SETTINGS = SETTINGS
    NAME = "explorer"
    _esm = widget_esm("mountExplorer")
    _css = widget_css()

    def __init__(
        self,
        model: MultiHeadAttention | None = None,
        embed: Embed | None = None,
        *,
        sentence: str = _D["sentence"],
        d_model: int = _D["d_model"],
        h: int = _D["h"],
        mask: str = _D["mask"],
        valid_length: int | None = _D["valid_length"],
        seed: int = _D["seed"],
        vocabulary: Sequence[str] | None = None,
        max_tokens: int = MAX_TOKENS,
        name: str = "",
    ) -> None:
        if model is not None and not isinstance(model, MultiHeadAttention):
            raise TypeError(f"model must be an mha.MultiHeadAttention or None, got {type(model).__name__}")
        if embed is not None and not callable(embed):
            raise TypeError(
                f"embed must be a callable tokens -> (n, d_model) tensor, got {type(embed).__name__}"
            )
        if not is_int(max_tokens) or not 1 <= max_tokens <= MAX_TOKENS:
            raise ValueError(f"max_tokens must be an int in 1..{MAX_TOKENS}, got {max_tokens!r}")
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        spec = explorer_spec(trained=model is not None)
        first = {"d_model": d_model, "h": h, "mask": mask, "sentence": sentence, "seed": seed}
        if valid_length is None and isinstance(sentence, str):  # all but the last two tokens
            valid_length = max(1, min(len(split_tokens(sentence)), MAX_TOKENS) - 2)
        # the controls' rules check the first settings (a trained model's source is set below)
        state = merge_settings(
            spec, {**EXPLORER_DEFAULTS, "source": "fresh"}, {**first, "valid_length": valid_length}
        )
        super().__init__()
        self.trained = model
        self._embed = embed
        self._vocabulary = None if vocabulary is None else list(vocabulary)
        self._max_tokens = max_tokens
        self._name = name
        # The state: a fresh layer's d_model, h and seed are kept while a trained model is shown.
        self._state = {**state, "source": "fresh" if model is None else "trained"}
        self.tokens: list[str] = []
        self.weights: torch.Tensor | None = None  # (h, n, n)
        self.mask: torch.Tensor | None = None
        self.shown: tuple[int, int] | None = None  # (d_model, h) of the picture
        self.message = ""
        self._level = ""  # of the message: "", "warning" or "error"
        self._notes: dict[str, str] = {}  # what followed the last change (follow_notes)
        trained = None
        if model is not None:
            known = None if self._vocabulary is None else token_ranges(self._vocabulary)
            trained = {"name": name, "d_model": model.d_model, "h": model.h, "known": known}
        self.spec = spec  # the page's controls, rules and messages
        self.config = {"trained": trained, "spec": self.spec}
        self._react({})

    # -- the settings ----------------------------------------------------------------------------------------

    @property
    def source(self) -> str:
        """``"fresh"`` or ``"trained"``: whose weights are shown."""
        return self._state["source"]

    def current_settings(self) -> dict:
        """The controls' values, as the page shows them: a trained model's own ``d_model`` and ``h``."""
        fixed = self._fixed(self._state["source"])
        return {name: self._state[name] for name in SETTINGS} | (fixed or {})

    def choices(self) -> dict[str, list]:
        """What each menu offers now: ``d_model``, ``h`` (divisors of ``d_model``), ``mask``, ``source``
        (:func:`book.widgets.spec.explorer_choices`, ported to the page)."""
        return explorer_choices(self.spec, self._state, self._fixed("trained"))

    def _fixed(self, source: str) -> dict | None:
        """The settings a trained model fixes while ``source`` is ``"trained"``: its ``d_model`` and ``h``."""
        model = self.trained
        return {"d_model": model.d_model, "h": model.h} if source == "trained" and model is not None else None

    def update(self, **changes: object) -> None:
        """Change some settings, as a reader's controls do, and recompute what the page draws.

        Args:
            **changes: any of ``d_model``, ``h``, ``mask``, ``valid_length``, ``sentence``, ``seed``,
                ``source``. Changing ``d_model`` alone keeps ``h`` if it still divides it, else takes the
                largest divisor below it; a shorter sentence lowers ``valid_length`` to its length.

        Raises:
            KeyError: for an unknown setting. ValueError, TypeError: for a value no control offers (the
                settings stay as they were). Anything unexpected, after showing it and keeping it in
                ``last_error``; a reader's input (an unusable sentence) never raises, see ``message``.
        """
        super().update(**changes)

    def _react(self, changes: dict) -> None:
        try:
            with one_thread():
                self._merge(changes)
                self._refresh()
        except (TypeError, ValueError, KeyError) as error:
            if error is self.last_error:  # raised by _refresh, already reported
                raise
            # a value no control offers: the page goes back to the state
            self._publish(self.current_settings(), self.payload())
            raise
        self._publish(self.current_settings(), self.payload())

    def _merge(self, s: dict) -> None:
        """Merge settings into the state, checked against the spec as the page's controls check them
        (:func:`book.widgets.spec.merge_settings`, ported to the page); a bad value raises. What had to follow
        the change is kept for the message (:func:`book.widgets.spec.follow_notes`)."""
        fixed = self._fixed(s.get("source", self._state["source"]))
        before = self._state
        self._state = merge_settings(self.spec, before, s, fixed=fixed)
        self._notes = follow_notes(self.spec, before, self._state, s)

    def _notes_text(self) -> str:
        """The notes the page shows for the state (the valid length's only while a padding mask uses it)."""
        cut = "padding" in self._state["mask"]
        return " ".join(text for name, text in self._notes.items() if cut or name != "valid_length")

    # -- computing ---------------------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Recompute for the state; a reader's bad input keeps the last picture and says why, and a picture
        drawn says what followed the change, as the page does."""
        self._compute_or_explain(self._compute, self.current_settings())
        if not self._level:
            self.message = self._notes_text()

    def _compute(self) -> None:
        s = self.current_settings()
        trained = s["source"] == "trained"
        tokens = split_tokens(s["sentence"])
        limit = self._max_tokens if trained else MAX_TOKENS
        messages = self.spec["messages"]
        if not tokens:
            raise ReaderInputError(messages["no_tokens"])
        if len(tokens) > limit:
            raise ReaderInputError(fill(messages["too_long"], n=len(tokens), limit=limit))
        n = len(tokens)
        valid_length = s["valid_length"] if "padding" in s["mask"] else None
        mask = build_mask(s["mask"], n, valid_length)  # None or broadcastable to (1, h, n, n)
        if trained:
            model = self.trained
            embed = self._embed if self._embed is not None else self._default_embed(model.d_model)
            unknown = [] if self._vocabulary is None else [t for t in tokens if t not in self._vocabulary]
            if unknown:  # as the page says it: the unknown tokens, and those the model reads
                unknown = list(dict.fromkeys(unknown))
                reason = fill(
                    messages["unknown_tokens"],
                    plural="s" if len(unknown) > 1 else "",
                    tokens=", ".join(f"'{t}'" for t in unknown),
                ) + fill(messages["known_tokens"], known=token_ranges(self._vocabulary))
                raise ReaderInputError(fill(messages["cannot_embed"], reason=reason))
            try:
                x = embed(tokens)  # (n, d_model)
            except (KeyError, ValueError) as error:  # a word the model does not know: the reader's input
                message = error.args[0] if error.args else error
                raise ReaderInputError(fill(messages["cannot_embed"], reason=str(message))) from error
            weights = head_weights(model, self._check_embedding(x, n, model.d_model), mask)  # (h, n, n)
        else:
            weights = explorer_weights(
                s["sentence"],
                d_model=s["d_model"],
                h=s["h"],
                mask=s["mask"],
                valid_length=valid_length,
                seed=s["seed"],
            )  # (h, n, n)
        self.tokens, self.weights, self.mask = tokens, weights.float(), mask
        self.shown = (s["d_model"], s["h"])

    @staticmethod
    def _default_embed(d_model: int) -> Embed:
        return lambda tokens: embed_tokens(tokens, d_model)

    @staticmethod
    def _check_embedding(x: object, n: int, d_model: int) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise TypeError(f"embed must return a floating-point torch.Tensor, got {type(x).__name__}")
        if tuple(x.shape) != (n, d_model):
            raise ValueError(f"embed returned shape {tuple(x.shape)}, expected (n, d_model) = {(n, d_model)}")
        return x

    # -- what the page is sent -----------------------------------------------------------------------------

    def payload(self) -> dict:
        """The ``drawn`` traitlet for the current picture: binary weights and mask, and the message."""
        drawn: dict = {"message": self.message, "level": self._level}
        if self.shown is None:
            return drawn
        (d_model, h), n = self.shown, len(self.tokens)
        mask = None
        if self.mask is not None:
            mask = torch.broadcast_to(self.mask, (1, 1, n, n))[0, 0].to(torch.uint8).numpy().tobytes()
        return {
            **drawn,
            "tokens": list(self.tokens),
            "shape": [h, n, n],
            "weights": self.weights.detach().contiguous().numpy().astype("<f4", copy=False).tobytes(),
            "mask": mask,
            "d_model": d_model,
            "h": h,
            "d_k": d_model // h,
            "parameters": self._parameters(),
        }

    def _parameters(self) -> dict[str, int]:
        """Parameters per projection and in total: the trained model's own, or a fresh layer's."""
        if self.source == "trained":
            return module_parameters(self.trained)
        return parameter_counts(projection_params(*self.shown))

    # -- what the settings imply ---------------------------------------------------------------------------

    def shapes(self) -> dict[str, object]:
        """The shapes and sizes the current picture implies, as the page lists them beside the heatmaps.

        Returns:
            A dict with ``n``, ``d_model``, ``h``, ``d_k`` and the shapes (tuples) of ``x`` ``(n, d_model)``,
            of each head's ``Q_i``, ``K_i``, ``V_i`` ``(n, d_k)``, of each head's weights ``(n, n)``, of all
            weights ``(h, n, n)``, of the concatenated heads ``(n, h * d_k)`` and of the output; and
            ``parameters``, a dict of parameter counts per projection and in total.
        """
        if self.shown is None:
            raise RuntimeError("the explorer has no valid input yet")
        (d_model, h), n = self.shown, len(self.tokens)
        d_k = d_model // h
        return {
            "n": n,
            "d_model": d_model,
            "h": h,
            "d_k": d_k,
            "x": (n, d_model),
            "Q_i": (n, d_k),
            "K_i": (n, d_k),
            "V_i": (n, d_k),
            "weights_i": (n, n),
            "weights": (h, n, n),
            "concat": (n, h * d_k),
            "output": (n, d_model),
            "parameters": self._parameters(),
        }

    def shapes_html(self) -> str:
        """The shapes as a small HTML table, for readers without scripts: the table the page draws beside the
        heatmaps (:data:`book.widgets.spec.SHAPE_ROWS` and the spec's texts)."""
        s, m = self.shapes(), self.spec["messages"]
        n, p = s["n"], s["parameters"]
        values = {"n": n, "d_model": s["d_model"], "h": s["h"], "d_k": s["d_k"], "concat": s["concat"][1]}

        def label(pieces: tuple) -> str:
            return "".join(
                html.escape(x) if isinstance(x, str) else f"<sub>{html.escape(x[1])}</sub>" for x in pieces
            )

        tokens = " ".join(f'<code class="mha-token">{html.escape(t)}</code>' for t in self.tokens)
        rows = [(html.escape(m["tokens"]), tokens)] + [
            (label(pieces), f"<code>{html.escape(fill(value, **values))}</code>")
            for pieces, value in SHAPE_ROWS
        ]
        body = "".join(f'<tr><th scope="row">{name}</th><td>{value}</td></tr>' for name, value in rows)
        title = fill(m["shapes_for"], **values, s="s" if n > 1 else "")
        params = " + ".join(f"{name} {p[name]:,}" for name in PROJECTIONS)
        total = f"<strong>{p['total']:,}</strong>"
        return (
            f"<p><strong>{html.escape(m['shapes'])}</strong>{html.escape(title)}</p>"
            f"<table><tbody>{body}</tbody></table>"
            f"<p><strong>{html.escape(m['parameters'])}</strong>: {params} = {total}</p>"
            f'<p class="mha-small">{html.escape(m["same_parameters"])}</p>'
        )

    # -- display ---------------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        if self.shown is None:
            return "HeadExplorer(no valid input)"
        return (
            f"HeadExplorer(d_model={self.shown[0]}, h={self.shown[1]}, "
            f"mask={self._state['mask']!r}, tokens={len(self.tokens)}, source={self.source!r})"
        )

    def static_html(self) -> str:
        """HTML for pages without a kernel: the browser front end, set to the current settings.

        The page's scripts (``book/widgets/static/``) compute and draw the weights themselves; the shapes are
        the fallback for readers without JavaScript. A trained model without a ``vocabulary`` cannot be
        carried into the page, so its page shows a note and the shapes.
        """
        fallback = "" if self.shown is None else f'<div class="mha-shapes">{self.shapes_html()}</div>'
        if self.trained is not None and self._vocabulary is None:
            return (
                '<div class="mha-head-explorer-static">'
                f"<p><em>{html.escape(STATIC_NOTE)}</em></p>{fallback}</div>"
            )
        model = None
        if self.trained is not None:
            embed = self._embed if self._embed is not None else self._default_embed(self.trained.d_model)
            model = model_payload(self.trained, self._vocabulary, embed, self._max_tokens, name=self._name)
        return root_html(
            ROOT_CLASSES["mountExplorer"], explorer_config(self.current_settings(), model), fallback=fallback
        )
