"""Checks of the built site in _build/html, as a reader would meet it.

`make test` builds the book (with warnings as errors) before it runs pytest, so these tests read a fresh
build. Run `make book` first when running pytest by hand.

The static checks parse the HTML with the standard library. The browser check loads every page in headless
Chromium (Debian's /usr/bin/chromium, driven by Playwright) from a local server and asserts that every image
decoded. This machine cannot reach CDNs, so the check ignores what a page loads from other hosts (MathJax,
the widget manager): it asserts on what the book itself ships, which is what a reader needs offline too.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"]
PAGES = [TOC["root"]] + [c["file"] for part in TOC.get("parts", []) for c in part["chapters"]]
CHAPTER_PAGES = [p for p in PAGES if p.startswith("chapters/")]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module", autouse=True)
def _built_site():
    if not (SITE / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book` (make test does it first)")


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


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it): apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        yield launched
        launched.close()


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_in_a_browser_with_every_image_decoded(page, server, browser):
    tab = browser.new_page()
    failed_local = []
    tab.on("requestfailed", lambda r: r.url.startswith(server) and failed_local.append(r.url))
    tab.route(lambda url: not url.startswith(server), lambda route: route.abort())  # no CDN here
    tab.goto(f"{server}/{page}.html", wait_until="load")
    broken = tab.evaluate(
        "Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)"
    )
    title = tab.title()
    tab.close()
    assert not failed_local, f"{page}: the site's own files failed to load: {failed_local}"
    assert not [src for src in broken if src.startswith(server)], f"{page}: images not decoded: {broken}"
    assert title, f"{page} has no title"
