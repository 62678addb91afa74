"""scripts/documents.py: the book's documents in _toc.yml's order, and the one English source of each."""

from __future__ import annotations

import pytest

from scripts import documents


def _book(tmp_path):
    (tmp_path / "_toc.yml").write_text(
        "root: intro\nparts:\n- caption: One\n  chapters:\n  - file: ch/b\n  - file: ch/a\n"
        "- chapters:\n  - file: notes\n"
    )
    (tmp_path / "ch").mkdir()
    for name in ("intro.md", "ch/b.ipynb", "ch/a.ipynb", "notes.md"):
        (tmp_path / name).write_text("")
    return tmp_path


def test_documents_are_the_root_then_every_part_in_order(tmp_path):
    assert documents.documents(_book(tmp_path)) == ["intro", "ch/b", "ch/a", "notes"]


def test_the_books_own_documents_start_at_its_root_and_each_has_its_source():
    found = documents.documents()
    assert found[0] == "intro" and "chapters/the_math" in found and len(set(found)) == len(found)
    assert {documents.english_path(d).suffix for d in found} == {".md", ".ipynb"}


def test_a_document_has_exactly_one_english_source(tmp_path):
    book = _book(tmp_path)
    assert documents.english_path("ch/b", book) == book / "ch" / "b.ipynb"
    assert documents.english_path("intro", book) == book / "intro.md"
    with pytest.raises(FileNotFoundError, match="missing: expected one English source"):
        documents.english_path("missing", book)
    (book / "notes.ipynb").write_text("")
    with pytest.raises(FileNotFoundError, match=r"notes\.ipynb or notes\.md, found"):
        documents.english_path("notes", book)
