"""The Chinese site's files, built inside the English one (`make book`: _build/html/zh, scripts/zh_book.py).

Every page of the English site has its Chinese page at the same path below zh/ (and the glossary is the
Chinese site's own), each language marks its pages (``<html lang>``), every page links to its counterpart by a
relative link that exists, the theme speaks Chinese, the search index holds Chinese words whole, and the large
assets are the English site's: the Chinese site has no copy of the MiniLM weights, and its pages load the
figures' scripts, MathJax and the book's CSS from the English site's _static/. (Its pages in Chromium:
tests/browser/test_site_zh.py.)
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from book.minilm.page import WEIGHTS_FILE
from book.widgets.frontend import SCRIPTS
from scripts import texts, zh_book, zh_sync
from tests.built_site import PAGES, SITE, scripts_and_roots
from tests.zh_site import FIGURE_PAGES, SAMPLE, ZH

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

ZH_PAGES = [*PAGES, "glossary"]


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.lang, self.links, self.sources, self.language_links, self.text = None, [], [], [], []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
            if attrs.get("hreflang"):
                self.language_links.append((attrs["hreflang"], attrs["href"]))
        for key in ("src", "href"):
            if tag in ("script", "link", "img") and attrs.get(key):
                self.sources.append(attrs[key])
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def read(site: Path, page: str) -> _Page:
    parsed = _Page()
    parsed.feed((site / f"{page}.html").read_text(encoding="utf-8"))
    return parsed


def target(site: Path, page: str, url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme or parsed.netloc or not parsed.path:
        return None
    return ((site / page).parent / unquote(parsed.path)).resolve()


def test_every_english_page_has_its_chinese_page_at_the_same_path():
    for page in PAGES:
        assert (ZH / f"{page}.html").is_file(), f"no Chinese page zh/{page}.html"
        assert read(SITE, page).lang == "en", page
        assert read(ZH, page).lang == "zh-CN", f"zh/{page}"
    assert read(ZH, "glossary").lang == "zh-CN"


@pytest.mark.parametrize("page", [*PAGES, "search"])
def test_each_page_links_to_its_counterpart_in_the_other_language(page):
    english, chinese = read(SITE, page), read(ZH, page)
    assert english.language_links == [("zh-CN", "../" * page.count("/") + f"zh/{page}.html")], page
    assert chinese.language_links == [("en", "../" * (page.count("/") + 1) + f"{page}.html")], page
    assert target(SITE, page, english.language_links[0][1]) == (ZH / f"{page}.html").resolve()
    assert target(ZH, page, chinese.language_links[0][1]) == (SITE / f"{page}.html").resolve()


def test_the_glossary_has_no_english_page_and_links_to_the_english_book():
    assert read(ZH, "glossary").language_links == [("en", "../intro.html")]


@pytest.mark.parametrize("page", ZH_PAGES)
def test_every_chinese_page_has_its_images_scripts_and_local_links(page):
    parsed = read(ZH, page)
    for url in parsed.links + parsed.sources:
        path = target(ZH, page, url.split("?")[0])
        if path is not None and not url.startswith("#"):
            assert path.exists(), f"zh/{page}: {url} is missing"


def test_the_chinese_site_shares_the_english_sites_large_assets():
    """No second copy of the MiniLM weights (60 MB), nor of the figures' scripts or MathJax: the Chinese pages
    load the English site's, by relative paths that resolve into _build/html/_static/."""
    big = [p for p in ZH.rglob("*") if p.is_file() and p.stat().st_size > 2_000_000]
    assert not big, f"large files in the Chinese site: {big}"
    assert not (ZH / "_static" / WEIGHTS_FILE).exists() and not (SITE / "jupyter_execute").exists()
    parsed = read(ZH, FIGURE_PAGES["mha-minilm"])
    loaded = {target(ZH, FIGURE_PAGES["mha-minilm"], s) for s in parsed.sources}
    for name in SCRIPTS:  # ports/ included
        assert (SITE / "_static" / name).resolve() in loaded, f"{name} is not the English site's"
    assert (SITE / "_static" / "minilm.js").resolve() in loaded and (
        SITE / "_static" / WEIGHTS_FILE
    ).is_file()
    math = read(ZH, "chapters/step_by_step").sources
    assert any(target(ZH, "chapters/step_by_step", s) == (SITE / "_static/mathjax/tex-chtml.js").resolve()
               for s in math), "MathJax from the English site"  # fmt: skip


def test_chinese_pages_load_the_figure_scripts_only_where_a_figure_is():
    for page in ZH_PAGES:
        scripts, has_figure = scripts_and_roots(f"zh/{page}")
        loaded = set(SCRIPTS) & set(scripts)
        assert loaded == (set(SCRIPTS) if has_figure else set()), f"zh/{page}: figure {has_figure}, {loaded}"


def test_the_theme_speaks_chinese_and_untranslated_pages_say_so():
    page = " ".join(read(ZH, "chapters/step_by_step").text)
    for english in ("Show code cell", "Click to show", "Contents", "Search"):
        assert english not in page, f"the Chinese page shows the theme's {english!r}"
    assert "展开单元格" in page and "搜索" in page
    html = (ZH / "chapters/step_by_step.html").read_text(encoding="utf-8")
    for message in [m for messages in zh_book.THEME_MESSAGES.values() for m in messages]:
        assert message not in html, f"the theme's {message!r} is English (zh_book.THEME_MESSAGES)"
    assert 'title="链接到此标题"' in html, "Sphinx's heading links read the book's catalogue"
    assert f'placeholder="{texts.ui(zh_book.SEARCH_BAR, "zh")}"' in html
    note, translated = "本页尚未全部译完", zh_sync.translated_documents()
    for doc in zh_sync.documents():
        assert (note in " ".join(read(ZH, doc).text)) != (doc in translated), doc


@pytest.mark.parametrize("page", SAMPLE)
def test_the_chinese_pages_have_the_books_copies_of_the_themes_buttons(page):
    """_theme/templates/ (WCAG 2.5.3: a button's name holds its visible text): the search field's name is its
    text, no aria-label of another; the colour-mode button's icons are hidden, no titles of their own."""
    html = (ZH / f"{page}.html").read_text(encoding="utf-8")
    search = re.findall(r'<button class="btn search-button-field[^>]*>', html)
    assert search and not [b for b in search if "aria-label" in b], search
    icons = re.findall(r'<i class="theme-switch [^>]*>', html)
    assert len(icons) == 3 and all('aria-hidden="true"' in i and "title=" not in i for i in icons), icons
    assert 'aria-label="配色模式"' in html, "the colour-mode button's name is English (THEME_CONTEXT)"


def test_the_search_index_holds_chinese_words_whole():
    index = (ZH / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(index[index.index("(") + 1 : index.rindex(")")])
    terms, docs = data["terms"], data["docnames"]
    step = docs.index("chapters/step_by_step")
    for word in ("多头注意力", "缩放点积注意力", "注意力", "词元"):
        assert word in terms, f"{word} is not in the search index"
    found = terms["多头注意力"]
    assert step in (found if isinstance(found, list) else [found])
