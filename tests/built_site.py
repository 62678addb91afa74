"""The built book that the book and browser lanes read: where it is, its pages, the scripts a page loads, and
a page opened offline.

`make test` builds the book (with warnings as errors) before it runs the tests, so they read a fresh build;
run `make book` first when running them by hand, or point ``MHA_SITE`` at another build (``jupyter-book build
. --path-output DIR`` gives ``DIR/_build/html``). A test that reads it asks for the ``built_site`` fixture
(tests/conftest.py), which fails early when there is none.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

import yaml

from _ext.figure_roots import figure_roots
from tests import ROOT

SITE = Path(os.environ.get("MHA_SITE") or ROOT / "_build" / "html")
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
PAGES = [TOC["root"]] + [c["file"] for part in TOC.get("parts", []) for c in part["chapters"]]
CHAPTER_PAGES = [p for p in PAGES if p.startswith("chapters/")]


def is_local(url: str, origin: str = "file://") -> bool:
    """Whether the page may load ``url``: the site's own files (under ``origin``), data and blobs."""
    return url.startswith((origin, "data:", "blob:"))


def open_page(
    browser,
    page: str,
    *,
    url: str | None = None,
    init_script: str | None = None,
    requests: list[str] | None = None,
    **context,
):
    """``page`` of the built site from disk (file://), or at ``url`` (the site served over HTTP), every other
    host blocked: ``(tab, errors)``, where ``errors`` collects the page's uncaught exceptions and console
    errors. ``context`` (Playwright's options: a viewport, a colour scheme) or ``init_script`` (run before
    the page's own scripts) open the tab in a context of its own; closing ``tab.context`` ends either.
    ``requests``, if given, collects every URL the page asks for."""
    if context or init_script:
        own = browser.new_context(**context)
        if init_script:
            own.add_init_script(init_script)
        tab = own.new_page()
    else:
        tab = browser.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: m.type == "error" and errors.append(m.text))
    if requests is not None:
        tab.on("request", lambda r: requests.append(r.url))
    url = url or (SITE / f"{page}.html").as_uri()
    parts = urlparse(url)
    origin = "file://" if parts.scheme == "file" else f"{parts.scheme}://{parts.netloc}/"
    tab.route(lambda u: not is_local(u, origin), lambda route: route.abort())
    tab.goto(url, wait_until="load")
    return tab, errors


def scripts_and_roots(name: str) -> tuple[list[str], bool]:
    """The scripts page ``name`` loads (as the site serves them) and whether it shows an interactive figure
    (a root element, :func:`_ext.figure_roots.figure_roots`)."""
    html = (SITE / f"{name}.html").read_text()
    scripts = [  # as the site serves them: "_static/ports/random.js" is "ports/random.js"
        src.split("?")[0].rsplit("_static/", 1)[-1]
        for src in re.findall(r'<script[^>]*\ssrc="([^"]+)"', html)
    ]
    return scripts, bool(figure_roots(html))
