"""The Chinese site, built inside the English one (`make book`: _build/html/zh, scripts/zh_book.py).

The files: every page of the English site has its Chinese page at the same path below zh/ (and the glossary is
the Chinese site's own), each language marks its pages (``<html lang>``), every page links to its counterpart
by a relative link that exists, the theme speaks Chinese, the search index holds Chinese words whole, and the
large assets are the English site's: the Chinese site has no copy of the MiniLM weights, and its pages load
the figures' scripts, MathJax and the book's CSS from the English site's _static/.

In Chromium, from disk (file://), other hosts blocked, on a sample of pages (the Chinese home page, the
glossary, the search page, and one page per kind of interactive figure): no error, nothing from another host,
every image decoded, the equations typeset, every figure mounted; the pages keep to a 390 px phone (dark
theme) and a 1280 px screen (light theme), where the figures fit their boxes and their text keeps a 4.5:1
contrast; a search for a Chinese word finds the translated chapter; and chapter 1's MiniLM box runs the model
from the English site's weights.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import zh_sync  # the book's scripts/, which tests/conftest.py puts on sys.path
from test_site import PAGES, SITE, _built_site, _visit  # noqa: F401  (the fixture fails early without a site)
from test_site_layout import _FIGURES, _SIDEWAYS, _scripts_and_roots

from mha.widgets.frontend import FIGURES, ROOT_CLASSES, SCRIPTS
from mha.widgets.minilm_page import CLASS_NAME, WEIGHTS_FILE

pytestmark = pytest.mark.site  # reads the built book

ZH = SITE / "zh"
ZH_PAGES = [*PAGES, "glossary"]
FIGURE_PAGES = {  # one page per kind of interactive figure, by its root class
    "mha-minilm": "chapters/why_multiple_heads",
    "mha-explorer": "chapters/the_math",
    "mha-stepper": "chapters/step_by_step",
    "mha-realheads": "chapters/trained_heads",
    "mha-calculator": "chapters/typical_configs",
    "mha-windows": "chapters/attention_since_2017",
}
SAMPLE = ["intro", "glossary", "search", *FIGURE_PAGES.values()]


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
        scripts, has_figure = _scripts_and_roots(f"zh/{page}")
        loaded = set(SCRIPTS) & set(scripts)
        assert loaded == (set(SCRIPTS) if has_figure else set()), f"zh/{page}: figure {has_figure}, {loaded}"


def test_the_theme_speaks_chinese_and_untranslated_pages_say_so():
    page = " ".join(read(ZH, "chapters/step_by_step").text)
    for english in ("Show code cell", "Click to show", "Contents", "Search"):
        assert english not in page, f"the Chinese page shows the theme's {english!r}"
    assert "展开单元格" in page and "搜索" in page
    note, translated = "本页尚未全部译完", zh_sync.translated_documents()
    for doc in zh_sync.documents():
        assert (note in " ".join(read(ZH, doc).text)) != (doc in translated), doc


def test_the_search_index_holds_chinese_words_whole():
    index = (ZH / "searchindex.js").read_text(encoding="utf-8")
    data = json.loads(index[index.index("(") + 1 : index.rindex(")")])
    terms, docs = data["terms"], data["docnames"]
    step = docs.index("chapters/step_by_step")
    for word in ("多头注意力", "缩放点积注意力", "注意力", "词元"):
        assert word in terms, f"{word} is not in the search index"
    found = terms["多头注意力"]
    assert step in (found if isinstance(found, list) else [found])


# ---------------------------------------------------------------------------------------------------------
# In Chromium, from disk
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", SAMPLE)
def test_sampled_chinese_pages_work_offline_from_disk(page, browser):
    seen = _visit(browser, (ZH / f"{page}.html").as_uri(), "file://")
    assert not seen.errors, "\n".join(seen.errors)
    assert not seen.other_hosts and not seen.failed_local and not seen.broken_images, seen
    assert not seen.raw_tex and not seen.tex_errors and not seen.fonts_failed, seen
    if page.startswith("chapters/"):
        assert seen.equations > 0, f"zh/{page}: MathJax typeset nothing"
    tab = browser.new_page()
    tab.goto((ZH / f"{page}.html").as_uri(), wait_until="load")
    roots = tab.evaluate(
        f"() => [...document.querySelectorAll('{FIGURES}')].map(r => [r.className, !!r.mha])"
    )
    tab.close()
    expected = [name for name, where in FIGURE_PAGES.items() if where == page]
    assert {c.split()[0] for c, _ in roots} >= set(expected), f"zh/{page}: figures {roots}"
    assert all(mounted for _, mounted in roots), f"zh/{page}: a figure did not mount: {roots}"
    assert set(ROOT_CLASSES.values()) == set(FIGURE_PAGES), "a kind of figure has no sampled page"


@pytest.mark.parametrize(("width", "scheme"), [(390, "dark"), (1280, "light")])
def test_sampled_chinese_pages_fit_a_phone_and_their_figures_read_in_both_themes(browser, width, scheme):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    tab = context.new_page()
    found = {}
    for page in SAMPLE:
        tab.goto((ZH / f"{page}.html").as_uri(), wait_until="load")
        tab.wait_for_timeout(300)  # the real heads inflate their weights
        wide = tab.evaluate(_SIDEWAYS)
        if wide["scrollWidth"] > wide["width"] or wide["out"]:
            found[page] = wide
        if bad := tab.evaluate(_FIGURES):
            found[page] = bad
    context.close()
    assert not found, f"at {width} px, {scheme}: {found}"


def test_a_search_for_a_chinese_word_finds_the_translated_chapter(browser):
    tab = browser.new_page()
    tab.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
    tab.goto(
        (ZH / "search.html").as_uri() + "?q=%E5%A4%9A%E5%A4%B4%E6%B3%A8%E6%84%8F%E5%8A%9B", wait_until="load"
    )
    tab.wait_for_selector("#search-results ul.search li", timeout=20_000)
    hits = tab.evaluate(
        "() => [...document.querySelectorAll('#search-results ul.search li a')].map(a => a.href)"
    )
    tab.close()
    assert any(h.endswith("chapters/step_by_step.html") for h in hits), hits
    assert all("/zh/" in h for h in hits), "the Chinese search leads to Chinese pages"


def test_the_chinese_minilm_box_runs_the_model_from_the_english_sites_weights(browser):
    from mha.pretrained import attend, load_minilm

    tab = browser.new_page()
    errors, requests = [], []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("request", lambda r: requests.append(r.url))
    tab.route(lambda url: not url.startswith(("file:", "data:", "blob:")), lambda route: route.abort())
    tab.goto((ZH / f"{FIGURE_PAGES['mha-minilm']}.html").as_uri(), wait_until="load")
    root = f"document.querySelector('.{CLASS_NAME}').mha"
    tab.evaluate(f"() => {root}.load()")
    loaded = [r for r in requests if r.endswith(WEIGHTS_FILE)]
    assert loaded == [(SITE / "_static" / WEIGHTS_FILE).resolve().as_uri()], loaded
    sentence = "The animal didn't cross the street because it was too tired."
    got = tab.evaluate(f"s => {root}.attend(s)", sentence)
    tab.close()
    tokens, _ = attend(load_minilm(), sentence)
    assert got["tokens"] == tokens and not errors, errors
