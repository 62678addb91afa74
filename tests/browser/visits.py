"""One visit per page: every check of a built page that does not change it, collected at once.

A reader meets a page at a desktop's width or a phone's, in the light or the dark theme, from disk or from a
server. Loading a page (MathJax typesetting it, its figures drawing) is most of what a browser check costs,
and the checks of a page read it without changing it, so :meth:`Visits.page` opens each page once, from disk
(file://, every request to another host blocked), and collects them all in three states (STYLE.md 38: one
visit per page collects every check of that page):

- **light** (1280 px): read (errors, requests to other hosts, files that failed, images, MathJax's equations,
  its errors and fonts, the figures mounted), the figures' fit, axe-core's every rule (:data:`TAGS`);
- **dark**: the system's scheme turns dark, as a reader's does (the theme follows it, and so do the
  figures): axe-core's rules that read colours (:data:`THEME_RULES`), the figures' fit and their frames;
- **phone**: the window narrows to 390 px (in the dark, in either language), as a phone held upright, and
  the page lays itself out again: whether it scrolls sideways, the figures' fit, and axe-core's rules that a
  width changes: the page-wide ones (:data:`WIDTH_RULES`: targets, scrolling regions) and every rule on the
  theme's header (its menu buttons) and the figures.

``Visit.tab`` is the tab back at 1280 px in the light theme, for the checks that change the page (the
keyboard walk and the print of tests/browser/test_site_pages.py). :meth:`Visits.http` reads a page from a
local server.

The tests of one page are one xdist group (:func:`page_group`, set by tests/conftest.py for every test that
asks for ``visits`` with a ``page`` parameter), so a page is visited once per run, on one worker, whatever
the number of tests reading it. Chinese pages (``lang="zh"``) are visited the same way but for the dark
state at 1280 px: the colours of their prose are the English pages' (one theme, one stylesheet), which the
English visits check in the dark; what the language changes (the text, and so the layout) the light and the
phone states check, and the phone state is dark, as the English pages' is, so that every rule, the contrast
included, reads each figure and the theme's bars of a Chinese page in both themes (light at 1280 px, dark at
390 px). A whole-page contrast scan in the dark would add about 16 s over the ten sampled pages; the dark
switch, made with the phone's, adds almost nothing.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field

import nbformat
from axe_playwright_python.sync_playwright import Axe

from _ext.figure_roots import figure_roots
from book.widgets.frontend import FIGURES, ROOT_CLASSES
from tests import ROOT
from tests.built_site import PAGES, SITE, is_local

TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")  # WCAG 2.0-2.2, A and AA
IMPACTS = ("serious", "critical")
THEME_RULES = ("color-contrast", "link-in-text-block")  # the WCAG A/AA rules that read colours
WIDTH_RULES = ("target-size", "scrollable-region-focusable")  # the page-wide ones a narrow screen changes
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
CODE = "div.highlight pre"  # a code block: its syntax colouring is thousands of spans (see CODE_CONTRAST)
HEADER = ".bd-header, .bd-header-article"  # the theme's bars, whose buttons change with the width


def _figure_pages() -> list[str]:
    """The pages with a figure, found in their sources (a notebook's outputs, a page's raw HTML): known before
    a build."""
    found = []
    for page in PAGES:
        source = next(s for s in (ROOT / f"{page}.ipynb", ROOT / f"{page}.md") if s.exists())
        if source.suffix == ".ipynb":
            cells = nbformat.read(source, as_version=4).cells
            outputs = [o for c in cells if c.cell_type == "code" for o in c.outputs]
            html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
        else:
            html = source.read_text(encoding="utf-8")
        if any(root.cls in ROOT_CLASSES.values() for root in figure_roots(html)):
            found.append(page)
    return found


FIGURE_PAGES = _figure_pages()


def page_group(lang: str, page: str) -> str:
    """The xdist group of the tests that read ``page`` of the site in ``lang``."""
    return f"page:{lang}:{page}"


def page_url(lang: str, page: str) -> str:
    return ((SITE / "zh" if lang == "zh" else SITE) / f"{page}.html").as_uri()


# The page as a reader sees it: MathJax has typeset it, its fonts are in, and its figures have drawn (a figure
# root is mounted when it has el.mha; the MiniLM box inflates its stored weights first).
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  await Promise.all([...document.querySelectorAll('FIGURES')].map(r => r.mha && r.mha.ready));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  // colours in transition after a switch of the theme
  const timed = (a) => a.effect && a.effect.getComputedTiming().endTime < Infinity;
  const ending = document.getAnimations().filter(timed);
  // (a paused animation never finishes: wait at most 2 s, so a visit cannot hang on one)
  const settled = Promise.all(ending.map(a => a.finished.catch(() => null)));
  await Promise.race([settled, new Promise(r => setTimeout(r, 2000))]);
}""".replace("FIGURES", FIGURES)

# What the page holds. TeX delimiters are looked for in every text node, shown or folded away (solutions),
# except in code, where they are the point, and in MathJax's own output.
READ = r"""() => {
  const skip = "pre, code, script, style, noscript, template, textarea, mjx-container";
  const rawTex = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest(skip)) continue;
    if (["\\(", "\\[", "$$", "\\begin{"].some(d => node.data.includes(d))) rawTex.add(node.data.trim());
  }
  return {
    title: document.title,
    theme: document.documentElement.dataset.theme,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src),
    equations: document.querySelectorAll("mjx-container").length,
    rawTex: [...rawTex].map(text => text.slice(0, 80)),
    texErrors: [...document.querySelectorAll("mjx-container merror, mjx-container mtext[mathcolor=red]")]
      .map(e => e.getAttribute("data-mjx-error") || e.textContent),
    fontsFailed: [...document.fonts].filter(f => f.status === "error").map(f => f.family),
    figures: [...document.querySelectorAll('FIGURES')].map(r => [r.className.split(' ')[0], Boolean(r.mha)]),
  };
}""".replace("FIGURES", FIGURES)

# The theme gives each block that scrolls a tab stop (tabIndex 0), 300 ms after the window's size changes (its
# addTabStopsToScrollableElements): the phone's state is read once it has.
SCROLL_STOPS = """() => [...document.querySelectorAll(
  "pre, .nboutput > .output_area, .cell_output > .output, .jp-RenderedHTMLCommon, "
  + ".pst-scrollable-table-container"
)].every(e => e.tabIndex === 0 || !(e.scrollWidth > e.clientWidth || e.scrollHeight > e.clientHeight))"""

# Elements that end right of the viewport, outside any box that scrolls or clips them itself.
SIDEWAYS = """() => {
  const width = document.documentElement.clientWidth;
  const boxed = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(p).overflowX)) return true;
    }
    return false;
  };
  const out = [];
  for (const el of document.querySelectorAll('.bd-article *')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > width + 1 && !boxed(el)) {
      const name = `${el.tagName.toLowerCase()}.${String(el.className).slice(0, 40)}`;
      out.push(`${name}: right edge ${Math.round(r.right)} px`);
    }
  }
  return {scrollWidth: document.documentElement.scrollWidth, width, out: out.slice(0, 5)};
}"""

# In every figure: what ends right of the figure's box outside a scrolling box, a canvas wider than its box, a
# grey read-out bar with nothing in it. (Their text's contrast is axe-core's color-contrast, run on them.)
FIT = """() => {
  const out = [];
  for (const fig of document.querySelectorAll('FIGURES')) {
    const name = fig.className.split(' ')[0], right = fig.getBoundingClientRect().right;
    for (const el of fig.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (!r.width || el.closest('[hidden]')) continue;
      const tag = `${name} ${el.tagName}`;
      if (r.right > right + 1 && !el.closest('.mha-figure')) out.push(`${tag}: right ${r.right}`);
      if (el.tagName === 'CANVAS' && r.width > el.parentElement.clientWidth + 1) out.push(`${tag} too wide`);
    }
    const readout = fig.querySelector('.mha-readout');
    const grey = readout && getComputedStyle(readout).backgroundColor.match(/[\\d.]+/g).map(Number)[3] !== 0;
    if (readout && !readout.textContent.trim() && grey) out.push(`${name}: an empty grey read-out bar`);
  }
  return out.slice(0, 5);
}""".replace("FIGURES", FIGURES)

# How each figure sits in its output box: a frame is padding or a background around it.
FRAMES = """() => [...document.querySelectorAll('FIGURES')].map(root => {
  const out = root.parentElement, s = getComputedStyle(out);
  const a = root.getBoundingClientRect(), b = out.getBoundingClientRect();
  return {figure: root.className.split(' ')[0], padding: s.padding, background: s.backgroundColor,
          left: a.left - b.left, right: b.right - a.right};
})""".replace("FIGURES", FIGURES)

# axe-core's own call, once its script is in the page (axe-playwright-python's Axe.run injects it every call).
# (preload: false, or axe-core reads every stylesheet itself, which fails from disk and says so)
RUN_AXE = """async ([context, rules]) => (await axe.run(context,
  {runOnly: {type: 'rule', values: rules}, resultTypes: ['violations'], preload: false})).violations"""

# The contrast of a code block's syntax colours, with axe-core's own formula (axe.commons.color): axe's
# color-contrast checks every element with text, and a code cell's colouring makes thousands of them (3,900
# spans on one page: most of a scan's time), all on one background in a dozen colours; so each colour is
# checked once per block, on the nearest opaque background behind it, against 4.5:1 (text of normal size).
CODE_CONTRAST = """(selector) => {
  const {Color, getContrast} = axe.commons.color;
  const parse = (css) => { const c = new Color(); c.parseString(css); return c; };
  const back = (e) => {
    for (; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c.alpha === 1) return c;
    }
    return parse('rgb(255, 255, 255)');
  };
  const low = [];
  for (const pre of document.querySelectorAll(selector)) {
    if (!pre.getClientRects().length) continue; // folded away
    const done = new Set();
    for (const el of [pre, ...pre.querySelectorAll('*')]) {
      if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
      const fg = getComputedStyle(el).color, bg = back(el), key = fg + bg.toHexString();
      if (done.has(key)) continue;
      done.add(key);
      const ratio = getContrast(bg, parse(fg));
      if (ratio >= 4.5) continue;
      low.push(`"${el.textContent.slice(0, 20)}" ${fg} on ${bg.toHexString()}: ${ratio.toFixed(2)}`);
    }
  }
  return low;
}"""


@dataclass
class Read:
    """What the browser met on one page, with every request to another host blocked."""

    title: str
    theme: str | None  # the theme's data-theme once loaded (it follows the system's scheme)
    errors: list[str]  # uncaught exceptions and console errors
    other_hosts: list[str]  # requests to other hosts (all blocked)
    failed_local: list[str]  # the site's own files that failed to load
    broken_images: list[str]
    equations: int  # typeset by MathJax (mjx-container elements)
    raw_tex: list[str]  # text outside code that still shows TeX delimiters
    tex_errors: list[str]  # MathJax's errors and undefined macros
    fonts_failed: list[str]
    figures: list[tuple[str, bool]]  # each figure's root class and whether it mounted


@dataclass
class Visit:
    """What one visit of a page collected, and its tab (:attr:`tab`) for the checks that change the page
    (the keyboard walk, the print)."""

    read: Read
    themes: dict[str, str | None]  # state -> the theme's data-theme there: it follows the system's scheme
    axe: dict[str, list[str]]  # state ("light", "dark", "phone") -> serious and critical violations, as lines
    fit: dict[str, list[str]]  # state -> what does not fit its figure
    frames: list[dict]  # each figure's frame in the dark theme
    sideways: dict  # at 390 px: scrollWidth, width, and what ends right of the screen
    phone_tab: object = field(repr=False)  # the tab as the visit left it: at 390 px
    _desktop: bool = field(default=False, repr=False)

    @property
    def tab(self):
        """The visit's tab, back at 1280 px in the light theme (on first use: most pages never need it)."""
        if not self._desktop:
            self.phone_tab.set_viewport_size(DESKTOP)
            self.phone_tab.emulate_media(color_scheme="light")
            self.phone_tab.evaluate(READY)
            self._desktop = True
        return self.phone_tab


def _open(context, url: str, origin: str):
    """A tab of ``context`` on ``url``, every other host blocked; ``(tab, errors, other_hosts, failed)``."""
    tab = context.new_page()
    errors, other_hosts, failed_local = [], [], []

    def on_console(message):
        source = message.location.get("url", "")
        # A blocked request to another host logs "Failed to load resource"; `other_hosts` reports it.
        if message.type == "error" and not (
            message.text.startswith("Failed to load resource") and not is_local(source, origin)
        ):
            errors.append(f"console error: {message.text} ({source})")

    tab.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    tab.on("console", on_console)
    tab.on("requestfailed", lambda r: is_local(r.url, origin) and failed_local.append(r.url))
    tab.on("request", lambda r: is_local(r.url, origin) or other_hosts.append(r.url))
    tab.route(lambda url: not is_local(url, origin), lambda route: route.abort())
    tab.goto(url, wait_until="load")
    tab.evaluate(READY)
    return tab, errors, other_hosts, failed_local


def _read(tab, errors, other_hosts, failed_local) -> Read:
    seen = tab.evaluate(READ)
    return Read(
        seen["title"],
        seen["theme"],
        errors,
        other_hosts,
        failed_local,
        seen["brokenImages"],
        seen["equations"],
        seen["rawTex"],
        seen["texErrors"],
        seen["fontsFailed"],
        [tuple(f) for f in seen["figures"]],
    )


def axe_scan(tab, rules: list[str], include: list[str] | None = None, *, code: bool = True) -> list[str]:
    """Serious and critical violations of ``rules`` in ``tab`` (within the ``include`` selectors, or the whole
    page), as lines. Code blocks are scanned without the contrast, which :data:`CODE_CONTRAST` checks (with
    ``code``: when the contrast is among the rules)."""
    if not tab.evaluate("() => typeof axe === 'object'"):
        tab.evaluate(Axe().axe_script)
    selectors = [[s] for s in include] if include else [["html"]]
    contrast = "color-contrast" in rules
    found = []
    if include is None and contrast:  # every rule on the page but its code blocks; theirs without contrast
        found += tab.evaluate(RUN_AXE, [{"include": selectors, "exclude": [[CODE]]}, rules])
        others = [r for r in rules if r != "color-contrast"]
        if others and tab.locator(CODE).count():
            found += tab.evaluate(RUN_AXE, [{"include": [[CODE]]}, others])
    elif tab.locator(", ".join(include) if include else "html").count():
        found += tab.evaluate(RUN_AXE, [{"include": selectors}, rules])
    lines = [
        f"{v['id']} ({v['impact']}): {node['target']} {node.get('failureSummary', '')[:160]}"
        for v in found
        if v["impact"] in IMPACTS
        for node in v["nodes"]
    ]
    if include is None and contrast and code:
        lines += [f"color-contrast in code: {low}" for low in tab.evaluate(CODE_CONTRAST, CODE)]
    return lines


class Visits:
    """The pages of the built sites, each visited once per state on this worker (see the module docstring).

    ``page(page)`` and ``http(page)`` (``lang="zh"`` for the Chinese site) open the page on first use and
    return what was collected; the last tab of ``page`` stays open for the checks that change the page (the
    keyboard walk, the printer), and closes when another page is visited.
    """

    def __init__(self, browser, server: str):
        self.browser, self.server = browser, server
        self._open_tab = None

    @functools.cached_property
    def rules(self) -> list[str]:
        """The ids of axe's rules with a WCAG 2.x A or AA tag, experimental ones included."""
        tab = self.browser.new_page()
        tab.set_content("<html lang='en'><title>rules</title></html>")
        tab.evaluate(Axe().axe_script)
        ids = tab.evaluate(
            "tags => axe.getRules().filter(r => r.tags.some(t => tags.includes(t))).map(r => r.ruleId)",
            list(TAGS),
        )
        tab.close()
        return ids

    @functools.cache  # noqa: B019 (one Visits per worker, for the whole run)
    def page(self, page: str, lang: str = "en") -> Visit:
        """Open ``page`` from disk and collect its checks in the three states (the module's docstring)."""
        if self._open_tab is not None:
            self._open_tab.context.close()
        context = self.browser.new_context(viewport=DESKTOP, color_scheme="light")
        tab, errors, other_hosts, failed = _open(context, page_url(lang, page), "file://")
        theme = "() => document.documentElement.dataset.theme"
        read = _read(tab, errors, other_hosts, failed)
        themes, axe, fit = (
            {"light": read.theme},
            {"light": axe_scan(tab, self.rules)},
            {"light": tab.evaluate(FIT)},
        )
        frames = []
        if lang == "en":  # (the colours are the same in both languages: see the module's docstring)
            tab.emulate_media(color_scheme="dark")  # the reader's system turns dark: the theme follows
            tab.evaluate(READY)
            themes["dark"], axe["dark"] = (
                tab.evaluate(theme),
                axe_scan(tab, [r for r in self.rules if r in THEME_RULES]),
            )
            fit["dark"], frames = tab.evaluate(FIT), tab.evaluate(FRAMES)
        if lang != "en":  # a Chinese page turns dark as it narrows (an English one is dark already), with
            tab.emulate_media(color_scheme="dark")  # one settling for both; its figures are scanned below
        tab.set_viewport_size(PHONE)  # a phone, held upright: the page lays itself out again, as on turning
        tab.evaluate(READY)
        tab.wait_for_function(SCROLL_STOPS)
        themes["phone"], sideways, fit["phone"] = (
            tab.evaluate(theme),
            tab.evaluate(SIDEWAYS),
            tab.evaluate(FIT),
        )
        axe["phone"] = axe_scan(tab, [r for r in self.rules if r in WIDTH_RULES])
        axe["phone"] += axe_scan(tab, self.rules, [HEADER, *FIGURES.split(", ")], code=False)
        self._open_tab = tab
        return Visit(read, themes, axe, fit, frames, sideways, tab)

    @functools.cache  # noqa: B019
    def http(self, page: str, lang: str = "en") -> Read:
        context = self.browser.new_context(viewport=DESKTOP)
        prefix = "zh/" if lang == "zh" else ""
        tab, *seen = _open(context, f"{self.server}/{prefix}{page}.html", self.server)
        read = _read(tab, *seen)
        context.close()
        return read


def pdf_images(pdf: bytes) -> int:
    """The images a PDF draws (its pages' image XObjects, in forms too), counted without decoding them."""
    from pypdf import PdfReader

    def count(resources) -> int:
        n = 0
        for xobject in (resources or {}).get("/XObject", {}).values():
            xobject = xobject.get_object()
            if xobject.get("/Subtype") == "/Image":
                n += 1
            elif xobject.get("/Subtype") == "/Form":
                n += count(xobject.get("/Resources"))
        return n

    return sum(count(p.get("/Resources")) for p in PdfReader(io.BytesIO(pdf)).pages)
