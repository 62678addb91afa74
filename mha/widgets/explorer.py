"""The head explorer: change ``d_model``, ``h``, the mask and the sentence, and watch what every head does.

:class:`HeadExplorer` wires a few ``ipywidgets`` controls to a :class:`mha.MultiHeadAttention` and a
:class:`mha.HeadPlot`. On every change it embeds the sentence (:func:`mha.embed_tokens`, or a chapter's own
embedding for a trained model), runs the attention layer, redraws the heatmaps in place and sends them to
the front end as PNG bytes in an ``ipywidgets.Image``, which Jupyter Notebook 7, JupyterLab 4 and Colab all
display without any extension.

Without a kernel (the built book) no widget can run, so displaying an explorer also hands the notebook a
static picture of its current state: its MIME bundle holds, beside the widget view, ``text/html`` (the
picture, the shapes and a note to use the launch button) and ``image/png``. A live front end shows the
widget; a static renderer that skips widget views shows the picture. myst-nb 1.4 does not skip them by
itself: it ranks ``application/vnd.jupyter.widget-view+json`` first and renders it as an empty ``<script>``
placeholder, which only the ipywidgets HTML manager (loaded from a CDN, and only for notebooks saved with
widget state) could fill; without state the output is silently blank, and the build gives no warning. So
the book's ``_config.yml`` ranks widget views below ``text/html`` (30) and ``image/png`` (50), and myst-nb
takes the ``text/html``::

    sphinx:
      config:
        nb_mime_priority_overrides: [[html, application/vnd.jupyter.widget-view+json, 55]]

Chapters are saved without widget state (``nbclient``'s ``store_widget_state=False``), which would only
make every page load the widget JavaScript from a CDN for nothing.

Errors: a reader's input never raises (an empty or over-long sentence, a word a trained model's vocabulary
lacks); the explorer says what is wrong instead. Anything else that goes wrong in a control's callback is
a bug: it is shown in the explorer, kept in ``last_error`` and raised again, so a notebook cell that sets a
control fails, and so does its nbval run.

Shape legend:
    n        number of tokens (queries and keys: this is self-attention)
    d_model  model width
    h        number of heads
    d_k      width of each head, d_model / h
"""

from __future__ import annotations

import base64
import html
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import ipywidgets as widgets
import torch

from mha.compute.explorer import (
    D_MODELS,
    MASKS,
    MAX_HEADS,
    MAX_SEED,
    MAX_TOKENS,
    build_mask,
    embed_tokens,
    explorer_weights,
    head_choices,
    head_weights,
    split_tokens,
)
from mha.costs.counts import projection_params
from mha.figures.heatmaps import HeadPlot
from mha.multihead import MultiHeadAttention
from mha.widgets.frontend import model_payload, root_html

DEFAULT_SENTENCE = "the cat sat on the mat because it was tired"
STATIC_NOTE = (
    "This is a picture of the explorer's first state. Interaction needs a live kernel – "
    "use the launch button (rocket icon) at the top of the page to open this chapter in Binder or Colab."
)
_MAX_LABEL = 10  # characters of a token shown as a label
_PLOT_CACHE = 8  # figures kept for layouts (h, n) seen recently, so going back to one is fast

Embed = Callable[[Sequence[str]], torch.Tensor]


@contextmanager
def _one_thread() -> Iterator[None]:
    """Run PyTorch single-threaded inside the block, then restore the caller's setting.

    The explorer's tensors are tiny (at most 16 tokens), so a thread pool only costs: on a busy two-core
    machine, waking PyTorch's second thread made a (10, 32) projection take 5-25 ms instead of 10 us.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _label(token: str) -> str:
    return token if len(token) <= _MAX_LABEL else token[: _MAX_LABEL - 1] + "…"


@dataclass(frozen=True)
class Controls:
    """The explorer's controls; set their ``.value`` to drive it from code, as a reader would."""

    d_model: widgets.Dropdown  # model width
    h: widgets.Dropdown  # number of heads, only divisors of d_model
    mask: widgets.Dropdown  # one of MASKS
    valid_length: widgets.IntSlider  # real tokens before the padding, for the padding masks
    sentence: widgets.Text  # split at spaces into tokens
    seed: widgets.BoundedIntText  # seed of a fresh layer's weights
    source: widgets.ToggleButtons  # "fresh" or "trained"

    def all(self) -> list[widgets.ValueWidget]:
        return [self.d_model, self.h, self.mask, self.valid_length, self.sentence, self.seed, self.source]


class HeadExplorer:
    """Interactive per-head attention heatmaps for a sentence.

    Display it in a notebook (make it the last expression of a cell). The controls choose ``d_model``, the
    number of heads ``h`` (only divisors of ``d_model``), the mask, the sentence, the seed of a freshly
    initialised layer, and whether to use that fresh layer or a trained one. Beside the heatmaps it lists
    the shapes these settings imply.

    Args:
        model: a trained :class:`mha.MultiHeadAttention` to explore; it fixes ``d_model`` and ``h``. Without
            it, only freshly initialised layers are offered.
        embed: turns the tokens into the model's input: a callable from a list of ``n`` strings to a tensor
            of shape ``(n, d_model)``, including positional information if the model expects it. It may
            raise ``KeyError`` or ``ValueError`` for a token it cannot embed; the explorer shows that
            message to the reader. ``None`` uses :func:`mha.embed_tokens`. Fresh layers always use
            :func:`mha.embed_tokens`.
        sentence: the initial sentence; with a trained model, one its ``embed`` accepts.
        d_model: the initial model width of a fresh layer, one of ``D_MODELS``.
        h: the initial number of heads of a fresh layer; must divide ``d_model``.
        mask: the initial mask, one of ``MASKS``.
        valid_length: the initial number of real tokens for the padding masks; ``None`` means all but the
            last two.
        seed: the initial seed of a fresh layer.
        vocabulary: with a trained model, every token its ``embed`` accepts; given, a static page carries
            the model (its projections and embeddings, :func:`mha.widgets.frontend.model_payload`) and runs
            it in the reader's browser. ``embed`` must then add a token vector and a position vector.
        max_tokens: with ``vocabulary``, the longest sentence ``embed`` accepts.

    Attributes:
        controls: the :class:`Controls`.
        image: the ``ipywidgets.Image`` showing the heatmaps as PNG.
        shapes_html: the ``ipywidgets.HTML`` listing the shapes.
        status: the ``ipywidgets.HTML`` for messages to the reader (empty when all is well).
        widget: the whole explorer, an ``ipywidgets.VBox``.
        tokens: the tokens shown, ``weights``: their attention weights ``(h, n, n)``, ``mask``: the mask
            used (or ``None``), ``model``: the layer used.
        last_error: the last unexpected exception raised in a callback, or ``None``.

    Example:
        >>> explorer = HeadExplorer(d_model=16, h=4)
        >>> explorer.controls.mask.value = "causal"  # what a reader's click does
        >>> explorer.weights.shape
        torch.Size([4, 10, 10])
    """

    def __init__(
        self,
        model: MultiHeadAttention | None = None,
        embed: Embed | None = None,
        *,
        sentence: str = DEFAULT_SENTENCE,
        d_model: int = 32,
        h: int = 4,
        mask: str = "none",
        valid_length: int | None = None,
        seed: int = 0,
        vocabulary: Sequence[str] | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if model is not None and not isinstance(model, MultiHeadAttention):
            raise TypeError(f"model must be an mha.MultiHeadAttention or None, got {type(model).__name__}")
        if embed is not None and not callable(embed):
            raise TypeError(
                f"embed must be a callable tokens -> (n, d_model) tensor, got {type(embed).__name__}"
            )
        if not isinstance(sentence, str):
            raise TypeError(f"sentence must be a str, got {type(sentence).__name__}")
        if d_model not in D_MODELS:
            raise ValueError(f"d_model must be one of {D_MODELS}, got {d_model!r}")
        if h not in head_choices(d_model):
            raise ValueError(
                f"h must be one of {head_choices(d_model)} (divisors of d_model={d_model}), got {h!r}"
            )
        if mask not in MASKS:
            raise ValueError(f"mask must be one of {MASKS}, got {mask!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be an int in 0..{MAX_SEED}, got {seed!r}")
        n = max(1, min(len(split_tokens(sentence)), MAX_TOKENS))
        valid_length = max(1, n - 2) if valid_length is None else valid_length
        if isinstance(valid_length, bool) or not isinstance(valid_length, int) or not 1 <= valid_length <= n:
            raise ValueError(
                f"valid_length must be an int in 1..{n} (the number of tokens), got {valid_length!r}"
            )

        self.trained = model
        self._embed = embed
        self._vocabulary = None if vocabulary is None else list(vocabulary)
        self._max_tokens = max_tokens
        self.tokens: list[str] = []
        self.weights: torch.Tensor | None = None  # (h, n, n)
        self.mask: torch.Tensor | None = None
        self.layout: tuple[int, int] | None = None  # (d_model, h) of the picture
        self.last_error: BaseException | None = None
        self._plots: OrderedDict[tuple[int, int], HeadPlot] = OrderedDict()
        self._quiet = False  # set while the explorer itself adjusts controls

        d_models = sorted({*D_MODELS, *([model.d_model] if model is not None else [])})

        def look(description: str, width: str) -> dict:
            return {
                "description": description,
                "style": {"description_width": "initial"},
                "layout": widgets.Layout(width=width),
            }

        self.controls = Controls(
            d_model=widgets.Dropdown(options=d_models, value=d_model, **look("d_model", "10em")),
            h=widgets.Dropdown(options=head_choices(d_model), value=h, **look("heads h", "10em")),
            mask=widgets.Dropdown(options=MASKS, value=mask, **look("mask", "15em")),
            valid_length=widgets.IntSlider(value=valid_length, min=1, max=n, **look("valid length", "20em")),
            sentence=widgets.Text(value=sentence, continuous_update=False, **look("sentence", "32em")),
            seed=widgets.BoundedIntText(value=seed, min=0, max=MAX_SEED, **look("seed", "10em")),
            source=widgets.ToggleButtons(
                options=[("fresh (random init)", "fresh"), *([("trained", "trained")] if model else [])],
                value="fresh" if model is None else "trained",
                **look("weights", "auto"),
            ),
        )
        self.status = widgets.HTML()
        self.note = widgets.HTML()
        self.image = widgets.Image(format="png")
        self.shapes_html = widgets.HTML(layout=widgets.Layout(min_width="17em"))
        self.widget = widgets.VBox(
            [
                widgets.HBox(
                    [self.controls.d_model, self.controls.h, self.controls.mask, self.controls.valid_length]
                ),
                widgets.HBox([self.controls.sentence, self.controls.seed]),
                self.controls.source,
                self.note,
                self.status,
                widgets.HBox([self.image, self.shapes_html], layout=widgets.Layout(flex_flow="row wrap")),
            ]
        )
        for control in self.controls.all():
            control.observe(self._on_change, names="value")
        self.refresh()

    @property
    def plot(self) -> HeadPlot | None:
        """The :class:`mha.HeadPlot` drawn last, or ``None`` before any valid input."""
        return self._plots[(self.layout[1], len(self.tokens))] if self.layout is not None else None

    # -- reacting to the controls ------------------------------------------------------------------------

    def _on_change(self, change: dict) -> None:
        if self._quiet:
            return
        self.refresh()

    def refresh(self) -> None:
        """Recompute and redraw for the controls' current values (the controls call this themselves).

        Raises:
            Exception: whatever unexpected error occurred, after showing it and keeping it in
                ``last_error``; a reader's input never raises.
        """
        try:
            with _one_thread():
                self._refresh()
        except Exception as error:
            self.last_error = error
            self.status.value = (
                '<span style="color:#b00020">Something went wrong inside the explorer: '
                f"{html.escape(type(error).__name__)}: {html.escape(str(error))}. Please report it.</span>"
            )
            raise

    def _refresh(self) -> None:
        c = self.controls
        trained = c.source.value == "trained"
        self._sync_controls(trained)
        tokens = split_tokens(c.sentence.value)
        if not tokens:
            self._say("Type a sentence: the explorer needs at least one word (words are split at spaces).")
            return
        if len(tokens) > MAX_TOKENS:
            self._say(
                f"That sentence has {len(tokens)} words; the explorer shows at most {MAX_TOKENS}. "
                "Please shorten it."
            )
            return
        n = len(tokens)
        self._adjust(c.valid_length, max=n, value=min(c.valid_length.value, n))

        mask = build_mask(c.mask.value, n, c.valid_length.value)
        if trained:
            model = self.trained
            embed = self._embed if self._embed is not None else self._default_embed(model.d_model)
            try:
                x = embed(tokens)
            except (KeyError, ValueError) as error:  # a word the model does not know: the reader's input
                message = error.args[0] if error.args else error
                self._say(f"This model cannot embed that sentence: {html.escape(str(message))}")
                return
            weights = head_weights(model, self._check_embedding(x, n, model.d_model), mask)  # (h, n, n)
            d_model, h = model.d_model, model.h
        else:
            d_model, h = c.d_model.value, c.h.value
            weights = explorer_weights(
                c.sentence.value,
                d_model=d_model,
                h=h,
                mask=c.mask.value,
                valid_length=c.valid_length.value,
                seed=c.seed.value,
            )  # (h, n, n)

        plot = self._plot(h, n)
        labels = [_label(t) for t in tokens]
        plot.set_labels(query_tokens=labels, key_tokens=labels, d_k=d_model // h)
        plot.update(weights, mask)
        self.image.value = plot.to_png()
        self.tokens, self.weights, self.mask, self.layout = tokens, weights, mask, (d_model, h)
        self.shapes_html.value = self._shapes_html()
        self.status.value = ""

    def _say(self, message: str) -> None:
        """Show a message to the reader; the picture stays that of the last valid input."""
        self.status.value = (
            f'<span style="color:#8a4b00">{message} (The picture still shows the last valid input.)</span>'
        )

    def _sync_controls(self, trained: bool) -> None:
        """Enable and fill the controls that make sense for the chosen source of weights."""
        c, model = self.controls, self.trained
        c.source.disabled = model is None
        for control in (c.d_model, c.h, c.seed):
            control.disabled = trained
        c.valid_length.disabled = "padding" not in c.mask.value
        if trained:
            self._adjust(c.d_model, value=model.d_model)
            self._adjust(
                c.h, options=head_choices(model.d_model) if model.h <= MAX_HEADS else [model.h], value=model.h
            )
            self.note.value = (
                f"<i>Trained model: d_model = {model.d_model} and h = {model.h} are fixed by its weights, "
                "and the seed plays no part; choose \u201cfresh\u201d to change them.</i>"
            )
        else:
            choices = head_choices(c.d_model.value)
            h = c.h.value if c.h.value in choices else max(k for k in choices if k <= c.h.value)
            self._adjust(c.h, options=choices, value=h)
            self.note.value = (
                ""
                if model is not None
                else "<i>Fresh layer: random weights, PyTorch's default initialisation.</i>"
            )

    def _adjust(self, control: widgets.ValueWidget, **traits) -> None:
        """Set traits of a control without running the explorer again for each of them."""
        self._quiet = True
        try:
            for name, value in traits.items():
                if getattr(control, name) != value:
                    setattr(control, name, value)
        finally:
            self._quiet = False

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

    def _plot(self, h: int, n: int) -> HeadPlot:
        """The figure for ``h`` panels of ``n`` by ``n``, reused if it was drawn recently."""
        key = (h, n)
        if key in self._plots:
            self._plots.move_to_end(key)
        else:
            self._plots[key] = HeadPlot(h, n, n, label_chars=_MAX_LABEL)  # one size for every sentence
            if len(self._plots) > _PLOT_CACHE:
                self._plots.popitem(last=False)
        return self._plots[key]

    # -- what the settings imply ---------------------------------------------------------------------------

    def shapes(self) -> dict[str, object]:
        """The shapes and sizes the current settings imply, as shown beside the heatmaps.

        Returns:
            A dict with ``n``, ``d_model``, ``h``, ``d_k`` and the shapes (tuples) of ``x`` ``(n, d_model)``,
            of each head's ``Q_i``, ``K_i``, ``V_i`` ``(n, d_k)``, of each head's weights ``(n, n)``, of all
            weights ``(h, n, n)``, of the concatenated heads ``(n, h * d_k)`` and of the output; and
            ``parameters``, a dict of parameter counts per projection and in total.
        """
        if self.layout is None:
            raise RuntimeError("the explorer has no valid input yet")
        (d_model, h), n = self.layout, len(self.tokens)
        d_k = d_model // h
        counts = projection_params(d_model, h)
        counts["total"] = sum(counts.values())
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
            "parameters": counts,
        }

    def _shapes_html(self) -> str:
        s = self.shapes()
        p = s["parameters"]
        rows = [
            ("d_k = d_model / h", f"{s['d_model']} / {s['h']} = {s['d_k']}"),
            ("input x", s["x"]),
            ("Q<sub>i</sub>, K<sub>i</sub>, V<sub>i</sub> per head", s["Q_i"]),
            ("weights per head", s["weights_i"]),
            ("weights, all heads", s["weights"]),
            ("Concat(head<sub>1..h</sub>)", s["concat"]),
            ("output", s["output"]),
        ]
        cell = 'style="text-align:left;padding:0.1em 0.6em 0.1em 0"'
        body = "".join(
            f"<tr><td {cell}>{name}</td><td {cell}><code>{value}</code></td></tr>" for name, value in rows
        )
        params = " + ".join(f"{name} {p[name]:,}" for name in ("W_q", "W_k", "W_v", "W_o"))
        return (
            f"<b>Shapes</b> for n = {s['n']} tokens, d_model = {s['d_model']}, h = {s['h']}"
            f'<table style="margin:0.3em 0">{body}</table>'
            f"<b>Parameters</b>: {params} = <b>{p['total']:,}</b>"
            "<br><small>The same for every h: heads split d_model, they do not add weights.</small>"
        )

    # -- display ---------------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        if self.layout is None:
            return "HeadExplorer(no valid input)"
        return (
            f"HeadExplorer(d_model={self.layout[0]}, h={self.layout[1]}, "
            f"mask={self.controls.mask.value!r}, tokens={len(self.tokens)}, "
            f"source={self.controls.source.value!r})"
        )

    def picture_html(self, *, note: bool = True) -> str:
        """HTML of the current picture and shapes, with a note that interaction needs a kernel."""
        png = base64.b64encode(self.image.value).decode("ascii")
        alt = html.escape(f"Attention weights of each head for the sentence: {' '.join(self.tokens)}")
        return (
            '<div class="mha-head-explorer-static">'
            + (f"<p><em>{html.escape(STATIC_NOTE)}</em></p>" if note else "")
            + '<div style="display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start">'
            f'<img src="data:image/png;base64,{png}" alt="{alt}" style="max-width:100%"/>'
            f"<div>{self.shapes_html.value}</div></div></div>"
        )

    def static_html(self) -> str:
        """HTML for pages without a kernel: the browser front end, set to the current controls.

        The page's scripts (``mha/widgets/static/``) compute and draw the weights themselves; the picture is
        the fallback for readers without JavaScript. A trained model without a ``vocabulary`` cannot be
        carried into the page, so its page shows the picture and the note.
        """
        if self.trained is not None and self._vocabulary is None:
            return self.picture_html()
        c = self.controls
        settings = {
            "d_model": c.d_model.value,
            "h": c.h.value,
            "mask": c.mask.value,
            "valid_length": c.valid_length.value,
            "sentence": c.sentence.value,
            "seed": c.seed.value,
            "source": c.source.value,
        }
        model = None
        if self.trained is not None:
            embed = self._embed if self._embed is not None else self._default_embed(self.trained.d_model)
            model = model_payload(self.trained, self._vocabulary, embed, self._max_tokens)
        config = {"settings": settings, "model": model}
        return root_html("mha-explorer", config, fallback=self.picture_html(note=False))

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """The widget for live front ends, plus a static picture for renderers without a kernel."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        bundle["text/plain"] = repr(self)
        if self.weights is not None:
            bundle["text/html"] = self.static_html()
            bundle["image/png"] = base64.b64encode(self.image.value).decode("ascii")
        return bundle
