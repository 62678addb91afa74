"""Each figure's spec, defined once: its controls (choices, bounds, defaults, labels), its rules and messages.

The spec goes to the page with the figure's data (``"spec"`` in a static root's inline JSON, in the ``config``
traitlet of a live widget), and ``book/widgets/static/controller.js`` mounts the figure from it: the scripts
declare no choice, bound, default or message of their own (``tests/unit/book/widgets/test_spec.py`` scans
them). The same rules check a reader's input on both sides: :func:`merge_settings` here, ``mergeSettings`` in
the port ``book/widgets/static/ports/settings.js``, which ``tests/unit/book/widgets/test_spec.py`` keeps equal
to this one.

A control is a :class:`Control`; a spec is a plain dict (JSON as it is)::

    {"figure": "explorer", "controls": [Control.to_json(), ...], "defaults": {name: value},
     "messages": {key: template}, ...}   plus the figure's own constants (the explorer's masks, ...)

Every text a figure shows is in its spec, the labels of its pictures and read-outs included: the messages
every figure shares come from :func:`messages`, a figure's own from its spec function (the MiniLM box's
from :mod:`book.minilm.page`).

A template's ``{name}`` fields are filled by :func:`fill` (``format`` in ``ports/settings.js``); a value is
written as JSON (``"causal"``, ``null``, ``4``), a list as its items joined by ``", "``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from book.compute.attention_2026 import INDEX_SHAPE, INDEX_STREAM
from book.compute.explorer import (
    D_MODELS,
    MASKS,
    MAX_HEADS,
    MAX_SEED,
    MAX_TOKENS,
    PARAMETERS,
    head_choices,
    split_tokens,
)
from book.compute.stages import AXIS_NAMES, STAGES
from mha.costs.counts import projection_params
from mha.costs.report import BYTE_UNITS, COUNT_UNITS, DTYPES, ROWS

# -- the messages of every figure ----------------------------------------------------------------------------

STILL = " (The picture still shows the last valid input.)"  # after a message about the reader's input
STILL_NUMBERS = " (The numbers below are for the last valid input.)"  # the same, under a table
BUG = "Something went wrong inside the {figure}: {error}. Please report it."
WHOLE = "The {label} must be a whole number from {lo} to {hi}."
HELP = (
    "Hover over, tap or focus the picture, then use the arrow keys to read each weight "
    "(Page Up/Down: other head; Escape: none)."
)  # under a picture of attention weights
# What a value no control offers raises (ValueError in Python, RangeError in the page), by kind of control.
INVALID = {
    "choice": "{name} must be one of {choices}, got {value}",
    "divisors": "{name} must be one of {choices} (divisors of {of}={limit}), got {value}",
    "int": "{name} must be an int in {lo}..{hi}, got {value}",
    "tokens": "{name} must be an int in 1..n={hi} (the number of tokens), got {value}",
    "fixed": "the trained model fixes {name} = {fixed}; got {value}",
    "text": "{name} must be a str, got {value}",
}


# What the page says when a setting that depends on another one changes with it (book.widgets.spec's
# follow_notes, the port's followNotes), by the rule that ties them: a setting never falls silently.
FOLLOWS = {
    "divisors": "The {label} changed from {old} to {value}: {old} does not divide {of} = {limit}.",
    "upto": "The {label} changed from {old} to {value}: {of} is now {limit}.",
    "tokens": (
        "The {label} is {value} while the sentence has {value} token{s}; it goes back to {chosen} when the "
        "sentence has {chosen} tokens or more."
    ),
}
# A slider over a figure's choices: what it shows beside it, and what it announces (aria-valuetext).
SLIDER = {"slider_output": "{index} / {count}", "slider_value": "{index} of {count}: {text}"}
NUMBERS_MIN = 26  # px: the narrowest cell a figure prints a weight in (".42", two decimals)
# Why "show numbers" prints none: the cells are too narrow on this screen.
NUMBERS_TOO_SMALL = (
    "Numbers are printed in the cells only when a cell is at least {min} px wide; with {n} tokens on this "
    "screen a cell is {cell} px. Point at or tap a cell to read its weight, or choose a shorter sentence."
)

# The texts of a picture of attention weights (heatmaps.js draws them), and of the read-out of one cell.
PICTURE = {"rows": "query", "cols": "key", "scale": "weight", "masked": "masked"}
LAYER_HEAD = "layer {layer}, head {head}"  # a head of a pretrained encoder, numbered from 1
QUERY_KEY = "query \u201c{query}\u201d (row {row}) \u2192 key \u201c{key}\u201d (column {col})"
ENCODER_CELL = LAYER_HEAD + ": " + QUERY_KEY + ": weight {weight}"  # the MiniLM box's


def messages(**own: object) -> dict:
    """A spec's messages: those every figure shares (``still``, ``bug``, ``whole``, ``invalid``,
    ``follows``, the :data:`SLIDER` and :data:`PICTURE` texts), then the figure's own, which may replace a
    shared one."""
    shared = {"still": STILL, "bug": BUG, "whole": WHOLE, "invalid": dict(INVALID), "follows": dict(FOLLOWS)}
    return {**shared, **SLIDER, **PICTURE, **own}


@dataclasses.dataclass(frozen=True)
class Control:
    """One control of a figure, named by the setting it sets (the page's ``select[name=h]``)."""

    name: str  # the setting, and the control's name attribute
    kind: str  # "select", "number" (a box), "range" (a slider: over its choices, if it has some), "text"
    # (a box; its choices, if any, are suggestions: any str is a setting) or "checkbox"
    label: str  # the text of its label
    choices: tuple = ()  # (value, text) pairs of a select or slider; empty when a rule gives them
    lo: int | None = None  # a number's or slider's smallest value
    hi: int | None = None  # and its largest, unless ``hi_from`` gives it
    rule: str = ""  # "divisors" (h: divisors of ``of`` up to ``hi``), "upto" (1 .. the setting ``of``),
    # "tokens" (a slider 1 .. the number of tokens of ``of``, null = all), "" (none)
    of: str = ""  # the setting a rule depends on
    setting: bool = True  # False for a view option that is no setting (the explorer's "show numbers")

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        out["choices"] = [list(c) for c in self.choices]
        return out


def _pairs(values, texts: dict | None = None) -> tuple:
    return tuple((v, (texts or {}).get(v, str(v))) for v in values)


def token_ranges(tokens: Sequence[str]) -> str:
    """Tokens as a message names them: three or more consecutive numbers with one prefix as a range,
    ``["0", ..., "7", "A0", ..., "A7", "?"]`` as ``"0–7, A0–A7, ?"``."""
    out: list[str] = []
    run: list[tuple[str, int, str]] = []  # (prefix, number, token) of consecutive numbers

    def close() -> None:
        out.extend([f"{run[0][2]}\u2013{run[-1][2]}"] if len(run) > 2 else [t for *_, t in run])
        run.clear()

    for token in tokens:
        match = re.fullmatch(r"(\D*)(\d+)", token)
        key = (match.group(1), int(match.group(2))) if match else None
        if not (run and key and key[0] == run[-1][0] and key[1] == run[-1][1] + 1):
            close()
        if key:
            run.append((*key, token))
        else:
            out.append(token)
    close()
    return ", ".join(out)


_PLURAL = re.compile(r"\{(\w+)\|([^|{}]*)\|([^|{}]*)\}")


def fill(template: str, **values: object) -> str:
    """A message from its template: ``{name}`` fields filled, values as JSON, lists joined by ``", "``.

    ``{name|one|many}`` is the one place a message chooses a singular or a plural: ``one`` if the value of
    ``name`` is 1, else ``many`` (``"{k} {k|key|keys}"``); a language without plurals (Chinese) just does
    not use it. The page's ``format`` (``ports/settings.js``) does the same."""
    template = _PLURAL.sub(
        lambda m: (m[2] if values[m[1]] in (1, "1") else m[3]) if m[1] in values else m[0], template
    )

    def text(value: object) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, list | tuple):
            return ", ".join(text(v) for v in value)
        return json.dumps(value)

    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", text(value))
    return out


def is_int(value: object) -> bool:
    """``value`` is an int and not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def setting_names(spec: dict) -> tuple[str, ...]:
    """The settings of a spec's figure, in its controls' order (not its view options: "show numbers")."""
    return tuple(c["name"] for c in spec["controls"] if c["setting"])


def quoted(value: object) -> str:
    """A value as a message shows it: JSON (``"causal"``, ``4``, ``null``)."""
    return json.dumps(value, ensure_ascii=False)


PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")


def parameter_counts(counts: dict[str, int]) -> dict[str, int]:
    """Parameters per projection and their total, as the explorer shows them."""
    return {**{w: counts[w] for w in PROJECTIONS}, "total": sum(counts[w] for w in PROJECTIONS)}


# -- the explorer -------------------------------------------------------------------------------------------

ENCODER = "all-MiniLM-L6-v2"  # what the figures call the pretrained encoder of mha.pretrained
ENCODER_SENTENCE = "The animal didn't cross the street because it was too tired."  # its figures' first

EXPLORER_DEFAULTS = {
    "d_model": 32,
    "h": 4,
    "mask": "none",
    "valid_length": None,
    "sentence": "the cat sat on the mat because it was tired",
    "seed": 0,
    "source": "fresh",
}


# The table of shapes beside the explorer's heatmaps, as the page and Python's fallback
# (book.widgets.explorer.HeadExplorer.shapes_html) show it: a row's label is pieces of text, ["sub", text] a
# subscript, and its value a template filled with n, d_model, h, d_k and concat = h * d_k.
SHAPE_ROWS = (
    (("d_k = d_model / h",), "{d_model} / {h} = {d_k}"),
    (("input x",), "({n}, {d_model})"),
    (("Q", ("sub", "i"), ", K", ("sub", "i"), ", V", ("sub", "i"), " per head"), "({n}, {d_k})"),
    (("weights per head",), "({n}, {n})"),
    (("weights, all heads",), "({h}, {n}, {n})"),
    (("Concat(head", ("sub", "1..h"), ")"), "({n}, {concat})"),
    (("output",), "({n}, {d_model})"),
)


def explorer_spec(*, trained: bool = False) -> dict:
    """The head explorer's controls, masks, defaults and messages; ``trained``: it has a trained model."""
    sources = ("trained", "fresh") if trained else ("fresh",)
    controls = [
        Control("source", "select", "weights", _pairs(sources, SOURCE_TEXTS)),
        Control("d_model", "select", "d_model", _pairs(D_MODELS)),
        Control("h", "select", "heads h", (), lo=1, hi=MAX_HEADS, rule="divisors", of="d_model"),
        Control("mask", "select", "mask", _pairs(MASKS)),
        Control("sentence", "text", "sentence"),
        Control("valid_length", "range", "valid length", lo=1, rule="tokens", of="sentence"),
        Control("seed", "number", "seed", lo=0, hi=MAX_SEED),
        Control("show_numbers", "checkbox", "show numbers", setting=False),
        Control("scale", "select", "colours", _pairs(SCALES, SCALE_TEXTS), setting=False),
    ]
    return {
        "figure": "explorer",
        "controls": [c.to_json() for c in controls],
        "defaults": {**EXPLORER_DEFAULTS, "source": sources[0]},
        # what each mask hides: no_later (a query sees no later key), cut (no key at or after valid_length)
        "masks": [{"name": m, "no_later": "causal" in m, "cut": "padding" in m} for m in MASKS],
        "max_tokens": MAX_TOKENS,
        "numbers_min": NUMBERS_MIN,
        "parameters": list(PARAMETERS),
        # a fresh layer's parameters by d_model (the same for every h: heads split d_model)
        "fresh_parameters": {str(d): parameter_counts(projection_params(d, 1)) for d in D_MODELS},
        "shapes": [
            [[p if isinstance(p, str) else list(p) for p in label], value] for label, value in SHAPE_ROWS
        ],
        "messages": messages(
            no_tokens=(
                "Type a sentence: the explorer needs at least one token (the words between spaces, and each "
                "Chinese or Japanese character on its own)."
            ),
            too_long="That sentence has {n} tokens; the explorer shows at most {limit}. Please shorten it.",
            cannot_embed="This model cannot embed that sentence: {reason}",
            unknown_tokens="unknown token{plural} {tokens}",
            known_tokens="; it reads only the tokens {known}",  # after unknown_tokens, where they are known
            positions="it has learned {positions} positions, the sentence has {n} words",
            # a trained model with a name, and without one
            trained_note=(
                "Trained model ({name}): d_model = {d_model} and h = {h} are fixed by its weights, "
                "and the seed plays no part."
            ),
            trained_note_plain=(
                "Trained model: d_model = {d_model} and h = {h} are fixed by its weights, "
                "and the seed plays no part."
            ),
            trained_reads=" It reads the tokens {known}, separated by spaces.",  # where they are known
            fresh_note="Fresh layer: random weights, PyTorch's default initialisation, drawn from the seed.",
            help=HELP,
            # the panels' titles, longest first (a narrow panel takes the first that fits), on the shared
            # scale and on each head's own
            panel="head {head} (d_k = {d_k})",
            panel_short="head {head}",
            panel_own="head {head}, max {max}",
            panel_own_short="h{head} max {max}",
            panel_own_shorter="{head}: max {max}",
            scale_own="of max",
            picture=(
                "Attention weights of {h} head{s}, one {n} by {n} panel each (queries on rows, keys on "
                "columns), for the tokens: {tokens}"
            ),
            cell="head {head} (d_k = {d_k}): " + QUERY_KEY + ": {value}",
            cell_weight="weight {weight}",
            cell_masked="masked (weight 0)",
            cell_largest=" (the head's largest: {largest})",
            numbers_too_small=NUMBERS_TOO_SMALL,
            # the table of shapes (SHAPE_ROWS) and of parameters
            shapes="Shapes",
            shapes_for=" for n = {n} token{s}, d_model = {d_model}, h = {h}",
            tokens="tokens",
            parameters="Parameters",
            same_parameters="The same for every h: heads split d_model, they do not add weights.",
        ),
    }


SOURCE_TEXTS = {"trained": "trained model", "fresh": "fresh (random init)"}
# The colour scale of the explorer's panels (a view option): one 0-1 scale for all heads, or each head
# against its own largest weight, which shows how heads differ when every weight is small (h = 16, n = 16).
SCALES = ("shared", "per head")
SCALE_TEXTS = {"shared": "0 to 1, all heads", "per head": "each head to its largest"}

# -- the stage stepper --------------------------------------------------------------------------------------


def stepper_spec() -> dict:
    """The stage stepper's one control: a slider over the stages of :data:`book.compute.STAGES`."""
    control = Control("stage", "range", "stage", tuple((stage.key, stage.title) for stage in STAGES))
    return {
        "figure": "stepper",
        "controls": [control.to_json()],
        "defaults": {"stage": STAGES[-1].key},
        "axis_names": dict(AXIS_NAMES),  # what the picture calls a stage's axes, by the shape's symbol
        "messages": messages(
            previous="\u25c0 previous",
            next="next \u25b6",
            panel="head {head}",
            caption="{index}. {title}",
            caption_shape=", shape ({shape}) = {symbols}",
            picture="Stage {index} of {count}, {title}: a tensor of shape ({shape}) drawn as heatmaps",
            value="value",
            help=(
                "Hover over, tap or focus the picture, then use the arrow keys to read each value "
                "(Page Up/Down: other head; Escape: none)."
            ),
            # the read-out of one cell: where (the stage, and its head), the row and the column, the value;
            # in the attention weights, the sum of the row too
            cell="{where}: {rows} {row}{row_token}, {cols} {col}{col_token}: {value}",
            cell_head="{title}, head {head}",
            cell_token=" (\u201c{token}\u201d)",
            row_sum="; row {row} sums to {sum}",
        ),
    }


# -- the window explorer -------------------------------------------------------------------------------------

WINDOW_BOUNDS = {"n": (2, 32), "window": (1, 32), "layers": (1, 8)}  # inclusive bounds of the number inputs
PERIODS = (0, 2, 3, 4, 6)  # one global layer in every this many (0: none); gpt-oss 2, Gemma 3 6
# and layer: the last. 24 tokens: six local layers of window 4 reach 18 tokens back, which the chapter shows.
WINDOW_DEFAULTS = {"n": 24, "window": 4, "layers": 6, "global_period": 3}


def windows_spec() -> dict:
    """The window explorer's controls, defaults and messages."""
    periods = {p: f"1 in {p} layers" if p else "no global layer" for p in PERIODS}
    controls = [
        Control("n", "number", "tokens", lo=WINDOW_BOUNDS["n"][0], hi=WINDOW_BOUNDS["n"][1]),
        Control("window", "number", "window", lo=WINDOW_BOUNDS["window"][0], hi=WINDOW_BOUNDS["window"][1]),
        Control("layers", "number", "layers", lo=WINDOW_BOUNDS["layers"][0], hi=WINDOW_BOUNDS["layers"][1]),
        Control("global_period", "select", "global layer", _pairs(PERIODS, periods)),
        Control("layer", "select", "show layer", lo=1, rule="upto", of="layers"),
    ]
    return {
        "figure": "window explorer",
        "controls": [c.to_json() for c in controls],
        "defaults": {**WINDOW_DEFAULTS, "layer": WINDOW_DEFAULTS["layers"]},
        "messages": messages(
            kind_global="global",
            kind_local="local, window {window}",
            summary=(
                "After layer {layer}, token {n} has seen inputs {first} to {n}. With {n} tokens, these "
                "{layers} layers cache {cached} token entries per sequence, against {full} if every layer "
                "were global."
            ),
            panel_mask="layer {layer} ({kind}): may attend",
            panel_seen="after layer {layer}: has seen input",
            rows="token",
            cols="key / input token",
            # the key of the two colours: the answer to each panel's question (its title)
            scale="yes",
            masked="no",
            picture="Layer {layer}, {kind}: its mask and what each of {n} tokens has seen",
            help=(
                "Hover over, tap or focus the picture, then use the arrow keys to read each cell "
                "(Page Up/Down: the other panel; Escape: none)."
            ),
            cell=(
                "Layer {layer} ({kind}): token {row} may attend to token {col}: {may}; after layer {layer}, "
                "token {row} has seen input {col}: {seen}."
            ),
        ),
    }


# -- the sparse-attention figure -----------------------------------------------------------------------------

SPARSE_DEFAULTS = {"sentence": "the cat sat on the mat because it was tired and warm", "top_k": 4, "seed": 0}


def sparse_spec() -> dict:
    """The sparse-attention figure's controls, defaults and messages (its numbers:
    :func:`book.compute.attention_2026.index_selection`, ported to ``ports/sparse.js``)."""
    controls = [
        Control("sentence", "text", "sentence"),
        Control("top_k", "range", "top-k", lo=1, rule="tokens", of="sentence"),
        Control("seed", "number", "indexer seed", lo=0, hi=MAX_SEED),
    ]
    return {
        "figure": "sparse-attention figure",
        "controls": [c.to_json() for c in controls],
        "defaults": dict(SPARSE_DEFAULTS),
        "max_tokens": MAX_TOKENS,
        "index_shape": dict(INDEX_SHAPE),
        "index_stream": INDEX_STREAM,
        "messages": messages(
            no_tokens="Type a sentence: the figure needs at least one token.",
            too_long="That sentence has {n} tokens; the figure shows at most {limit}. Please shorten it.",
            summary=(
                "Each query keeps its {k} best {k|key|keys} by index score. {n} {n|token|tokens}: {kept} "
                "query\u2013key {kept|pair|pairs} "
                "kept of {pairs} that dense causal attention scores ({share}%); the indexer scores all "
                "{pairs}."
            ),
            panel_scores="index scores",
            panel_kept="kept: top-{k} per query",
            panel_kept_short="top-{k} kept",  # a narrow panel's title
            scale="score",
            masked="later / not kept",
            picture=(
                "Index scores of {n} tokens (queries on rows, keys on columns) and the {k} keys each query "
                "keeps, for the tokens: {tokens}"
            ),
            cell=QUERY_KEY + ": index score {score}, {kept} (rank {rank} of {seen})",
            cell_later=QUERY_KEY + ": a later key, never scored",
            kept="kept",
            dropped="not kept",
            help=(
                "Tokens are the words between spaces, and each Chinese or Japanese character on its own. "
                "Focus the picture and use the arrow keys to read each score."
            ),
        ),
    }


# -- the cost calculator -------------------------------------------------------------------------------------

MAX_CONTEXT = 2**24  # the largest context the control accepts (Llama 4 Scout was trained for 10,485,760)
MAX_BATCH = 2**12  # and the largest batch
CALCULATOR_DEFAULTS = {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"}


def calculator_spec(models: list[str]) -> dict:
    """The calculator's controls (``models``: the decoder-only models it offers), defaults and messages."""
    controls = [
        Control("model", "select", "model", _pairs(models)),
        Control("dtype", "select", "dtype", _pairs(DTYPES)),
        Control("context", "number", "context", lo=1, hi=MAX_CONTEXT),
        Control("batch", "number", "batch", lo=1, hi=MAX_BATCH),
    ]
    return {
        "figure": "calculator",
        "controls": [c.to_json() for c in controls],
        "defaults": dict(CALCULATOR_DEFAULTS),
        "dtypes": {k: v.itemsize for k, v in DTYPES.items()},  # bytes per element of the cache
        "units": {"bytes": list(BYTE_UNITS), "counts": list(COUNT_UNITS)},  # format_bytes', format_count's
        "rows": {key: list(row) for key, row in ROWS.items()},  # each row's label and value template
        "messages": messages(still=STILL_NUMBERS),
    }


# -- the rules: one merge of settings, ported to ports/settings.js -------------------------------------------


def choices(spec: dict, control: dict, state: dict) -> list:
    """The values a control offers in ``state``: its choices, or those its rule gives."""
    if control["rule"] == "divisors":
        return head_choices(state[control["of"]], most=control["hi"])
    if control["rule"] == "upto":
        return list(range(control["lo"], state[control["of"]] + 1))
    return [v for v, _ in control["choices"]]


def explorer_choices(spec: dict, state: dict, trained: dict | None = None) -> dict[str, list]:
    """What the explorer's menus offer in ``state``: the spec's choices of ``source``, ``d_model``, ``h`` and
    ``mask``; while a trained model is shown (``trained``: its ``d_model`` and ``h``), the widths with its own
    among them, and the divisors of its width, or its own ``h`` if that is not one of them."""
    controls = {c["name"]: c for c in spec["controls"]}
    out = {name: choices(spec, controls[name], state) for name in ("source", "d_model", "h", "mask")}
    if trained is not None and state["source"] == "trained":
        out["d_model"] = sorted({*out["d_model"], trained["d_model"]})
        heads = choices(spec, controls["h"], {"d_model": trained["d_model"]})
        out["h"] = heads if trained["h"] in heads else [trained["h"]]
    return out


def next_valid(values: list, old: object) -> object:
    """The value a control moves to when ``old`` is no longer offered: the largest below, else the first."""
    below = [v for v in values if v <= old]
    return max(below) if below else values[0]


def invalid(spec: dict, kind: str, **fields: object) -> str:
    """The message of a value no control offers."""
    return fill(spec["messages"]["invalid"][kind], **fields)


def chosen_key(name: str) -> str:
    """The key under which a state keeps the value a reader chose for ``name``, a setting that follows the
    length of a sentence (rule ``"tokens"``): the explorer's ``valid_length`` goes back to it."""
    return f"{name}_chosen"


def merge_settings(spec: dict, state: dict, changes: dict, *, fixed: dict | None = None) -> dict:
    """``state`` with ``changes`` merged in, checked against ``spec`` as the page's controls check them.

    A setting that depends on a changed one follows it (``h`` the largest divisor below the old ``h``,
    ``layer`` at most ``layers``). ``valid_length`` follows the sentence: it is the value the reader chose,
    or the number of tokens while the sentence is shorter than that; the state keeps the chosen value under
    :func:`chosen_key` (``None``: all the tokens, as when the reader chose the last one), so that a short
    sentence typed on the way to a long one does not lower it for good. :func:`follow_notes` says what
    followed.

    Args:
        spec: a figure's spec (:func:`explorer_spec`, ...).
        state: the current settings (not changed).
        changes: the settings to change.
        fixed: settings the state does not let change (a trained model's ``d_model`` and ``h``).

    Returns:
        The new settings.

    Raises:
        KeyError: an unknown setting. TypeError: a sentence that is not a str. ValueError: a value no
            control offers (the message is the spec's ``invalid`` template).
    """
    controls = {c["name"]: c for c in spec["controls"] if c["setting"]}
    unknown = sorted(set(changes) - set(controls))
    if unknown:
        raise KeyError(f"unknown settings {unknown}; the settings are {list(controls)}")
    fixed = fixed or {}
    out = dict(state)
    for name, control in controls.items():  # in the spec's order: a rule's setting comes before it
        if name in fixed:
            if name in changes and changes[name] != fixed[name]:
                raise ValueError(
                    invalid(spec, "fixed", name=name, fixed=fixed[name], value=quoted(changes[name]))
                )
            continue
        value = changes.get(name, out.get(name))
        if control["kind"] == "text":
            if not isinstance(value, str):
                raise TypeError(invalid(spec, "text", name=name, value=quoted(value)))
        elif control["rule"] == "tokens":
            n = len(split_tokens(out[control["of"]]))
            memory = chosen_key(name)
            if name in changes:
                if value is not None and (not is_int(value) or value < 1 or (n and value > n)):
                    raise ValueError(invalid(spec, "tokens", name=name, hi=n, value=quoted(value)))
                out[memory] = None if value == n else value  # the last token chosen: all of them
            else:
                chosen = out.get(memory, value)
                if n and value is not None:  # the sentence's length, up to the value chosen
                    value = n if chosen is None else min(chosen, n)
                out[memory] = chosen
        elif control["kind"] == "number":
            if not is_int(value) or not control["lo"] <= value <= control["hi"]:
                lo, hi = control["lo"], control["hi"]
                raise ValueError(invalid(spec, "int", name=name, lo=lo, hi=hi, value=quoted(value)))
        else:  # a select
            offered = choices(spec, control, out)
            ok = (
                value in offered
                and (is_int(value) or isinstance(value, str))
                and type(value) is type(offered[0])
            )
            if not ok and name in changes:
                kind = "divisors" if control["rule"] == "divisors" else "choice"
                if control["rule"] == "upto":
                    raise ValueError(
                        invalid(spec, "int", name=name, lo=control["lo"], hi=offered[-1], value=quoted(value))
                    )
                raise ValueError(
                    invalid(
                        spec,
                        kind,
                        name=name,
                        choices=offered,
                        of=control["of"],
                        limit=out.get(control["of"]),
                        value=quoted(value),
                    )
                )
            if not ok:
                value = next_valid(offered, value)
        out[name] = value
    return out


def follow_notes(spec: dict, before: dict, after: dict, changes: dict) -> dict[str, str]:
    """What the page says about settings that followed others when ``changes`` turned ``before`` into
    ``after`` (both :func:`merge_settings` states), ``{name: text}`` in the spec's order: a divisor or a
    bounded setting that had to change (the spec's ``follows`` messages), and a setting that follows a
    sentence's length while it is below the value chosen (:func:`chosen_key`), for as long as it is. A
    setting the reader changed gets no note."""
    controls = {c["name"]: c for c in spec["controls"]}
    templates = spec["messages"]["follows"]
    notes = {}
    for name, control in controls.items():
        rule = control["rule"]
        if not control["setting"] or not rule or name in changes:
            continue
        value = after.get(name)
        if rule in ("divisors", "upto") and before.get(name) != value:
            of = controls[control["of"]]["label"]
            old, limit = before.get(name), after[control["of"]]
            notes[name] = fill(
                templates[rule], label=control["label"], old=old, value=value, of=of, limit=limit
            )
        elif rule == "tokens":
            chosen = after.get(chosen_key(name))
            if is_int(chosen) and is_int(value) and value < chosen:
                s = "s" if value != 1 else ""
                notes[name] = fill(templates[rule], label=control["label"], value=value, chosen=chosen, s=s)
    return notes
