"""The static figures speak Chinese on the Chinese site: every picture drawn in Chinese, every word of it too.

The pictures of the Chinese notebooks are drawn by scripts/zh_plots.py, which runs each English chapter with
``BOOK_FIGURE_LANGUAGE=zh``: every text the figure code passes through ``book.figures._text.tr`` comes from
the catalogue zh/plots.yml. Each picture records the English picture it was drawn from and the texts it shows
(and those kept as they are: tokens, names). These tests read those records, so they take no kernel: a
picture behind its English one, a text with no Chinese, a pair of the catalogue that no picture shows fail
here, by name.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from book.figures import _text
from scripts import zh_checks, zh_plots
from tests.zh_site import CHINESE

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = zh_plots.chapters_with_figures()
REDRAW = "python -m scripts.zh_plots"
# What a text may hold in Latin letters without a word of Chinese: mathematics ($...$), code names (d_k,
# W_q, n_layers), units of memory (GiB), single letters (x, h, n).
_NOT_WORDS = re.compile(r"\$[^$]*\$|\w*_\w*|\b\d*(?:[KMGTP]i)?B\b|\b[KMGT]\b|\b[A-Za-z]\b")
_WORD = re.compile(r"[A-Za-z]{2,}")


def _records(path: Path) -> list[tuple[str, dict]]:
    """``(where, record)`` for each picture of a Chinese notebook."""
    cells = nbformat.read(ROOT / "zh" / path.relative_to(ROOT), as_version=4).cells
    found = []
    for index, cell in enumerate(cells):
        for k, i in enumerate(zh_plots.pictures(cell) if cell.cell_type == "code" else []):
            where = f"zh/{path.relative_to(ROOT)} cell {index} (id {cell.get('id')}), picture {k + 1}"
            found.append((where, cell.outputs[i].get("metadata", {}).get(zh_plots.RECORD, {})))
    return found


def english_words(text: str, kept: list[str]) -> list[str]:
    """The English words of a figure's text that has no Chinese, once its kept parts (tokens, names),
    mathematics, code names and units are set aside; ``[]`` for a text in Chinese."""
    if CHINESE.search(text):
        return []
    for name in sorted(kept, key=len, reverse=True):
        text = text.replace(name, " ")
    return _WORD.findall(_NOT_WORDS.sub(" ", text))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_picture_of_the_chinese_notebook_is_drawn_from_the_current_english(path):
    english = nbformat.read(path, as_version=4)
    chinese = nbformat.read(ROOT / "zh" / path.relative_to(ROOT), as_version=4)
    behind = zh_plots.in_step(english, chinese)
    assert not behind, (
        f"zh/{path.relative_to(ROOT)} shows English pictures, or pictures drawn from older ones: "
        + "; ".join(behind)
        + f". Draw them in Chinese: {REDRAW} {path.relative_to(ROOT)}"
    )


def test_every_text_of_a_chinese_picture_is_chinese():
    english = []
    for path in CHAPTERS:
        for where, record in _records(path):
            for text in record.get("texts", []) + record.get("html", []):  # html: a box's alt text, fallback
                if words := english_words(text, record.get("kept", [])):
                    english.append(f"{where}: {text!r} (English: {' '.join(words)})")
            for text in record.get("texts", []):  # drawn by matplotlib
                if any("$" in line and CHINESE.search(line) for line in text.split("\n")):
                    english.append(f"{where}: {text!r} (Chinese beside $mathematics$ shows as boxes)")
    assert not english, (
        f"{len(english)} texts of the Chinese pictures have no Chinese: add each English text's pair to "
        "zh/plots.yml (the figure's code passes it through book.figures._text.tr), or, for a token or a "
        f"name, mark it kept(...) in the figure's code; then {REDRAW}:\n" + "\n".join(english)
    )


def _shown() -> str:
    """Every text of every Chinese picture, without white space (a legend wraps its labels)."""
    texts = [t for p in CHAPTERS for _, r in _records(p) for t in r.get("texts", []) + r.get("html", [])]
    return "\n".join("".join(t.split()) for t in texts)


def test_every_pair_of_the_catalogue_is_chinese_and_keeps_its_fields():
    shown, problems, used = _shown(), [], 0
    pairs = _text.pairs(_text.CATALOGUE)
    for en, zh in pairs.items():
        fields = set(re.findall(r"\{(\w+)\}", en))
        if set(re.findall(r"\{(\w+)\}", zh)) != fields:
            problems.append(f"{en!r}: its Chinese {zh!r} must keep the fields {sorted(fields)}, no others")
        if en == zh:
            continue  # a name or formula, shown as it is
        if not CHINESE.search(zh):
            problems.append(f"{en!r}: its Chinese {zh!r} has no Chinese (a name? write it as is)")
        plain = [re.sub(r"\{\w+\}|\w*_\w*|\$[^$]*\$|\w+\(\.\.\.\)", "", t) for t in (en, zh)]
        problems += [f"{en!r}: {p}" for p in zh_checks.term_problems(*plain)]
        pattern = ".+?".join(re.escape("".join(part.split())) for part in re.split(r"\{\w+\}", zh))
        if re.search(pattern, shown):
            used += 1
    assert not problems, "zh/plots.yml:\n" + "\n".join(problems)
    # Some pairs serve texts no chapter draws today (a chunked layer's label): most must be shown.
    assert used >= 0.8 * len(pairs), f"only {used} of the {len(pairs)} pairs of zh/plots.yml are shown"


def test_the_words_of_a_picture_are_told_from_its_kept_names():
    assert english_words("头 1 (d_k=8)", []) == []
    assert english_words("head 1 (d_k=8)", []) == ["head"]
    assert english_words("the cat", ["the", "cat"]) == []
    assert english_words("$XW_{1}^Q$\n3 × (5, 4)", []) == []
    assert english_words("1.5 GiB", []) == [] and english_words("x: tokens (6, 16)", []) == ["tokens"]
