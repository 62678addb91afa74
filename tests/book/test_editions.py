"""The other editions of the book: the student edition (`make book-students`), the PDF (`make pdf`), Binder.

The student edition is built once per run into a temporary folder (scripts/student_edition.py; about 10 s,
since the site never executes a notebook), so these tests never read a stale build. Its PDF is printed from
three of its pages (the home page and two chapters): the printer is the book's (`make book-students` prints
every page the same way), and every page it would print is read for solutions in the site itself; three
pages show the title page, one numbering across pages, the outline, equations and the Chinese terms.
Nothing of it may hold a solution: not its pages, its search index, the sources behind its download
buttons, its notebook set or its PDF, and no launch button leads to the repository's notebooks.
The PDF must have a title page and one page numbering through the book. The set-up cell that the copies
get (and that the committed chapters are to get) installs `mha` at the book's version.
"""

from __future__ import annotations

import os
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
import tomllib
import yaml

from scripts import build_pdf, build_slides, chapter_stats, student_edition
from tests import ROOT

CHAPTERS = build_slides.chapters()
FULL_SITE = Path(os.environ.get("MHA_SITE", ROOT / "_build" / "html"))  # as in test_site.py


@pytest.fixture(scope="module")
def students(tmp_path_factory) -> Path:
    return student_edition.build(tmp_path_factory.mktemp("students"))


STUDENT_PDF_PAGES = ["intro", "chapters/the_math", "chapters/step_by_step"]


@pytest.fixture(scope="module")
def student_pdf(students, browser) -> tuple[Path, dict]:
    out = students.parent / student_edition.PDF_NAME
    return out, build_pdf.print_pages(students, STUDENT_PDF_PAGES, out, edition="students", browser=browser)


def all_solution_sentences() -> dict[str, list[str]]:
    return {chapter.stem: solution_sentences(chapter) for chapter in CHAPTERS}


def pdf_text(path: Path) -> list[str]:
    from pypdf import PdfReader

    # NFKC: Chromium's PDF maps some CJK glyphs to look-alike code points, and ligatures (fi) to one glyph
    return [" ".join(unicodedata.normalize("NFKC", p.extract_text()).split()) for p in PdfReader(path).pages]


class _Page(HTMLParser):
    """The visible text of a page (scripts and styles left out) and the classes of its elements."""

    def __init__(self):
        super().__init__()
        self.text, self.classes, self._skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.classes += (dict(attrs).get("class") or "").split()
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def read(path: Path) -> tuple[str, list[str]]:
    page = _Page()
    page.feed(path.read_text())
    return " ".join(" ".join(page.text).split()), page.classes


def _directives(source: str, name: str) -> list[str]:
    return [m.group(2) for m in re.finditer(rf"^(`{{3,}})\{{{name}\}}.*?\n(.*?)^\1\s*$", source, re.M | re.S)]


def solution_sentences(chapter: Path) -> list[str]:
    """From each solution, its longest run of plain words (no math, roles, code, quotes or emphasis)."""
    sentences = []
    for cell in nbformat.read(chapter, as_version=4).cells:
        if cell.cell_type != "markdown":
            continue
        for body in _directives(cell.source, "solution"):
            body = re.sub(r"^(`{3,}).*?^\1\s*$", "|", body, flags=re.M | re.S)  # code blocks
            body = re.sub(r"^:[\w-]+:.*$|\n\s*\n", "|", body, flags=re.M)  # options, paragraph breaks
            body = re.sub(r"\$\$.*?\$\$|\$[^$]*\$|\{[\w:]+\}`[^`]*`|`[^`]*`", "|", body, flags=re.S)
            runs = [" ".join(run.split()) for run in re.split(r"[|*_'\"\[\]<>\\]|--", body)]
            runs = [run.strip(" ,;:.") for run in runs if len(run.split()) >= 5]
            if runs:
                sentences.append(" ".join(max(runs, key=len).split()[:12]))
    return sentences


def exercise_count(chapter: Path) -> int:
    nb = nbformat.read(chapter, as_version=4)
    return sum(len(_directives(c.source, "exercise")) for c in nb.cells if c.cell_type == "markdown")


@pytest.mark.site
@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_student_edition_keeps_the_exercises_and_leaves_out_the_solutions(chapter, students):
    text, classes = read(students / "chapters" / f"{chapter.stem}.html")
    exercises = exercise_count(chapter)
    assert exercises >= 3, f"{chapter.stem}: the test found only {exercises} exercises in the notebook"
    assert classes.count("exercise") == exercises, (
        f"{chapter.stem}: exercises missing from the student edition"
    )
    assert "solution" not in classes
    assert "Check of the solution" not in text
    sentences = solution_sentences(chapter)
    assert len(sentences) >= 2, f"{chapter.stem}: found no plain sentence in the solutions to look for"
    for sentence in sentences:
        assert sentence not in text, f"{chapter.stem}: the student edition shows a solution: {sentence!r}"
    if (
        FULL_SITE / "chapters" / f"{chapter.stem}.html"
    ).exists():  # the sentences are real: the book has them
        full_text, _ = read(FULL_SITE / "chapters" / f"{chapter.stem}.html")
        found = [s for s in sentences if s in full_text]
        assert found, f"{chapter.stem}: no solution sentence found in the full book either: {sentences}"


@pytest.mark.site
def test_student_edition_says_what_it_is(students):
    text, _ = read(students / "intro.html")
    assert "(student edition)" in text


@pytest.mark.site
def test_nothing_of_the_student_edition_holds_a_solution(students):
    """Pages, search index, downloadable sources (.ipynb, .md) and the notebook set: no solution, no check."""
    sentences = [s for found in all_solution_sentences().values() for s in found]
    files = [p for p in students.rglob("*") if p.suffix in (".html", ".ipynb", ".md", ".js", ".txt")]
    files = [p for p in files if "_static" not in p.parts]
    notebooks = sorted((students.parent / "notebooks").glob("*.ipynb"))
    assert {p.stem for p in notebooks} == {p.stem for p in CHAPTERS}, "the notebook set is incomplete"
    sources = sorted((students / "_sources" / "chapters").glob("*.ipynb"))
    assert {p.stem for p in sources} == {p.stem for p in CHAPTERS}, "the download buttons' notebooks"
    for path in [*files, *notebooks]:
        raw = path.read_text(errors="replace")
        text = " ".join(raw.replace("\\n", " ").replace('\\"', '"').split())
        if path.suffix == ".html":
            text = read(path)[0]
        for marker in ("{solution}", "Check of the solution", "Solution to"):
            assert marker not in raw, f"{path.relative_to(students.parent)}: {marker!r}"
        for sentence in sentences:
            assert sentence not in text, f"{path.relative_to(students.parent)} holds a solution: {sentence!r}"
        for launcher in ("colab.research.google.com", "mybinder.org", "/edit/"):
            assert launcher not in raw, f"{path.relative_to(students.parent)}: a button leads to {launcher}"


@pytest.mark.site
def test_student_notebooks_keep_the_exercises_and_install_this_version(students):
    for chapter in CHAPTERS:
        nb = nbformat.read(students.parent / "notebooks" / chapter.name, as_version=4)
        text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        assert len(_directives(text, "exercise")) == exercise_count(chapter), chapter.stem
        first = next(c for c in nb.cells if c.cell_type == "code").source
        assert first.startswith(student_edition.setup_block()), chapter.stem


@pytest.mark.site
def test_student_pdf_has_a_title_page_one_numbering_and_no_solution(student_pdf):
    from pypdf import PdfReader

    path, result = student_pdf
    pages = pdf_text(path)
    assert result["pages"] == len(pages) >= 8 and result["solutions"] == 0
    titles = ["Multi-Head Attention, interactively", "2. The math", "3. Step by step"]
    assert result["titles"] == titles, result["titles"]
    outline = [item.title for item in PdfReader(path).outline]
    assert outline == ["Title page", *titles], outline
    title = pages[0]
    for fact in ("Multi-Head Attention, interactively", "authors", f"Version {VERSION}", "student edition",
                 "CC BY 4.0", "MIT"):  # fmt: skip
        assert fact in title, f"the title page lacks {fact!r}: {title[:300]}"
    assert re.search(r"\b\d{1,2} \w+ 20\d\d\b", title), "the title page has no date"
    for number, text in enumerate(pages[1:], start=2):
        # the stamped number is the last text of a sheet: one numbering, no "2 / 21" per chapter
        assert text.endswith(f" {number} / {len(pages)}"), f"sheet {number} ends {text[-40:]!r}"
    everything = " ".join(pages)
    assert "多头注意力" in everything, "the Chinese terms are missing (fonts-noto-cjk)"
    assert "Exercise 2.1" in everything and "Solution to" not in everything
    assert "Contents" in everything and "Launch" not in everything  # the navigation is hidden
    for chapter, sentences in all_solution_sentences().items():
        for sentence in sentences:
            assert sentence not in everything, f"the student PDF holds a solution of {chapter}: {sentence!r}"


@pytest.mark.site
@pytest.mark.skipif(not (FULL_SITE / "chapters" / "the_math.html").exists(), reason="the book is not built")
def test_full_pdf_gathers_the_solutions_after_the_chapter(tmp_path, browser):
    # (the shortest chapter to print: the student PDF prints the_math)
    out = tmp_path / "why_multiple_heads.pdf"
    page = "chapters/why_multiple_heads"
    result = build_pdf.print_pages(FULL_SITE, [page], out, browser=browser, edition="full")
    text = " ".join(pdf_text(out))
    chapter = next(p for p in CHAPTERS if p.stem == "why_multiple_heads")
    number = CHAPTERS.index(chapter) + 1  # the site numbers the chapters of _toc.yml, and their exercises
    assert result["solutions"] == exercise_count(chapter) and "Solutions to the exercises" in text
    last_exercise = max(text.find(f"Exercise {number}.{i}") for i in range(1, result["solutions"] + 1))
    assert text.find("Solution to") > last_exercise, "a solution is printed beside its exercise"
    assert text.find("Solutions to the exercises") < text.find("Solution to")


def test_pinned_setup_cell_installs_this_version_and_turns_on_colabs_widget_manager():
    block = student_edition.setup_block()
    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
    assert f'    source = "git+{url}@v{VERSION}"\n' in block
    assert '"mha[pretrained] @ {source}" "mha-book @ {source}#subdirectory=book"' in block
    assert "output.enable_custom_widget_manager()" in block and "except ImportError" in block
    for chapter in CHAPTERS:
        first = next(c for c in nbformat.read(chapter, as_version=4).cells if c.cell_type == "code").source
        pinned = student_edition.pinned_setup(first, tag="v9.9.9")
        assert f'source = "git+{url}@v9.9.9"' in pinned and f"@v{VERSION}" not in pinned, chapter.stem
        assert pinned.endswith(first[len(block) :]), f"{chapter.stem}: the chapter's own lines must be kept"
    with pytest.raises(ValueError, match="source: not a chapter's set-up cell"):
        student_edition.pinned_setup("import mha")


def test_binder_takes_the_cpu_wheel_of_the_pinned_torch():
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pins = dict(line.split("==", 1) for line in lines if "==" in line)  # a pin may carry a note after "#"
    binder = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in binder
    assert f"torch=={pins['torch']}+cpu" in binder
    assert "-r ../requirements.txt" in binder


def test_teaching_page_reading_times_match_the_chapters():
    """teaching.md's table comes from scripts/chapter_stats.py; it may lag small edits, not large ones."""
    row = re.compile(r"^\| \{doc\}`[^`<]+<chapters/(\w+)>` \| (\d+)–(\d+) min \|", re.M)
    table = row.findall((ROOT / "teaching.md").read_text())
    stated = {chapter: (int(low), int(high)) for chapter, low, high in table}
    stats = chapter_stats.all_stats()
    assert [s.chapter for s in stats] == list(stated), "teaching.md's table is not the chapters of _toc.yml"
    for s in stats:
        for end, said, minutes in zip(("fast", "slow"), stated[s.chapter], s.reading_minutes, strict=True):
            assert abs(said - minutes) <= max(5, 0.25 * minutes), (
                f"{s.chapter}: teaching.md's {end} end says {said} min, the chapter now takes {minutes:.0f}: "
                "paste the tables of `python -m scripts.chapter_stats --markdown` into teaching.md"
            )


def test_the_intros_short_path_takes_three_hours_at_the_teaching_pages_pace():
    """intro.md's short path: sections of chapters in the book's order, each with the range
    scripts/chapter_stats.py computes for them (within teaching.md's tolerance), the slow ends at most three
    hours in all."""
    items = chapter_stats.path_stats((ROOT / "intro.md").read_text())
    order = [s.chapter for s in chapter_stats.all_stats()]
    assert len(items) >= 4 and [s.chapter for s, _ in items] == sorted(
        {s.chapter for s, _ in items}, key=order.index
    )
    for s, stated in items:
        for end, said, minutes in zip(("fast", "slow"), stated, s.reading_minutes, strict=True):
            assert abs(said - minutes) <= max(5, 0.25 * minutes), (
                f"intro.md's short path: {s.chapter}'s {end} end says {said} min, its sections now take "
                f"{minutes:.0f}: run python -m scripts.chapter_stats --path"
            )
    assert sum(slow for _, (_, slow) in items) <= 180


def test_reading_times_rest_on_the_cited_reading_rate_and_are_a_range():
    """The prose pace is Brysbaert's (2019) mean and slow end for non-fiction, cited on the page; the slow end
    of every chapter is well above the fast one, and a chapter of prose alone reads at those rates."""
    assert (chapter_stats.FIRST_READING.words_per_minute, chapter_stats.STUDY.words_per_minute) == (238, 175)
    teaching = (ROOT / "teaching.md").read_text()
    assert (
        "{cite}`brysbaert2019many`" in teaching
        and "@article{brysbaert2019many," in (ROOT / "references.bib").read_text()
    )
    prose = chapter_stats.Stats("x", "x", 2380, 0, 0, 0, 0, 0, 0)
    assert prose.reading_minutes == (10.0, 2380 / 175)
    for s in chapter_stats.all_stats():
        fast, slow = s.reading_minutes
        assert slow >= 1.5 * fast, s.chapter


# ---------------------------------------------------------------------------------------------------------
# A version to teach from
# ---------------------------------------------------------------------------------------------------------

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_book_shows_the_version_of_pyproject_and_has_a_changelog():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert f"Version {VERSION}" in config["html"]["extra_footer"], "the footer must show pyproject's version"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(VERSION)}\b", changelog, re.M), f"CHANGELOG.md: no {VERSION}"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "CHANGELOG" in files, "the changelog belongs to the book's back matter"
    assert f"v{VERSION}" in (ROOT / "teaching.md").read_text(), "teaching.md says how to build this version"


# ---------------------------------------------------------------------------------------------------------
# The Chinese editions: student edition and PDF (scripts/student_edition.py and build_pdf.py, --lang zh)
# ---------------------------------------------------------------------------------------------------------

ZH_SITE = FULL_SITE / "zh"


def _zh_translated_chapters() -> list[Path]:
    from scripts import zh_sync

    return [ROOT / "zh" / f"{d}.ipynb" for d in zh_sync.translated_documents() if d.startswith("chapters/")]


def chinese_solution_sentences(chapter: Path) -> list[str]:
    """From each solution of a Chinese chapter, its longest run of Chinese (12 characters or more)."""
    found = []
    for cell in nbformat.read(chapter, as_version=4).cells:
        if cell.cell_type == "markdown":
            for body in _directives(cell.source, "solution"):
                runs = re.findall(r"[\u4e00-\u9fff，、]{12,}", body)
                if runs:
                    found.append(max(runs, key=len))
    return found


@pytest.fixture(scope="module")
def zh_students(students) -> Path:
    """The Chinese student edition, built inside the English one (its assets are the English one's)."""
    return student_edition.build(students.parent, lang="zh")


@pytest.mark.site
def test_the_chinese_student_edition_keeps_the_exercises_and_no_solution(zh_students):
    chapters = _zh_translated_chapters()
    assert chapters, "no chapter is translated yet"
    assert zh_students == zh_students.parent.parent / "html" / "zh"
    for chapter in chapters:
        text, classes = read(zh_students / "chapters" / f"{chapter.stem}.html")
        assert classes.count("exercise") == exercise_count(chapter) >= 3 and "solution" not in classes
        sentences = chinese_solution_sentences(chapter)
        assert len(sentences) == exercise_count(chapter), sentences
        full, _ = read(ZH_SITE / "chapters" / f"{chapter.stem}.html")
        for sentence in sentences:
            assert sentence in full and sentence not in text, f"{chapter.stem}: {sentence}"
        notebook = zh_students.parent.parent / "notebooks" / "zh" / chapter.name
        raw = notebook.read_text(encoding="utf-8")
        assert "{solution}" not in raw and "Check of the solution" not in raw
        assert student_edition.ui(student_edition.STUDENT_PREAMBLE, "zh") in raw
        assert not any(s in raw for s in sentences)
    assert "（学生版）" in read(zh_students / "intro.html")[0]


@pytest.mark.site
@pytest.mark.skipif(not (ZH_SITE / "intro.html").exists(), reason="the book is not built")
def test_the_chinese_pdf_has_a_chinese_title_page_embedded_fonts_and_solutions_at_the_end(tmp_path, browser):
    from pypdf import PdfReader

    chapter = _zh_translated_chapters()[0]
    out = tmp_path / "zh.pdf"
    page = f"chapters/{chapter.stem}"
    result = build_pdf.print_pages(ZH_SITE, [page], out, browser=browser, edition="full", lang="zh")
    pages = pdf_text(out)
    title = unicodedata.normalize("NFKC", "多头注意力：交互式讲解")  # as pdf_text reads it
    assert title in pages[0] and "版本" in pages[0] and "CC BY 4.0" in pages[0], pages[0]
    text = " ".join(pages[1:])
    assert "练习解答" in text and result["solutions"] == exercise_count(chapter)
    # As in English: every exercise's title before the first solution's, the solutions' heading before that
    # (within a page the PDF's text runs in paint order, not reading order: the heading may precede a title).
    number = CHAPTERS.index(ROOT / "chapters" / chapter.name) + 1
    last_exercise = max(text.find(f"练习 {number}.{i}") for i in range(1, result["solutions"] + 1))
    assert text.find("解答 练习") > last_exercise, "a solution is printed beside its exercise"
    assert text.find("练习解答") < text.find("解答 练习")
    reader = PdfReader(out)
    assert next(item.title for item in reader.outline) == "扉页"
    fonts = []
    for page in reader.pages:
        for font in (page["/Resources"].get("/Font") or {}).values():
            font = font.get_object()
            descriptor = font.get("/FontDescriptor") or next(
                (d.get_object().get("/FontDescriptor") for d in font.get("/DescendantFonts", [])), None
            )
            embedded = "/CharProcs" in font or any(
                k in descriptor.get_object() for k in ("/FontFile", "/FontFile2", "/FontFile3")
            )
            fonts.append((font.get("/BaseFont"), embedded))
    assert fonts and all(embedded for _, embedded in fonts), [f for f in fonts if not f[1]]
