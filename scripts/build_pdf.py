"""The book as one PDF, printed from the built site by headless Chromium (`make pdf`).

Each page of _toc.yml, in order, is opened from disk (file://, every request to another host blocked) in
Debian's Chromium through Playwright, and printed once MathJax has typeset it, its fonts have loaded and
its images have decoded. A print style hides the navigation bars, sidebars, launch and download buttons,
and every folded solution and cell is unfolded. Each page starts on a new sheet; the per-page PDFs are
merged with pypdf into ``_build/pdf/multi-head-attention.pdf``, with one bookmark per page of the book.

Usage: python scripts/build_pdf.py [--site _build/html] [--out _build/pdf/multi-head-attention.pdf]
"""

from __future__ import annotations

import argparse
import contextlib
import html
import sys
import tempfile
from pathlib import Path

import yaml
from chromium import CHROMIUM, launch

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
OUT = ROOT / "_build" / "pdf" / "multi-head-attention.pdf"

PRINT_CSS = """
@page { size: A4; margin: 16mm 15mm 18mm 15mm; }
.bd-header, .bd-header-announcement, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer,
.bd-footer-article, .bd-footer-content, .header-article, .prev-next-area, .prev-next-footer,
.article-header-buttons, #pst-back-to-top, .headerlink, button.toggle-button, .copybtn, .skip-link,
.search-button, .theme-switch-button { display: none !important; }
html, body { background: white !important; }
.bd-container, .bd-container__inner, .bd-main, .bd-content, .bd-article-container, .bd-page-width {
  max-width: none !important; width: 100% !important; padding: 0 !important; margin: 0 !important; }
.bd-article { padding: 0 !important; }
.toggle-hidden { display: block !important; visibility: visible !important; opacity: 1 !important;
  height: auto !important; }
*, *::before, *::after { animation: none !important; transition: none !important; }
details.hide > summary { display: none !important; }
div.exercise, div.solution, div.cell { break-inside: avoid-page; }
div.solution { border-left-width: 4px !important; }
pre, .cell_output, img, canvas, figure, table, mjx-container[display="true"] { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
img { max-width: 100% !important; height: auto !important; }
pre { white-space: pre-wrap !important; word-break: break-word; }
"""

# The site's layout at 82 %: wide display equations and code lines fit the width of an A4 sheet.
PRINT_SCALE = 0.82

# Resolves once the page can be printed: equations typeset, fonts loaded, images decoded, folds opened.
_READY = r"""async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  for (const d of document.querySelectorAll("details")) d.open = true;
  for (const e of document.querySelectorAll(".toggle-hidden")) e.classList.remove("toggle-hidden");
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  await document.fonts.ready;
  const title = document.title.split(" — ")[0].trim();
  return {title, equations: document.querySelectorAll("mjx-container").length};
}"""


def pages() -> list[str]:
    """The book's pages in the order of _toc.yml (root first)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


def print_pages(site: Path, names: list[str], out: Path, *, browser=None) -> dict:
    """Print the site's pages ``names`` into one PDF ``out``; return {"pages": sheets, "titles": [...]}.

    ``browser``: a launched Playwright browser to print with (the tests pass theirs); ``None`` starts
    headless Chromium (scripts/chromium.py) for the call.
    """
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    site = site.resolve()
    if browser is None and CHROMIUM is None:
        raise SystemExit("Debian's chromium is needed: apt-get install chromium fonts-noto-cjk")
    missing = [n for n in names if not (site / f"{n}.html").exists()]
    if missing:
        raise SystemExit(f"not in the built site {site}: {missing}; run `make book` first")
    writer, titles, errors = PdfWriter(), [], []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if browser is None:
            browser = launch(stack.enter_context(sync_playwright()))
            stack.callback(browser.close)
        tab = browser.new_page(viewport={"width": 1000, "height": 1400})
        stack.callback(tab.close)
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.route(lambda url: not url.startswith(("file:", "data:", "blob:")), lambda route: route.abort())
        for i, name in enumerate(names):
            tab.goto((site / f"{name}.html").as_uri(), wait_until="load")
            tab.emulate_media(media="print")
            tab.add_style_tag(content=PRINT_CSS)
            seen = tab.evaluate(_READY)
            title = html.escape(seen["title"])
            part = Path(tmp) / f"{i:02d}.pdf"
            tab.pdf(
                path=str(part),
                format="A4",
                print_background=True,
                scale=PRINT_SCALE,
                prefer_css_page_size=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=(
                    '<div style="font-size:8px;width:100%;padding:0 15mm;color:#666;display:flex;'
                    f'justify-content:space-between"><span>{title}</span>'
                    '<span><span class="pageNumber"></span> / <span class="totalPages"></span></span></div>'
                ),
            )
            start = len(writer.pages)
            writer.append(PdfReader(part))
            writer.add_outline_item(title=seen["title"], page_number=start)
            titles.append(seen["title"])
        if errors:
            raise SystemExit("page errors while printing:\n" + "\n".join(errors))
        writer.add_metadata({"/Title": titles[0] if len(titles) == 1 else _book_title()})
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("wb") as f:
            writer.write(f)
    return {"pages": len(PdfReader(out).pages), "titles": titles}


def _book_title() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["title"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    result = print_pages(args.site, pages(), args.out)
    size = args.out.stat().st_size / 2**20
    print(f"{args.out}: {result['pages']} pages, {size:.1f} MiB ({', '.join(result['titles'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
