"""scripts/zh_book.py's reading of the glossary (the Chinese site it derives: tests/book/test_site_zh.py)."""

from __future__ import annotations

from scripts import zh_book


def test_the_glossary_is_its_first_tables_rows_by_column(tmp_path, monkeypatch):
    (tmp_path / "glossary.md").write_text(
        "# 术语\n\n| 中文 | English | 不用 | 说明 |\n| --- | --- | --- | --- |\n"
        "| 头 | head | | 一个 \\| 竖线 |\n| 键 | key; keys | 关键字 | `k` |\n\n"
        "| another | table |\n| - | - |\n| not | read |\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(zh_book, "ZH", tmp_path)
    assert zh_book.glossary() == [
        {"中文": "头", "English": "head", "不用": "", "说明": "一个 | 竖线"},
        {"中文": "键", "English": "key; keys", "不用": "关键字", "说明": "`k`"},
    ]


def test_the_books_glossary_has_its_columns_in_every_row():
    rows = zh_book.glossary()
    columns = {zh_book.GLOSSARY_ZH, zh_book.GLOSSARY_EN, zh_book.GLOSSARY_AVOID}
    assert len(rows) >= 40 and all(columns <= set(row) and row[zh_book.GLOSSARY_ZH] for row in rows)
