"""The built site's files, as a browser gets them (its pages in Chromium: tests/browser/test_site.py).

Parsed with the standard library: every page of _toc.yml exists with its images and local links, shows no
error, loads no widget manager, weighs under 2 MB, and each chapter shows its figures and offers Colab and
Binder from the configured repository.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml

from book.minilm.page import LAYERS_DIR, WEIGHTS_FILE, WORDS_DIR
from book.widgets import frontend
from tests import ROOT
from tests.built_site import CHAPTER_PAGES, PAGES, SITE, scripts_and_roots

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.links, self.classes = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "a" and attrs.get("href"):
            self.links.append(attrs["href"])
        self.classes += (attrs.get("class") or "").split()


def parse(page: str) -> _Collector:
    collector = _Collector()
    collector.feed((SITE / f"{page}.html").read_text())
    return collector


def local_target(page: str, url: str) -> Path | None:
    parsed = urlparse(url)
    if parsed.scheme or parsed.netloc or not parsed.path:
        return None
    return ((SITE / page).parent / unquote(parsed.path)).resolve()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_exists_with_its_images_and_local_links(page):
    html = parse(page)
    for src in html.images:
        target = local_target(page, src)
        if src.startswith("data:image/"):
            continue
        assert target is not None and target.is_file(), f"{page}: image {src} is missing"
        assert target.stat().st_size > 100, f"{page}: image {src} is empty"
    for href in html.links:
        target = local_target(page, href)
        if target is not None and not href.startswith("#"):
            assert target.exists(), f"{page}: link {href} is broken"


@pytest.mark.parametrize("page", PAGES)
def test_no_page_shows_an_error(page):
    text = (SITE / f"{page}.html").read_text()
    # (not "ModuleNotFoundError": every chapter's set-up cell catches it, in its source)
    for marker in ("Traceback (most recent call last)", "Error in callback"):
        assert marker not in text, f"{page} shows {marker!r}"
    assert "output error" not in " ".join(parse(page).classes)


@pytest.mark.parametrize("page", PAGES)
def test_pages_do_not_load_the_widget_manager(page):
    """Widgets show a static picture on the site; the ~1 MB widget manager from a CDN would buy nothing."""
    text = (SITE / f"{page}.html").read_text()
    assert "html-manager" not in text and "require.min.js" not in text


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_chapters_offer_colab_and_binder_from_the_configured_repository(page):
    links = parse(page).links
    repo_path = urlparse(REPOSITORY).path
    assert any(link.startswith("https://colab.research.google.com/github" + repo_path) for link in links)
    assert any(link.startswith("https://mybinder.org/v2/gh" + repo_path) for link in links)


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_chapters_show_their_figures(page):
    assert parse(page).images, f"{page} has no figure"


MAX_PAGE_BYTES = 2_000_000


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_each_chapter_page_itself_weighs_under_2_mb(page):
    """The page's own HTML, inline data included (images and scripts are separate files)."""
    size = (SITE / f"{page}.html").stat().st_size
    assert size < MAX_PAGE_BYTES, f"{page}.html weighs {size / 1e6:.2f} MB"


def test_the_minilm_page_is_light_and_the_weights_are_beside_the_script():
    """Chapter 1's box runs all-MiniLM-L6-v2 in the page (tests/browser/test_site_minilm.py): its weights are
    files beside the scripts, loaded on use, not in the page."""
    assert (SITE / "chapters" / "why_multiple_heads.html").stat().st_size < MAX_PAGE_BYTES
    assert (SITE / "_static" / WEIGHTS_FILE).is_file() and (SITE / "_static" / "minilm.js").is_file()
    assert len(list((SITE / "_static" / WORDS_DIR).glob("*.js"))) > 1
    assert len(list((SITE / "_static" / LAYERS_DIR).glob("*.js"))) > 1


def test_pages_load_the_figure_scripts_only_where_a_figure_is():
    figure_scripts = set(frontend.SCRIPTS)
    with_figures = []
    for name in PAGES:
        scripts, has_figure = scripts_and_roots(name)
        loaded = figure_scripts & set(scripts)
        if has_figure:
            with_figures.append(name)
            assert loaded == figure_scripts, f"{name} shows a figure but lacks {figure_scripts - loaded}"
        else:
            assert not loaded, f"{name} shows no figure but loads {sorted(loaded)}"
    assert "chapters/the_math" in with_figures and "references" not in with_figures


def test_pages_load_mathjax_only_where_there_is_math():
    for name in PAGES:
        html = (SITE / f"{name}.html").read_text()
        has_math = 'class="math' in html
        assert ("tex-chtml.js" in html) == has_math, name
