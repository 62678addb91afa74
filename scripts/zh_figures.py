"""The interactive figures' texts in Chinese: the catalogue ``zh/figures.yml``, applied to the stored outputs.

Every text an interactive figure shows is defined once, in Python (:mod:`book.widgets.spec` and the figure's
own module), and travels with the figure's data: a chapter's stored output holds the figure's root element,
``<div class="mha-…"><script type="application/json">{…}</script>…</div>`` (the ``text/html`` of its display
bundle; :func:`_ext.figure_roots.figure_roots` finds it), whose JSON carries the spec (controls, messages,
…) and the data. The English notebooks are the one source of these outputs; :mod:`scripts.zh_sync` copies
them into the Chinese notebooks and, on the way, translates the texts of that JSON with the catalogue
``zh/figures.yml`` (:func:`translate_outputs`). So the Chinese page carries the same figure with Chinese
texts, and nothing in the page's scripts changes.

**The catalogue** is a list of pairs, English text -> Chinese, as gettext keeps them: one entry per English
text, whichever figure shows it. An English text may hold ``{name}`` fields: the figure's page fills them
(``"head {head}"``), or Python filled them before the spec was stored (``"layer 1"``, ``"32 local (window
4096): …"``). A text is looked up exactly first; otherwise an entry whose fields, read as wildcards, match the
whole text translates it, its fields' values carried over (the entry with the most literal characters wins).
The Chinese keeps every field of the English, except the English plural endings ``{s}`` and ``{plural}``,
which Chinese does not need.

**Which strings are texts.** A figure's JSON also holds names, sentences for the (English) models, tokens and
numbers, which must not change. :data:`TEXT` lists the places that hold texts (the controls' labels and
choices, the messages, …), :data:`DATA` the places that hold data; a string in neither fails the tests,
naming the figure and the place, so that a new figure's new field is classed once, here. A choice whose text
is its value (a model ``Llama 3.1 8B``, a dtype) is the code's name, shown as it is, except the choices of
the controls in :data:`WORDED_CHOICES` (the explorer's masks: none, causal, padding); so is a text with no
Latin letter outside its fields. The examples of a control named ``sentence`` are
sentences for an English model, kept English (:data:`KEPT_CHOICES`).

Commands (through scripts/zh_sync.py): ``python -m scripts.zh_sync --figures`` lists the figure texts with no
Chinese (ready to paste into ``zh/figures.yml``), the pairs nothing uses and the strings in no known place;
``python -m scripts.zh_sync`` applies the catalogue. ``tests/book/test_figure_texts.py`` fails on the same.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path

import nbformat
import yaml

from _ext.figure_roots import figure_roots
from scripts.documents import documents, english_path

ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = "zh/figures.yml"
_JSON_SCRIPT = '<script type="application/json">'  # every figure's data is in one: each must be read
_FIELD = re.compile(r"\{(\w+)\}")
_LATIN = re.compile(r"[A-Za-z]")
PLURALS = {"s", "plural"}  # English plural endings: a Chinese text may leave these fields out

# Where a figure's JSON holds texts a reader sees. A path is the keys from the root of the JSON, "*" one key
# or list index, "**" any number; a root that is itself a spec (the MiniLM box's) is read as {"spec": root}.
TEXT = (
    "spec/figure",  # the figure's name, in its messages ("Something went wrong inside the {figure}")
    "spec/controls/*/label",
    "spec/controls/*/choices/*/1",  # a choice's text (its value is choices/*/0)
    "spec/messages/**",
    "spec/shapes/*/0/*",  # the explorer's table of shapes: a row's label, in pieces
    "spec/shapes/*/0/*/1",  # a piece set as a subscript: ["sub", text]
    "spec/shapes/*/1",  # and the row's value
    "spec/axis_names/*",  # the stepper's names of a stage's axes
    "spec/rows/*/*",  # the calculator's rows: label and value template
    "spec/kinds/*",  # the MiniLM box: what kind of head each label is
    "spec/roles/*/*",  # the decoder box (induction_heads): each head's role, "" for none
    "spec/run/messages/**",  # the SmolLM2 figure's "Run on your own text" (book.smollm2.weights.run_spec)
    "spec/run/kinds/*",  # and the kinds of heads it switches off at once
    "stages/*/title",  # the stepper's stages
    "configs/*/description",  # the calculator's models, and their local and global layers
    "configs/*/layers",
    "configs/*/groups/*/label",  # a kind of layer's row ("sliding 512, 2 x 8 x 256")
    "configs/*/uncounted",  # what the counts leave out ("not counted: linear layers")
)
# Where it holds data: names the code uses, settings, sentences and tokens of the (English) models, numbers.
DATA = (
    "spec/controls/*/name",
    "spec/controls/*/kind",
    "spec/controls/*/rule",
    "spec/controls/*/of",
    "spec/controls/*/choices/*/0",
    "spec/shapes/*/0/*/0",  # "sub"
    "spec/defaults/**",
    "spec/masks/**",
    "spec/parameters/**",
    "spec/labels/**",  # the MiniLM box's head labels (classify_heads names)
    "spec/units/**",  # the calculator's units (KiB ... YiB, k ... Y): the same in Chinese
    "spec/names/**",  # the decoder box: the heads' short names (L1H2), the characters it reads as they are,
    "spec/ordinary/**",
    "spec/shown/**",  # and the signs it shows for a space and a new line
    "spec/stored/**",  # the MiniLM box's stored weights: sentences and tokens of the English model, bytes
    "spec/prompts/**",  # the SmolLM2 figure's prompts: texts and tokens of the model, scores, notice fields
    "spec/census/**",  # and its census scores
    "spec/model",
    "spec/weights",
    "spec/format",
    "spec/callback",
    "spec/run/weights",  # the SmolLM2 figure: its weights scripts, their format, its text for the model
    "spec/run/format",
    "spec/run/default_text",
    "settings/**",
    "model/**",
    "tokens/**",
    "stages/*/key",
    "stages/*/formula",
    "stages/*/shape",
    "configs/**",  # the calculator's models: names and numbers (their texts are in TEXT)
)
# Controls whose choices are not texts: a sentence's examples are inputs of an English model, kept English.
KEPT_CHOICES = {"sentence"}
# Controls whose choices are words even where the text is the value: the explorer's masks (none, causal, ...).
WORDED_CHOICES = {"mask"}


# ---------------------------------------------------------------------------------------------------------
# The catalogue
# ---------------------------------------------------------------------------------------------------------


def fields(text: str) -> list[str]:
    """The ``{name}`` fields of a text, in order."""
    return _FIELD.findall(text)


def needs_translation(text: str) -> bool:
    """A text with a Latin letter outside its ``{fields}``: words a Chinese reader should read in Chinese."""
    return bool(_LATIN.search(_FIELD.sub("", text)))


@dataclasses.dataclass(frozen=True)
class Entry:
    en: str
    zh: str

    @functools.cached_property
    def pattern(self) -> re.Pattern | None:
        """The English as a pattern whose fields match any text (``None``: the English has no field)."""
        if not fields(self.en):
            return None
        out, seen, end = [], set(), 0
        for match in _FIELD.finditer(self.en):
            out.append(re.escape(self.en[end : match.start()]))
            name = match.group(1)
            value = ".*?" if name in PLURALS else ".+?"  # an English plural ending may be empty
            out.append(f"(?P={name})" if name in seen else f"(?P<{name}>{value})")
            seen.add(name)
            end = match.end()
        out.append(re.escape(self.en[end:]))
        return re.compile("".join(out), re.S)

    @property
    def literal(self) -> int:
        """How much of the English is not fields: the more, the more specific a pattern."""
        return len(_FIELD.sub("", self.en))


class Catalogue:
    """English text -> Chinese, from ``zh/figures.yml`` (empty if the file does not exist)."""

    def __init__(self, entries: list[Entry]) -> None:
        self.entries = entries
        self.exact = {e.en: e for e in entries}
        self.patterns = sorted((e for e in entries if e.pattern), key=lambda e: -e.literal)
        self.used: set[str] = set()  # the English of the entries that lookups used

    @classmethod
    def load(cls, root: Path = ROOT) -> Catalogue:
        path = root / CATALOGUE
        if not path.exists():
            return cls([])
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return cls([Entry(str(t["en"]), str(t["zh"])) for t in data.get("texts", [])])

    def lookup(self, text: str) -> str | None:
        """The Chinese of ``text``, or ``None`` if the catalogue has none."""
        if text in self.exact:
            self.used.add(text)
            return self.exact[text].zh
        for entry in self.patterns:
            match = entry.pattern.fullmatch(text)
            if match:
                self.used.add(entry.en)
                values = match.groupdict()
                return _FIELD.sub(lambda m, values=values: values.get(m.group(1), m.group(0)), entry.zh)
        return None


def field_problems(catalogue: Catalogue) -> list[str]:
    """Pairs whose Chinese loses or invents a field of the English (the plural endings may go), or repeats an
    English text."""
    problems, seen = [], set()
    for entry in catalogue.entries:
        if entry.en in seen:
            problems.append(f"{CATALOGUE}: the English {entry.en!r} has two pairs")
        seen.add(entry.en)
        en, zh = set(fields(entry.en)), set(fields(entry.zh))
        if en - PLURALS != zh - PLURALS or zh - en:
            problems.append(
                f"{CATALOGUE}: {entry.en!r} has the fields {sorted(en)}, "
                f"its Chinese {entry.zh!r} has {sorted(zh)}"
            )
    return problems


# ---------------------------------------------------------------------------------------------------------
# A figure's JSON: its texts, where they are
# ---------------------------------------------------------------------------------------------------------


def _matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    if pattern[0] == "**":
        return any(_matches(pattern[1:], path[i:]) for i in range(len(path) + 1))
    return bool(path) and pattern[0] in ("*", path[0]) and _matches(pattern[1:], path[1:])


_TEXT = tuple(tuple(p.split("/")) for p in TEXT)
_DATA = tuple(tuple(p.split("/")) for p in DATA)


def place(path: tuple[str, ...]) -> str:
    """``"text"``, ``"data"`` or ``"unknown"``: what the string at ``path`` of a figure's JSON is."""
    if any(_matches(p, path) for p in _TEXT):
        return "text"
    if any(_matches(p, path) for p in _DATA):
        return "data"
    return "unknown"


@dataclasses.dataclass
class Text:
    """One string of a figure's JSON: where it is, and a way to replace it."""

    path: tuple[str, ...]
    value: str
    container: dict | list
    key: str | int

    def set(self, value: str) -> None:
        self.container[self.key] = value


def strings(data: dict) -> Iterator[Text]:
    """Every string of a figure's JSON, with its path (a root that is a spec read as ``{"spec": root}``)."""
    root = {"spec": data} if "controls" in data and "spec" not in data else data

    def walk(node: object, path: tuple[str, ...]) -> Iterator[Text]:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            here = (*path, str(key))
            if isinstance(value, str):
                yield Text(here, value, node, key)
            elif isinstance(value, dict | list):
                yield from walk(value, here)

    yield from walk(root, ())


def texts(data: dict) -> Iterator[Text]:
    """The strings of a figure's JSON that a Chinese page shows in Chinese (see the module's docstring)."""
    root = {"spec": data} if "controls" in data and "spec" not in data else data
    controls = root.get("spec", {}).get("controls", [])
    for item in strings(data):
        if place(item.path) != "text" or not needs_translation(item.value):
            continue
        if item.path[:2] == ("spec", "controls") and item.path[3:4] == ("choices",):
            control = controls[int(item.path[2])]
            value = control["choices"][int(item.path[4])][0]
            if control["name"] in KEPT_CHOICES or (
                item.value == str(value) and control["name"] not in WORDED_CHOICES
            ):
                continue
        yield item


def figure_name(data: dict) -> str:
    spec = data.get("spec", data)
    return str(spec.get("figure", "?"))


# ---------------------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------------------


def _dump(data: object) -> str:
    """JSON as :func:`book.widgets.frontend.inline_json` writes it (compact, ``</`` escaped), but with the
    Chinese as it is, not escaped, so that a diff of a Chinese notebook reads."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def translate_html(html: str, catalogue: Catalogue, missing: list[str] | None = None) -> str:
    """``html`` with every figure's texts in Chinese, in the data of each of its root elements; a text with no
    Chinese stays English (and goes to ``missing``)."""
    pieces, done = [], 0  # the HTML up to ``done`` is in pieces
    for root in figure_roots(html):
        data, changed = root.data, False
        for item in texts(data):
            chinese = catalogue.lookup(item.value)
            if chinese is None:
                if missing is not None:
                    missing.append(item.value)
            elif chinese != item.value:
                item.set(chinese)
                changed = True
        if changed:
            pieces += [html[done : root.start], _dump(data)]
            done = root.end
    return "".join(pieces) + html[done:]


def translate_outputs(outputs: list, catalogue: Catalogue) -> list:
    """A code cell's outputs (changed in place, and returned) with the figures' texts in Chinese."""
    if not catalogue.entries:
        return outputs
    for output in outputs:
        data = output.get("data", {})
        if isinstance(data.get("text/html"), str) and "application/json" in data["text/html"]:
            data["text/html"] = translate_html(data["text/html"], catalogue)
    return outputs


# ---------------------------------------------------------------------------------------------------------
# The English figures, and what the catalogue lacks
# ---------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Figure:
    doc: str
    cell: str  # the code cell's id
    cls: str  # the root element's class
    data: dict

    @property
    def where(self) -> str:
        return f"the {figure_name(self.data)} ({self.cls}) of {self.doc}, cell {self.cell}"


def english_figures(root: Path = ROOT) -> list[Figure]:
    """Every interactive figure in the English notebooks' stored outputs, in the book's order."""
    found = []
    for doc in documents(root):
        path = english_path(doc, root)
        if path.suffix != ".ipynb":
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                html = output.get("data", {}).get("text/html")
                if isinstance(html, str):
                    read = [Figure(doc, cell.get("id", "?"), r.cls, r.data) for r in figure_roots(html)]
                    if len(read) != html.count(_JSON_SCRIPT):  # a figure's data this module cannot find
                        read.append(Figure(doc, cell.get("id", "?"), "", {}))
                    found += read
    return found


@dataclasses.dataclass
class Report:
    missing: dict[str, list[str]]  # English text -> the figures that show it
    left_over: list[str]  # English of pairs that no figure uses
    unknown: list[str]  # strings in no known place, as "figure: path"
    fields: list[str]  # pairs that lose or invent a field

    @property
    def ok(self) -> bool:
        return not (self.missing or self.left_over or self.unknown or self.fields)

    def lines(self) -> list[str]:
        out = []
        if self.missing:
            out.append(f"{len(self.missing)} figure texts have no Chinese; add to {CATALOGUE}:")
            for text, where in self.missing.items():
                out.append(f"  # {'; '.join(sorted(set(where)))}")
                out.append(f"  - en: {json.dumps(text, ensure_ascii=False)}\n    zh: ")
        if self.left_over:
            out.append(f"pairs of {CATALOGUE} that no figure uses (changed? removed?):")
            out += [f"  {json.dumps(t, ensure_ascii=False)}" for t in self.left_over]
        if self.unknown:
            out.append(
                "strings in a place scripts/zh_figures.py classes neither as text (TEXT) nor as data (DATA):"
            )
            out += [f"  {u}" for u in self.unknown]
        out += self.fields
        return out or [f"every figure text has its Chinese in {CATALOGUE}, and every pair is used"]


def report(root: Path = ROOT) -> Report:
    catalogue = Catalogue.load(root)
    missing: dict[str, list[str]] = {}
    unknown = []
    for figure in english_figures(root):
        if not figure.cls:
            unknown.append(
                f"{figure.doc}, cell {figure.cell}: a figure's JSON not in a root element "
                '<div class="mha-…"><script type="application/json">'
            )
            continue
        for item in strings(figure.data):
            if place(item.path) == "unknown":
                path = "/".join("*" if key.isdigit() else key for key in item.path)
                unknown.append(f"{figure.where}: {path}")
        for item in texts(figure.data):
            if catalogue.lookup(item.value) is None:
                missing.setdefault(item.value, []).append(f"{figure.where}: {'/'.join(item.path)}")
    left_over = [e.en for e in catalogue.entries if e.en not in catalogue.used]
    return Report(missing, left_over, sorted(set(unknown)), field_problems(catalogue))
