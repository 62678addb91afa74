"""book.figures._text: a figure's words in the book's language, from one catalogue (zh/plots.yml)."""

from book.figures import _text


def test_a_text_is_translated_with_its_fields_and_stays_english_without_a_pair(monkeypatch):
    monkeypatch.setattr(_text, "catalogue", lambda: {"head {head}": "头 {head}", "mask": "掩码"})
    monkeypatch.setattr(_text, "_patterns", _text._patterns.__wrapped__)
    monkeypatch.setattr(_text, "use_language", lambda: None)
    assert _text.tr("head {head}", head=2) == "head 2", "the English book: the fields filled, nothing else"
    monkeypatch.setenv(_text.LANGUAGE, "zh")
    assert _text.tr("head {head}", head=2) == "头 2"
    assert _text.tr("head 3") == "头 3", "a text Python filled matches its pair's pattern"
    assert _text.tr("masked") == "masked", "a text with no pair stays English (and the test above names it)"
    assert _text.tr("$W^{DQ}$ mask") == "$W^{DQ}$ mask", "a brace of mathematics is no field"
