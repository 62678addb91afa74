"""scripts/texts.py: the short texts the build scripts write, in the reader's language, from zh/book.yml."""

from __future__ import annotations

import pytest

from scripts import texts


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A zh/book.yml of two pairs, one of them folded over two lines as YAML's ``>-`` writes it."""
    path = tmp_path / "book.yml"
    path.write_text(
        "glossary_after: teaching\ntexts:\n  - en: Title page\n    zh: 扉页\n"
        "  - en: >-\n      A long text,\n      folded.\n    zh: '  一段长文字。 '\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(texts, "BOOK", path)
    texts.chinese.cache_clear()
    yield path
    texts.chinese.cache_clear()


def test_the_pairs_are_keyed_by_their_english_with_single_spaces(book):
    assert texts.chinese() == {"Title page": "扉页", "A long text, folded.": "一段长文字。"}


def test_ui_gives_the_english_as_it_is_and_the_chinese_whatever_the_wrapping(book):
    assert texts.ui("Title  page\n") == "Title  page\n", "English: the text as the script wrote it"
    assert texts.ui("Title page", "zh") == "扉页"
    assert texts.ui("A long\n   text, folded.", "zh") == "一段长文字。"


def test_ui_names_a_text_that_has_no_chinese(book):
    with pytest.raises(KeyError, match=r"zh/book\.yml has no Chinese for 'Index': add the pair"):
        texts.ui("Index", "zh")


def test_the_books_own_pairs_hold_the_scripts_words():
    assert texts.ui("Solutions to the exercises", "zh") != "Solutions to the exercises"
    pairs = texts.chinese().items()
    assert all(english == " ".join(english.split()) and chinese for english, chinese in pairs)
