"""The book's short texts in the reader's language: :func:`ui`, read from ``zh/book.yml``.

The Chinese site's configuration (title, author, description, footer, part captions: scripts/zh_book.py) and
the words the build scripts write themselves into the decks (scripts/tag_slides.py, build_slides.py), the PDFs
(build_pdf.py) and the student edition (student_edition.py) are short English texts, each with its Chinese in
``zh/book.yml``'s ``texts``: a list of pairs, ``en:`` the English exactly as the source or script has it (its
whitespace runs count as one space) and ``zh:`` its Chinese. A script passes the English to ``ui`` with the
language it writes in; an English text with no pair fails loudly, and tests/book/test_translation.py names
every such text, and every pair nothing uses.
"""

from __future__ import annotations

import functools

import yaml

from scripts import ROOT

BOOK = ROOT / "zh" / "book.yml"  # the Chinese book's own short texts


@functools.cache
def chinese() -> dict[str, str]:
    """English text (whitespace runs as single spaces) -> its Chinese, from ``zh/book.yml``."""
    data = yaml.safe_load(BOOK.read_text(encoding="utf-8"))
    return {" ".join(t["en"].split()): t["zh"].strip() for t in data["texts"]}


def ui(text: str, lang: str = "en") -> str:
    """``text`` in ``lang`` (``"en"``: as it is). KeyError if ``zh/book.yml`` has no Chinese for it."""
    if lang == "en":
        return text
    try:
        return chinese()[" ".join(text.split())]
    except KeyError:
        raise KeyError(f"zh/book.yml has no Chinese for {text!r}: add the pair to its texts") from None
