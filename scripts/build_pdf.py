"""The book as one PDF to cite, printed from the built site by headless Chromium (`make pdf`).

Each page of _toc.yml, in order, is opened from disk (file://, every request to another host blocked) in
Debian's Chromium through Playwright, and printed once MathJax has typeset it, its fonts have loaded and
its images have decoded. A print style hides the navigation bars, sidebars, launch and download buttons,
pads table cells and unfolds folded cells. Each page starts on a new sheet; the per-page PDFs are merged
with pypdf, with one bookmark per page of the book, behind a title page (title, authors, version and date
from pyproject.toml and _config.yml, licence), and numbered once through the book ("12 / 142", stamped on
every sheet after the title page from a PDF of numbers that Chromium prints).

Solutions: the full edition prints each chapter's solutions (and the folded cells tagged ``solution-check``
that check them, CONTRIBUTING.md) together at the end of the chapter, under "Solutions to the exercises",
where they do not give the answer away beside its exercise; the student edition's site has none
(scripts/student_edition.py prints it, `--edition students`). Nothing may be clipped: before printing, every
element of a page is measured at the width of the sheet, and an element wider than the sheet or than a box
that cuts its content fails the build.

The Chinese book (``--lang zh``, printed from ``_build/html/zh``: `make pdf` writes
``_build/pdf/zh/multi-head-attention.pdf``) has its title page and the words this script adds in Chinese
(scripts/texts.py's ``ui``) and the pages of its own table of contents (with its glossary); Chromium embeds
the CJK font its pages use (Noto Sans CJK, which .ci/run installs).

Usage: python -m scripts.build_pdf [--site _build/html] [--out _build/pdf/multi-head-attention.pdf]
       [--edition full|students] [--lang en|zh]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import html
import subprocess
import sys
import tempfile
from pathlib import Path

import tomllib

from scripts.chromium import CHROMIUM, launch
from scripts.texts import ui
from scripts.zh_book import site_config, site_toc

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
div.exercise, div.solution, div.admonition { box-sizing: border-box !important; max-width: 100% !important;
  margin-left: 0 !important; margin-right: 0 !important; overflow: visible !important; }
div.solution { border-left-width: 4px !important; }
pre, .cell_output, img, canvas, figure, table, mjx-container[display="true"] { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
img, svg, canvas, video { max-width: 100% !important; height: auto !important; }
pre { white-space: pre-wrap !important; word-break: break-word; overflow: visible !important; }
code { white-space: normal; overflow-wrap: anywhere; }
table { max-width: 100% !important; }
th, td { padding: 0.2em 0.6em !important; }
.pst-scrollable-table-container, .table-wrapper, div.output_html { overflow: visible !important; }
mjx-container[display="true"] { overflow: visible !important; max-width: 100%; }
span.math, div.math { overflow: visible !important; }
"""

# The site's layout at 82 %: wide display equations and code lines fit the width of an A4 sheet.
PRINT_SCALE = 0.82
# The CSS width of the printable area, A4 less the margins, at that scale: the viewport pages are measured at.
SHEET_WIDTH = round((210 - 30) / 25.4 * 96 / PRINT_SCALE)

# Resolves once the page can be printed: equations typeset, fonts loaded, images decoded, folds opened;
# with ``collect``, the solutions (and the cells checking them) moved to the end of the page. Returns the
# elements cut off at the right: wider than the sheet, or than a box that hides what overflows it.
_READY = r"""async ([collect, heading]) => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  for (const d of document.querySelectorAll("details")) d.open = true;
  for (const e of document.querySelectorAll(".toggle-hidden")) e.classList.remove("toggle-hidden");
  const article = document.querySelector("article.bd-article") || document.body;
  const solutions = [...article.querySelectorAll("div.solution")];
  if (collect && solutions.length) {
    const part = document.createElement("section");
    part.className = "mha-solutions";
    part.appendChild(document.createElement("h2")).textContent = heading;
    for (const s of solutions) {
      const moved = [s];
      const check = n => n && n.matches("div.cell.tag_solution-check");  // myst-nb writes a cell's tags so
      for (let n = s.nextElementSibling; check(n); n = n.nextElementSibling) moved.push(n);
      for (const m of moved) part.appendChild(m);
    }
    (article.querySelector(":scope > section") || article).appendChild(part);
  }
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  await document.fonts.ready;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const right = document.documentElement.clientWidth + 1;
  // What is wider than the sheet (a wide table, a widget, a long display equation) is shrunk to fit it.
  for (const e of article.querySelectorAll(
      "table, mjx-container[display='true'], div.output, div.cell_output > *, figure, div.highlight")) {
    const box = e.getBoundingClientRect(), room = right - 1 - box.left;
    const wide = Math.max(e.scrollWidth, box.width);
    if (box.width && wide > room + 1) e.style.zoom = (Math.floor(980 * room / wide) / 1000).toString();
  }
  const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
    (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
  const clipped = [];
  for (const e of article.querySelectorAll("*")) {
    if (e.closest("mjx-assistive-mml, .visually-hidden, .sr-only")) continue;
    const box = e.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    const style = getComputedStyle(e);
    const cuts = ["hidden", "clip", "auto", "scroll"].includes(style.overflowX);
    if (box.right > right) clipped.push(`${name(e)} ends at ${Math.round(box.right)} px of ${right - 1}`);
    else if (cuts && style.display !== "inline" && e.scrollWidth > e.clientWidth + 1)
      clipped.push(`${name(e)} cuts ${e.scrollWidth - e.clientWidth} px: ${e.textContent.slice(0, 40)}`);
  }
  const title = document.title.split(" — ")[0].trim();
  return {title, equations: document.querySelectorAll("mjx-container").length, clipped: clipped.slice(0, 20),
          solutions: solutions.length};
}"""

TITLE_PAGE = """<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8"><style>
@page {{ size: A4; margin: 0; }}
body {{ margin: 0; font-family: "Noto Sans", "Noto Sans CJK SC", "DejaVu Sans", sans-serif; color: #222; }}
.sheet {{ height: 297mm; box-sizing: border-box; padding: 60mm 25mm 25mm; display: flex;
  flex-direction: column; }}
h1 {{ font-size: 30pt; margin: 0 0 8mm; line-height: 1.15; }}
.subtitle {{ font-size: 13pt; color: #555; margin-bottom: 20mm; }}
.who {{ font-size: 14pt; margin-bottom: 6mm; }}
.edition {{ font-size: 12pt; }}
.bottom {{ margin-top: auto; font-size: 9.5pt; line-height: 1.45; color: #444; }}
</style></head><body><div class="sheet">
<h1>{title}</h1>
<div class="subtitle">{description}</div>
<div class="who">{author}</div>
<div class="edition">{version_line}</div>
<div class="edition">{url}</div>
<div class="bottom">
<p>{licence}</p>
<p>{cite}</p>
<p>{printed}</p>
</div></div></body></html>"""


def pages(lang: str = "en") -> list[str]:
    """The book's pages in the order of its table of contents (root first): _toc.yml, or the Chinese one."""
    toc = site_toc(lang)
    return [toc["root"]] + [c["file"] for part in toc.get("parts", []) for c in part["chapters"]]


def book_facts(lang: str = "en") -> dict:
    """Title, authors, version, date and repository of the book, from _config.yml and pyproject.toml."""
    config = site_config(lang)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    try:  # the date of the last commit, so that a rebuild of one version prints the same date
        stamp = subprocess.run(
            ["git", "-C", str(ROOT), "log", "-1", "--format=%cs"], capture_output=True, text=True, check=True
        ).stdout.strip()
        date = datetime.date.fromisoformat(stamp)
    except (OSError, subprocess.CalledProcessError, ValueError):
        date = datetime.date.today()
    return {
        "title": config["title"],
        "author": config["author"],
        "description": " ".join(str(config.get("description", "")).split()),
        "copyright": config.get("copyright", ""),
        "url": config["repository"]["url"],
        "version": version,
        "date": ui("{day} {month} {year}", lang).format(
            day=date.day, month=f"{date:%B}", month_number=date.month, year=date.year
        ),
        "year": date.year,
    }


def title_page_html(edition: str = "full", lang: str = "en") -> str:
    facts = {k: html.escape(str(v)) for k, v in book_facts(lang).items()}
    facts["edition"] = ui(", student edition (no solutions)", lang) if edition == "students" else ""
    facts["version_line"] = ui("Version {version}{edition}, {date}", lang).format(**facts)
    facts["licence"] = ui(
        "<b>Licence.</b> Text and figures: Creative Commons Attribution 4.0 International (CC BY 4.0), "
        "https://creativecommons.org/licenses/by/4.0/. Code: MIT licence. See LICENSE-text and LICENSE "
        "in the repository.",
        lang,
    )
    facts["cite"] = ui(
        "<b>To cite.</b> {author}, <i>{title}</i>, version {version}, {year}. {url}", lang
    ).format(**facts)
    facts["printed"] = ui(
        "Printed from the book's site; the interactive figures appear in their first state. "
        "Copyright {copyright}.",
        lang,
    ).format(**facts)
    return TITLE_PAGE.format(lang={"zh": "zh-CN"}.get(lang, lang), **facts)


def _numbers_pdf(tab, count: int, path: Path) -> None:
    """A PDF of ``count`` blank A4 sheets with "i / count" at the foot, to stamp on the book's sheets."""
    tab.set_content("<style>@page{size:A4;margin:16mm 15mm 18mm 15mm}div{break-after:page;height:1px}</style>"
                    + "<div></div>" * count)  # fmt: skip
    tab.pdf(
        path=str(path),
        format="A4",
        prefer_css_page_size=True,
        display_header_footer=True,
        header_template="<span></span>",
        footer_template=(
            '<div style="font-size:8px;width:100%;padding:0 15mm;color:#666;text-align:right">'
            '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
        ),
    )


def print_pages(
    site: Path, names: list[str], out: Path, *, browser=None, edition: str | None = None, lang: str = "en"
) -> dict:
    """Print the site's pages ``names`` into one PDF ``out``, numbered through; return what was printed.

    ``edition``: ``"full"`` or ``"students"`` puts the book's title page first; ``"full"`` also gathers each
    page's solutions at its end (``None``: neither, for a quick print of a few pages). ``browser``: a launched
    Playwright browser to print with (the tests pass theirs); ``None`` starts headless Chromium
    (scripts/chromium.py) for the call. ``lang``: the book's language (``"zh"``: pages of the Chinese site),
    for the words this script adds. Returns ``{"pages": sheets, "titles": [...], "solutions": n}``.
    """
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader, PdfWriter

    site = site.resolve()
    if browser is None and CHROMIUM is None:
        raise SystemExit("Debian's chromium is needed: apt-get install chromium fonts-noto-cjk")
    missing = [n for n in names if not (site / f"{n}.html").exists()]
    if missing:
        raise SystemExit(f"not in the built site {site}: {missing}; run `make book` first")
    writer, titles, errors, clipped, solutions = PdfWriter(), [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if browser is None:
            browser = launch(stack.enter_context(sync_playwright()))
            stack.callback(browser.close)
        tab = browser.new_page(viewport={"width": SHEET_WIDTH, "height": 1400})
        stack.callback(tab.close)
        tab.on("pageerror", lambda error: errors.append(f"{tab.url.rsplit('/', 1)[-1]}: {error}"))
        tab.route(lambda url: not url.startswith(("file:", "data:", "blob:")), lambda route: route.abort())
        if edition:
            tab.set_content(title_page_html(edition, lang))
            part = Path(tmp) / "title.pdf"
            tab.pdf(path=str(part), format="A4", print_background=True, prefer_css_page_size=True)
            writer.append(PdfReader(part))
            writer.add_outline_item(title=ui("Title page", lang), page_number=0)
        for i, name in enumerate(names):
            tab.goto((site / f"{name}.html").as_uri(), wait_until="load")
            tab.emulate_media(media="print")
            tab.add_style_tag(content=PRINT_CSS)
            seen = tab.evaluate(_READY, [edition == "full", ui("Solutions to the exercises", lang)])
            clipped += [f"{name}: {c}" for c in seen["clipped"]]
            solutions += seen["solutions"]
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
                    f'<div style="font-size:8px;width:100%;padding:0 15mm;color:#666">{title}</div>'
                ),
            )
            start = len(writer.pages)
            writer.append(PdfReader(part))
            writer.add_outline_item(title=seen["title"], page_number=start)
            titles.append(seen["title"])
        if errors:
            raise SystemExit("page errors while printing:\n" + "\n".join(errors))
        if clipped:
            raise SystemExit("clipped at the right of the sheet:\n" + "\n".join(clipped))
        numbers = Path(tmp) / "numbers.pdf"
        _numbers_pdf(tab, len(writer.pages), numbers)
        for index, sheet in enumerate(PdfReader(numbers).pages):
            if index or not edition:  # no number on the title page
                writer.pages[index].merge_page(sheet)
        facts = book_facts(lang)
        student = ui(", student edition", lang) if edition == "students" else ""
        writer.add_metadata(
            {
                "/Title": titles[0] if len(titles) == 1 and not edition else facts["title"],
                "/Author": facts["author"],
                "/Subject": ui("Version {version}{edition}", lang).format(
                    version=facts["version"], edition=student
                ),
            }
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("wb") as f:
            writer.write(f)
    return {"pages": len(PdfReader(out).pages), "titles": titles, "solutions": solutions}


def print_book(site: Path, out: Path, *, edition: str = "full", browser=None, lang: str = "en") -> dict:
    """Every page of the book, behind its title page: the full edition or the student edition's site."""
    return print_pages(site, pages(lang), out, browser=browser, edition=edition, lang=lang)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, default=SITE)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--edition", choices=["full", "students"], default="full")
    parser.add_argument("--lang", choices=["en", "zh"], default="en", help="the language of the site printed")
    args = parser.parse_args(argv)
    result = print_book(args.site, args.out, edition=args.edition, lang=args.lang)
    size = args.out.stat().st_size / 2**20
    print(f"{args.out}: {result['pages']} pages, {size:.1f} MiB ({', '.join(result['titles'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
