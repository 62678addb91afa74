"""The Chinese site in Chromium (its files: tests/book/test_site_zh.py).

From disk (file://), other hosts blocked, on a sample of pages (the Chinese home page, the glossary, the
search page, and one page per kind of interactive figure): no error, nothing from another host, every image
decoded, the equations typeset, every figure mounted; the pages keep to a 390 px phone (in the dark theme)
and a 1280 px screen (in the light one), where the figures fit their boxes and every axe-core rule, the
4.5:1 contrast included, holds for each kind of figure and the theme's bars in both themes (the prose's dark
colours are the English pages', tests/browser/visits.py); every figure
labels its controls and names its pictures in Chinese (zh/figures.yml); a search for a Chinese word finds the
translated chapter; and chapter 1's MiniLM box runs the model from the English site's weights.
"""

from __future__ import annotations

import pytest

from book.minilm.page import CLASS_NAME, WEIGHTS_FILE
from book.widgets.frontend import ROOT_CLASSES
from mha.pretrained import attend
from scripts.zh_figures import Catalogue
from tests.built_site import SITE
from tests.zh_site import CHINESE, FIGURE_PAGES, SAMPLE, ZH

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]


@pytest.mark.parametrize("lang", ["zh"])
@pytest.mark.parametrize("page", SAMPLE)
def test_sampled_chinese_pages_work_offline_from_disk(page, lang, visits):
    seen = visits.page(page, lang).read
    assert not seen.errors, "\n".join(seen.errors)
    assert not seen.other_hosts and not seen.failed_local and not seen.broken_images, seen
    assert not seen.raw_tex and not seen.tex_errors and not seen.fonts_failed, seen
    if page.startswith("chapters/"):
        assert seen.equations > 0, f"zh/{page}: MathJax typeset nothing"
    expected = [name for name, where in FIGURE_PAGES.items() if where == page]
    assert {c for c, _ in seen.figures} >= set(expected), f"zh/{page}: figures {seen.figures}"
    assert all(mounted for _, mounted in seen.figures), f"zh/{page}: a figure did not mount: {seen.figures}"
    assert set(ROOT_CLASSES.values()) == set(FIGURE_PAGES), "a kind of figure has no sampled page"


@pytest.mark.parametrize("lang", ["zh"])
@pytest.mark.parametrize("page", SAMPLE)
def test_sampled_chinese_pages_fit_a_phone_and_a_desktop(page, lang, visits):
    visit = visits.page(page, lang)
    wide = visit.sideways
    assert wide["scrollWidth"] <= wide["width"] and not wide["out"], f"zh/{page} at 390 px: {wide}"
    found = {state: bad for state, bad in visit.fit.items() if bad}
    assert not found, f"zh/{page}: {found}"


@pytest.mark.parametrize("state", ["light", "phone"])
@pytest.mark.parametrize("lang", ["zh"])
@pytest.mark.parametrize("page", SAMPLE)
def test_sampled_chinese_pages_have_no_serious_accessibility_violation(page, lang, state, visits):
    """As the English pages (tests/browser/test_site_pages.py): every rule at 1280 px in the light theme; at
    390 px in the dark, the width's rules on the page and every rule on its figures and the theme's bars
    (one page per kind of figure: each figure in both themes; the prose's dark colours are the English
    pages')."""
    visit = visits.page(page, lang)
    assert visit.themes[state] == ("dark" if state == "phone" else "light"), visit.themes
    found = visit.axe[state]
    assert not found, f"zh/{page} ({state}):\n" + "\n".join(found)


_TEXTS = """cls => {
  const root = document.querySelector('.' + cls);
  return {
    labels: [...root.querySelectorAll('label')].map(l => l.textContent.trim()),
    named: [...root.querySelectorAll('[aria-label]')].map(e => e.getAttribute('aria-label')),
    buttons: [...root.querySelectorAll('button')].map(b => b.textContent.trim()).filter(Boolean),
  };
}"""


@pytest.mark.parametrize("lang", ["zh"])
@pytest.mark.parametrize("page", sorted(set(FIGURE_PAGES.values())))
def test_the_chinese_figures_label_their_controls_and_name_their_pictures_in_chinese(page, lang, visits):
    kept = {e.en for e in Catalogue.load().entries if e.en == e.zh}  # names shown as they are (d_model)
    tab = visits.page(page, lang).tab
    for kind in (kind for kind, where in FIGURE_PAGES.items() if where == page):
        found = tab.evaluate(_TEXTS, kind)
        assert found["labels"], f"{kind}: no labelled control"
        english = [t for texts in found.values() for t in texts if not CHINESE.search(t) and t not in kept]
        english = [t for t in english if any(c.isalpha() for c in t)]  # not a bare number ("1" of a slider)
        assert not english, f"{kind} on zh/{page}: English texts {english}"


def test_a_search_for_a_chinese_word_finds_the_translated_chapter(browser):
    tab = browser.new_page()
    tab.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
    tab.goto(
        (ZH / "search.html").as_uri() + "?q=%E5%A4%9A%E5%A4%B4%E6%B3%A8%E6%84%8F%E5%8A%9B", wait_until="load"
    )
    # Every chapter is Chinese now and has the word: the results come in one by one until the summary says so.
    tab.wait_for_function(
        "() => (document.querySelector('#search-results p.search-summary') || {}).textContent", timeout=60_000
    )
    hits = tab.evaluate(
        "() => [...document.querySelectorAll('#search-results ul.search li a')].map(a => a.href)"
    )
    tab.close()
    assert any(h.endswith("chapters/step_by_step.html") for h in hits), hits
    assert all("/zh/" in h for h in hits), "the Chinese search leads to Chinese pages"


def test_the_chinese_minilm_box_runs_the_model_from_the_english_sites_weights(browser, minilm):
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
    tokens, _ = attend(minilm, sentence)
    assert got["tokens"] == tokens and not errors, errors
