"""The words of the static figures, in the language of the edition being drawn: English, or Chinese for zh/.

Every word a static (matplotlib) figure shows is written once, in English, in the code that draws it (here in
``book``, or a chapter's code cell: a title it passes), and goes through :func:`tr`. In the English book
``tr`` only fills the text's ``{fields}``. With the environment variable ``BOOK_FIGURE_LANGUAGE=zh``, which
``python -m scripts.zh_plots`` sets in the kernel that draws the Chinese notebooks' figures, ``tr`` looks the
English text up in the catalogue ``zh/plots.yml`` (English -> Chinese pairs, as gettext keeps them, one pair
per text whichever figure shows it), then in the interactive figures' ``zh/figures.yml`` (a text both kinds of
figure show, a head's kind, a prompt's description, is translated once, there), and fills the Chinese; a text
with no pair stays English, and the test names it. The chapters' code cells are the same in both editions.

What stays as it is, a token of the (English) models' input, a model's name, a code name such as ``d_k``, is
marked with :func:`kept`, so that tests/book/test_plot_texts.py can tell it from a text left untranslated.
In the Chinese mode, :func:`use_language` also picks the CJK font (Noto Sans CJK SC, after DejaVu Sans for
Latin letters and digits) and makes each figure's display record the texts it shows and those it keeps (the
output's metadata ``figure_texts``, which the test reads).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

LANGUAGE = "BOOK_FIGURE_LANGUAGE"  # the environment variable: "zh" draws the figures' texts in Chinese
CATALOGUE = Path(__file__).resolve().parents[2] / "zh" / "plots.yml"  # the static figures' own pairs
SHARED = CATALOGUE.with_name("figures.yml")  # the interactive figures' pairs, which a static text may share
CJK_FONT = "Noto Sans CJK SC"  # Debian's fonts-noto-cjk, which CI installs (.ci/run)
_KEPT: set[str] = set()  # texts shown as they are (tokens, names), recorded in the Chinese mode
_FIELD = re.compile(r"\{(\w+)\}")


def language() -> str:
    """``"zh"`` when the Chinese figures are being drawn, else ``"en"``."""
    return "zh" if os.environ.get(LANGUAGE, "").strip().lower() == "zh" else "en"


def pairs(path: Path) -> dict[str, str]:
    """The pairs of one catalogue: English text -> Chinese."""
    import yaml  # only the Chinese mode reads the catalogues (in the repository, never on Colab)

    return {entry["en"]: entry["zh"] for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["texts"]}


@functools.cache
def catalogue() -> dict[str, str]:
    """The pairs a static figure's text is looked up in: ``zh/plots.yml``'s, and ``zh/figures.yml``'s for a
    text it does not hold."""
    return {**pairs(SHARED), **pairs(CATALOGUE)}


@functools.cache
def _patterns() -> list[tuple[re.Pattern, str]]:
    """The catalogue's texts with fields, as patterns that match a text Python filled (most literal first)."""
    found = []
    for en, zh in catalogue().items():
        if _FIELD.search(en):
            parts, named, regex = _FIELD.split(en), set(), ""  # literal, field, literal, ...
            for i, part in enumerate(parts):
                if i % 2 == 0:
                    regex += re.escape(part)
                else:  # a field again is the same value again
                    regex += f"(?P={part})" if part in named else f"(?P<{part}>.+?)"
                    named.add(part)
            found.append((len(_FIELD.sub("", en)), re.compile(regex + r"\Z", re.S), zh))
    return [(pattern, zh) for _, pattern, zh in sorted(found, key=lambda f: -f[0])]


def translate(text: str) -> str:
    """The Chinese of an English text as the figure shows it: its pair, or a pair whose fields match any
    value (``"layer {layer}"`` translates ``"layer 3"``); the text itself if it has no pair."""
    pairs = catalogue()
    if text in pairs:
        return pairs[text]
    for pattern, zh in _patterns():
        if found := pattern.match(text):
            return _FIELD.sub(lambda m: found.group(m.group(1)), zh)
    return text


def tr(text: str, **fields: object) -> str:
    """``text`` in the current language, its ``{name}`` fields filled from ``fields``.

    The English ``text`` is the key (written as the English figure shows it, fields unfilled, or filled by
    the chapter's code); only its fields are formatted, so a ``{`` of mathtext elsewhere stays as it is.
    """
    if language() == "zh":
        use_language()
        chinese = translate(text)
        if chinese == text and (text in catalogue() or any(p.match(text) for p, _ in _patterns())):
            _KEPT.add(_fill(text, fields))  # a name the catalogue says to show as it is
        text = chinese
    return _fill(text, fields)


def _fill(text: str, fields: dict) -> str:
    return _FIELD.sub(lambda m: str(fields[m.group(1)]) if m.group(1) in fields else m.group(0), text)


def kept(text: str) -> str:
    """``text`` shown as it is in every edition (a token, a model's name): returned unchanged, and in the
    Chinese mode recorded as kept on purpose."""
    if language() == "zh":
        use_language()
        _KEPT.add(text)
    return text


@functools.cache
def use_language() -> None:
    """In the Chinese mode, once: the CJK font, and each figure's display recording its texts."""
    if language() != "zh":
        return
    import matplotlib
    from matplotlib import font_manager

    known = font_manager.fontManager
    if CJK_FONT not in {font.name for font in known.ttflist}:  # a font list cached before the font came
        for path in font_manager.findSystemFonts():
            if Path(path).name.startswith("NotoSansCJK"):
                known.addfont(path)
        if CJK_FONT not in {font.name for font in known.ttflist}:
            raise RuntimeError(
                f"the Chinese figures need the font {CJK_FONT}: install Debian's fonts-noto-cjk"
            )
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", CJK_FONT]  # named: a generic family has no fallback
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    import matplotlib.pyplot
    from matplotlib.figure import Figure

    formatter = shell.display_formatter.formatters["image/png"]
    try:
        draw = formatter.lookup_by_type(Figure)
    except KeyError:  # the inline backend registers its PNG formatter when it is loaded, on a first figure
        matplotlib.pyplot._get_backend_mod()
        draw = formatter.lookup_by_type(Figure)

    def png(fig: Figure):
        data = draw(fig)  # drawing creates the tick labels
        return data, {"figure_texts": figure_texts(fig)}

    formatter.for_type(Figure, png)


def figure_texts(fig) -> dict[str, list[str]]:
    """The texts ``fig`` shows (titles, labels, tick labels, legends, annotations), and those of them kept."""
    from matplotlib.text import Text

    texts = []
    for artist in fig.findobj(Text):
        text = artist.get_text()
        if artist.get_visible() and text.strip() and text not in texts:
            texts.append(text)
    kept_here = sorted(t for t in _KEPT if any(t in text for text in texts))
    return {"texts": texts, "kept": kept_here}
