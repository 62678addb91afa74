"""The Chinese book (zh/) is kept in step with the English one: one source for code and outputs, records.

Fast: these read files only (the built Chinese site is checked in test_site_zh.py). scripts/zh_sync.py says
how a translation records the English it translates, scripts/zh_checks.py what it must keep; CONTRIBUTING.md
has the maintainer's side ("The Chinese edition").

* Every document of _toc.yml has its Chinese counterpart, and zh/ is what scripts/zh_sync.py would write: the
  code cells (source, outputs, tags), the cells' order and ids are the English notebook's, cell by cell.
* In every document, every unit (a Markdown cell, a page's section) translates the current
  English text: a unit not translated, or translated from an older English, fails, naming the chapter and
  cell.
* Every translated unit keeps its English's maths, numbers, code, links, references, labels, directives and
  headings; uses the glossary's terms and none of its rejected variants; and each document gives
  the English of a glossary term at its first use.
* The glossary page, and the short texts of zh/book.yml (configuration, table of contents, the build scripts'
  words) are complete, with no pair left over.
"""

from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import nbformat
import pytest

from scripts import texts, zh_book, zh_checks, zh_figures, zh_sync
from tests import ROOT

DOCUMENTS = zh_sync.documents()
NOTEBOOKS = [d for d in DOCUMENTS if zh_sync.english_path(d).suffix == ".ipynb"]


def test_every_document_has_its_chinese_counterpart_in_step_with_the_english():
    missing = [d for d in DOCUMENTS if not zh_sync.chinese_path(d).exists()]
    assert not missing, f"no Chinese document for {missing}: run python -m scripts.zh_sync"
    changed = [str(p.relative_to(ROOT)) for p in zh_sync.sync(write=False)]
    assert not changed, (
        f"{changed} are not what scripts/zh_sync.py writes from the English (code cells, outputs, "
        "untranslated copies): run python -m scripts.zh_sync (make notebooks runs it after the chapters)"
    )


@pytest.mark.parametrize("doc", NOTEBOOKS)
def test_code_cells_and_their_outputs_are_the_english_notebooks(doc):
    """Cell by cell, by id: the same cells in the same order; code cells identical (source, outputs, metadata
    and tags, execution count), but for the interactive figures' texts, translated with zh/figures.yml, and
    the static figures' pictures, drawn in Chinese from the current English ones (scripts/zh_plots.py);
    Markdown cells with the English cell's metadata, plus their record."""
    figures = zh_figures.Catalogue.load()
    en = nbformat.read(zh_sync.english_path(doc), as_version=4)
    zh = nbformat.read(zh_sync.chinese_path(doc), as_version=4)
    assert [c.get("id") for c in zh.cells] == [c.get("id") for c in en.cells], f"{doc}: cells or their order"
    assert zh.metadata == en.metadata, f"{doc}: the notebook's metadata differs"
    for index, (a, b) in enumerate(zip(en.cells, zh.cells, strict=True)):
        where = f"zh/{doc}.ipynb cell {index} (id {a.get('id')})"
        assert a.cell_type == b.cell_type, f"{where}: a {b.cell_type} cell, the English one is {a.cell_type}"
        if a.cell_type == "code":
            for key in ("source", "execution_count"):
                assert a.get(key) == b.get(key), f"{where}: its {key} differs from the English code cell"
            expected = copy.deepcopy(a)
            zh_figures.translate_outputs(expected.get("outputs", []), figures)
            zh_sync.keep_pictures(expected, b)  # the static figures' Chinese pictures (scripts/zh_plots.py)
            assert expected.get("outputs", []) == b.get("outputs", []), (
                f"{where}: its outputs differ from the English code cell's (figure texts translated with "
                "zh/figures.yml, pictures drawn from the current English ones by scripts/zh_plots.py)"
            )
            assert _without_alt(a.metadata) == _without_alt(b.metadata), (
                f"{where}: its metadata (tags) differs"
            )
            assert (zh_sync.alt_text(a) is None) == (zh_sync.alt_text(b) is None), f"{where}: its alt text"
        else:
            metadata = {k: v for k, v in b.metadata.items() if k != zh_sync.RECORD}
            assert metadata == a.metadata, f"{where}: its metadata (tags) differs from the English cell's"
            assert zh_sync.RECORD in b.metadata, f"{where}: no translation record"


def _without_alt(metadata: dict) -> dict:
    """A code cell's metadata less its translation record and its picture's alt text (a unit of its own)."""
    out = {k: v for k, v in metadata.items() if k != zh_sync.RECORD}
    if "alt" in out.get("mystnb", {}).get("image", {}):
        image = {k: v for k, v in out["mystnb"]["image"].items() if k != "alt"}
        out["mystnb"] = {**out["mystnb"], "image": image}
    return out


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_every_unit_translates_the_current_english(doc):
    problems = [u.advice for u in zh_sync.units(doc) if u.state != "translated"]
    assert not problems, f"{doc}: {len(problems)} units\n" + "\n".join(problems)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_translations_keep_maths_numbers_code_references_and_the_glossary(doc):
    problems = []
    for unit in zh_sync.units(doc):
        if unit.state == "translated":
            found = zh_checks.keeps(unit.en, unit.zh, unit.allowed)
            found += zh_checks.term_problems(unit.en, unit.zh, unit.allowed)
            problems += [f"{unit.where}: {p}" for p in found]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_each_document_gives_a_terms_english_at_its_first_use(doc):
    problems = zh_checks.first_use_problems(zh_sync.units(doc))
    assert not problems, "\n".join(problems)


def test_the_glossary_fixes_at_least_40_terms_once_each():
    text = (ROOT / "zh" / "glossary.md").read_text(encoding="utf-8")
    title = next(line for line in text.splitlines() if line.startswith("# "))
    assert "术语" in title, title
    terms = zh_checks.glossary()
    assert len(terms) >= 40, f"the glossary has {len(terms)} terms"
    chinese = [t.zh for t in terms]
    assert len(set(chinese)) == len(chinese), "a Chinese term appears twice"
    forms = [f.lower() for t in terms for f in t.en]
    assert len(set(forms)) == len(forms), "an English term appears twice"
    for term in terms:
        assert term.en and all(re.search(r"[A-Za-z]", f) for f in term.en), f"{term.zh}: no English"
        assert not set(term.avoid) & set(chinese), f"{term.zh}: a rejected variant is another term"
        assert all(term.pattern.search(f.rstrip("*")) for f in term.en), f"{term.zh}: a form matches nothing"
    glossed = [t for t in terms if t.glossed]
    assert len(glossed) >= 40, "the terms whose English is given at first use"
    assert not zh_checks.broken_lines(text), "a line break between Chinese characters shows as a space"


def _ui_literals() -> set[str]:
    """The English texts that scripts/*.py pass to ``ui``: a literal, or a module's string constant."""
    found = set()
    for path in (ROOT / "scripts").glob("*.py"):
        if path.name == "zh_book.py":  # it passes the configuration's texts to ui (test below)
            continue
        tree = ast.parse(path.read_text())
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ui" and node.args):
                continue
            first = node.args[0]
            text = first.value if isinstance(first, ast.Constant) else constants.get(getattr(first, "id", ""))
            assert isinstance(text, str), (
                f"{path.name}: ui() of {ast.unparse(first)}, not a text this test can read"
            )
            found.add(" ".join(text.split()))
    return found


def test_the_books_short_texts_are_translated_with_no_pair_left_over():
    """zh/book.yml: the configuration's and the table of contents' texts, the theme's, the build scripts'."""
    missing: list[str] = []
    config, toc = zh_book.site_config("zh", missing=missing), zh_book.site_toc("zh", missing=missing)
    used = _ui_literals()
    missing += sorted(t for t in used if t not in texts.chinese())
    assert not missing, f"zh/book.yml has no Chinese for {missing}"
    english = {" ".join(str(x).split()) for x in _english_texts()}
    left_over = sorted(set(texts.chinese()) - used - english)
    assert not left_over, f"pairs of zh/book.yml whose English nothing uses (changed? removed?): {left_over}"
    assert config["title"] == texts.ui(zh_book.site_config("en")["title"], "zh")
    assert config["sphinx"]["config"]["language"] == "zh_CN"
    assert any(c["file"] == "glossary" for part in toc["parts"] for c in part["chapters"])


def _english_texts() -> list[str]:
    """The English texts that the Chinese configuration and table of contents translate."""
    config, toc = zh_book.site_config("en"), zh_book.site_toc("en")
    return [
        config["title"],
        config["author"],
        config["description"],
        config["html"]["extra_footer"],
        *[part["caption"] for part in toc["parts"] if "caption" in part],
        *zh_book.THEME_TEXTS.values(),
        *zh_book.THEME_CONTEXT.values(),
        *[message for messages in zh_book.THEME_MESSAGES.values() for message in messages],
        zh_book.SEARCH_BAR,
    ]


# ---------------------------------------------------------------------------------------------------------
# The records, on a small book made here
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def book(tmp_path):
    """A two-document book: a page and a notebook (one code cell, two Markdown cells)."""
    (tmp_path / "_toc.yml").write_text("root: intro\nparts:\n- chapters:\n  - file: ch/one\n")
    (tmp_path / "intro.md").write_text("# Title\n\nOne paragraph.\n\n(sec)=\n## Part\n\nTwo, with 2 heads.\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# One\n\nThe heads attend.", id="m1"),
        nbformat.v4.new_code_cell(
            "print(1)",
            id="c1",
            outputs=[nbformat.v4.new_output("stream", text="1\n")],
        ),
        nbformat.v4.new_markdown_cell("It printed 1.", id="m2"),
    ]
    (tmp_path / "ch").mkdir()
    nbformat.write(nb, tmp_path / "ch" / "one.ipynb")
    zh_sync.sync(tmp_path)
    return tmp_path


def _edit_cell(path: Path, cell_id: str, source: str) -> None:
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if c.get("id") == cell_id).source = source
    nbformat.write(nb, path)


def test_untranslated_units_are_copies_that_follow_the_english(book):
    states = {u.key: u.state for u in zh_sync.units("ch/one", book)}
    assert states == {"m1": "untranslated", "m2": "untranslated"}
    assert [u.state for u in zh_sync.units("intro", book)] == ["untranslated", "untranslated"]
    assert "(sec)=\n## Part" in (book / "zh" / "intro.md").read_text()  # the label stays with its heading
    _edit_cell(book / "ch" / "one.ipynb", "m2", "It printed 1, once.")
    assert zh_sync.sync(book) == [book / "zh" / "ch" / "one.ipynb"]
    unit = next(u for u in zh_sync.units("ch/one", book) if u.key == "m2")
    assert unit.zh == "It printed 1, once." and unit.state == "untranslated"
    assert zh_sync.sync(book) == []


def test_a_translation_is_kept_recorded_and_reported_stale_when_its_english_changes(book):
    zh_nb = book / "zh" / "ch" / "one.ipynb"
    _edit_cell(zh_nb, "m1", "# 一\n\n各个头（head）在关注。")
    assert zh_sync.units("ch/one", book)[0].state == "started"
    assert zh_sync.sync(book) == [], "a started translation must not be overwritten"
    assert zh_sync.accept("ch/one", root=book)  # no names: the started units
    assert [u.state for u in zh_sync.units("ch/one", book)] == ["translated", "untranslated"]
    # the English changes: code, output and a translated cell
    en = nbformat.read(book / "ch" / "one.ipynb", as_version=4)
    en.cells[1].source, en.cells[1].outputs[0].text = "print(2)", "2\n"
    en.cells[0].source = "# One\n\nThe two heads attend."
    nbformat.write(en, book / "ch" / "one.ipynb")
    zh_sync.sync(book)
    zh = nbformat.read(zh_nb, as_version=4)
    assert zh.cells[1].source == "print(2)" and zh.cells[1].outputs[0].text == "2\n"
    unit = zh_sync.units("ch/one", book)[0]
    assert unit.state == "stale" and unit.zh.startswith("# 一"), "the translation is kept, reported stale"
    assert "--accept ch/one m1" in unit.advice and "older English" in unit.advice
    zh_sync.accept("ch/one", ["m1"], root=book)
    assert zh_sync.units("ch/one", book)[0].state == "translated"
    with pytest.raises(SystemExit, match="still the English copy"):
        zh_sync.accept("ch/one", ["m2"], root=book)
    # the English cell goes: its translation goes with it, and the sync says so
    en.cells = en.cells[1:]
    nbformat.write(en, book / "ch" / "one.ipynb")
    dropped: list[str] = []
    zh_sync.sync(book, dropped=dropped)
    assert dropped == ["zh/ch/one.ipynb: # 一 各个头（head）在关注。"], dropped


def test_a_pictures_alt_text_is_a_unit_of_its_code_cell(book):
    en_path, zh_path = book / "ch" / "one.ipynb", book / "zh" / "ch" / "one.ipynb"
    en = nbformat.read(en_path, as_version=4)
    en.cells[1].metadata["mystnb"] = {"image": {"alt": "A picture of the heads, 1 of them."}}
    nbformat.write(en, en_path)
    zh_sync.sync(book)
    unit = next(u for u in zh_sync.units("ch/one", book) if u.key == "c1/alt")
    assert unit.state == "untranslated" and unit.zh == "A picture of the heads, 1 of them."
    zh = nbformat.read(zh_path, as_version=4)
    zh.cells[1].metadata["mystnb"]["image"]["alt"] = "一张各个头的图，共 1 个。"
    nbformat.write(zh, zh_path)
    zh_sync.accept("ch/one", ["c1/alt"], root=book)
    en.cells[1].source = "print(3)"  # the code changes, the alt text stays translated
    nbformat.write(en, en_path)
    zh_sync.sync(book)
    zh = nbformat.read(zh_path, as_version=4)
    assert zh.cells[1].source == "print(3)" and zh_sync.alt_text(zh.cells[1]) == "一张各个头的图，共 1 个。"
    assert next(u for u in zh_sync.units("ch/one", book) if u.key == "c1/alt").state == "translated"
    en.cells[1].metadata["mystnb"]["image"]["alt"] = "A picture of the heads, 2 of them."
    nbformat.write(en, en_path)
    zh_sync.sync(book)
    unit = next(u for u in zh_sync.units("ch/one", book) if u.key == "c1/alt")
    assert unit.state == "stale" and "alt text" in unit.advice


def test_a_pages_sections_follow_an_inserted_section(book):
    page = book / "zh" / "intro.md"
    sections = zh_sync.read_page(page.read_text())
    sections[1] = (sections[1][0], "(sec)=\n## 部分\n\n两个，2 个头。")
    page.write_text(zh_sync.write_page(sections))
    zh_sync.accept("intro", root=book)
    english = (book / "intro.md").read_text().replace("(sec)=", "## New\n\nNew text.\n\n(sec)=")
    (book / "intro.md").write_text(english)
    zh_sync.sync(book)
    states = [(u.state, u.zh.split("\n")[0]) for u in zh_sync.units("intro", book)]
    assert states == [("untranslated", "# Title"), ("untranslated", "## New"), ("translated", "(sec)=")]


def test_the_checks_name_what_a_translation_lost():
    english = "Each of the $h$ heads weighs 1,024 keys (see {ref}`the scaling <the-math-scaling>`)."
    good = "$h$ 个头中的每一个都对 1 024 个键加权（见 {ref}`缩放 <the-math-scaling>`）。"
    assert zh_checks.keeps(english, good) == []
    assert zh_checks.term_problems(english, good) == []
    bad = "每个头对 1025 个关键字加权（见 {ref}`缩放 <the-math-scale>`）。"
    lost = "\n".join(zh_checks.keeps(english, bad) + zh_checks.term_problems(english, bad))
    for expected in ("math", "'1024'", "'1025'", "the-math-scaling", "'关键字' is a variant"):
        assert expected in lost, (expected, lost)
    assert zh_checks.keeps("Plain English words here.", "Plain English words here.") == [
        "no Chinese in the translation (the English has prose)"
    ]
    assert zh_checks.term_problems(english, bad.replace("关键字", "键"), {"term:key"}) == []
    assert zh_checks.broken_lines("第一行在这里\n接着下一行。\n\n- 列表\n- 另一项") == [
        "第一行在这里 / 接着下一行。"
    ]


def test_messages_name_a_cell_as_a_cell_whatever_its_id(book):
    """Jupyter's ids can be all digits (the_code has 74561091): such a cell is still a cell, not a section."""
    en = nbformat.read(book / "ch" / "one.ipynb", as_version=4)
    en.cells[0].id = "74561091"
    nbformat.write(en, book / "ch" / "one.ipynb")
    zh_sync.sync(book)
    cell = zh_sync.units("ch/one", book)[0]
    assert cell.key == "74561091" and cell.where.startswith("zh/ch/one.ipynb cell 0 (id 74561091")
    assert zh_sync.units("intro", book)[0].where.startswith("zh/intro.md section 1")
    assert "python -m scripts.zh_sync --accept ch/one 74561091" in cell.advice
