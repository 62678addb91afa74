"""One visit per page and screen: every check of a built page that does not change it, collected at once.

A reader meets a page at a desktop's width or a phone's, in the light or the dark theme, from disk or from a
server. Loading a page (MathJax typesetting it, its figures drawing) is most of what a browser check costs,
and the checks of one page in one state read it without changing it, so :class:`Visits` opens each page once
per state and collects them all (STYLE.md 38: one visit per page collects every check of that page):

- **desktop** (file://, 1280 px): opened in the light theme, read (errors, requests to other hosts, files that
  failed, images, MathJax's equations, its errors and fonts), the figures' fit and contrast, axe-core's every
  rule (:data:`TAGS`); then the system's scheme turns dark (as a reader's does: the theme follows it) and the
  theme's rules are run again (:data:`THEME_RULES`: what a colour can change), the figures read again and
  their frames measured. The tab is then the keyboard walk's and the printer's
  (``tests/browser/test_site_pages.py``), which change the page.
- **phone** (file://, 390 px, dark): whether the page scrolls sideways, the figures' fit, and on the English
  pages with a figure and the home page (:data:`PHONE_SCANNED`; the others hold no other kind of content
  than these) axe-core's rules that the width can change: every rule but the contrast on the whole page
  (targets, scrolling regions, the header's menu buttons), the contrast on the header and the figures.
- **http**: the page from a local server, read as on the desktop (errors, other hosts, files, images).

The tests of one page are one xdist group (:func:`page_group`, set by tests/conftest.py for every test that
asks for ``visits``), so a page is visited on one worker and each state once per run, whatever the number
of tests reading it. Chinese pages (``lang="zh"``) are visited the same way.
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass, field

from axe_playwright_python.sync_playwright import Axe

from mha.widgets.frontend import FIGURES, ROOT_CLASSES
from tests import ROOT
from tests.built_site import PAGES, SITE, is_local

TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")  # WCAG 2.0-2.2, A and AA
IMPACTS = ("serious", "critical")
THEME_RULES = ("color-contrast", "link-in-text-block")  # the WCAG A/AA rules that read colours
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}
CODE = "div.highlight pre"  # a code block: its syntax colouring is thousands of spans (see CODE_CONTRAST)
HEADER = ".bd-header, .bd-header-article"  # the theme's bars, whose buttons change with the width


def _figure_pages() -> list[str]:
    """The pages with a figure, found in their sources (a notebook's JSON escapes the quotes): known before a
    build."""
    root = re.compile(r"""class=\\?["'](""" + "|".join(ROOT_CLASSES.values()) + r")\b")
    sources = {p: next(s for s in (ROOT / f"{p}.ipynb", ROOT / f"{p}.md") if s.exists()) for p in PAGES}
    return [p for p, source in sources.items() if root.search(source.read_text(encoding="utf-8"))]


FIGURE_PAGES = _figure_pages()
PHONE_SCANNED = ["intro", *FIGURE_PAGES]  # the English pages axe-core scans at 390 px (see Visits.phone)


def page_group(lang: str, page: str) -> str:
    """The xdist group of the tests that read ``page`` of the site in ``lang``."""
    return f"page:{lang}:{page}"


def page_url(lang: str, page: str) -> str:
    return ((SITE / "zh" if lang == "zh" else SITE) / f"{page}.html").as_uri()


# The page as a reader sees it: MathJax has typeset it, its fonts are in, and its figures have drawn (a figure
# root is mounted when it has el.mha; the real-heads viewer inflates its data first).
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  await Promise.all([...document.querySelectorAll('FIGURES')].map(r => r.mha && r.mha.ready));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  // colours in transition after a switch of the theme
  const timed = (a) => a.effect && a.effect.getComputedTiming().endTime < Infinity;
  const ending = document.getAnimations().filter(timed);
  await Promise.all(ending.map(a => a.finished.catch(() => null)));
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
class Desktop:
    """The page at 1280 px: read in the light theme, scanned in both, and its tab for what changes it."""

    read: Read
    axe: dict[str, list[str]]  # theme -> serious and critical violations, as lines
    fit: dict[str, list[str]]  # theme -> what does not fit its figure
    frames: list[dict]  # each figure's frame in the dark theme
    tab: object = field(repr=False)


@dataclass
class Phone:
    """The page at 390 px in the dark theme."""

    theme: str | None
    sideways: dict  # scrollWidth, width, and what ends right of the screen
    fit: list[str]
    axe: list[str] | None  # None: not scanned at this width (PHONE_SCANNED)


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

    ``desktop(page)``, ``phone(page)`` and ``http(page)`` (``lang="zh"`` for the Chinese site) open the page
    on first use and return what was collected; the last desktop tab stays open for the checks that change
    the page (the keyboard walk, the printer), and closes when another page's desktop visit opens.
    """

    def __init__(self, browser, server: str):
        self.browser, self.server = browser, server
        self._open_desktop: Desktop | None = None

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
    def desktop(self, page: str, lang: str = "en") -> Desktop:
        if self._open_desktop is not None:
            self._open_desktop.tab.context.close()
        context = self.browser.new_context(viewport=DESKTOP, color_scheme="light")
        tab, errors, other_hosts, failed = _open(context, page_url(lang, page), "file://")
        read = _read(tab, errors, other_hosts, failed)
        axe = {"light": axe_scan(tab, self.rules)}
        fit = {"light": tab.evaluate(FIT)}
        tab.emulate_media(color_scheme="dark")  # the reader's system turns dark: the theme follows
        tab.evaluate(READY)
        theme_rules = [r for r in self.rules if r in THEME_RULES]
        axe["dark"] = axe_scan(tab, theme_rules)
        fit["dark"], frames = tab.evaluate(FIT), tab.evaluate(FRAMES)
        axe["dark"] += (
            []
            if tab.evaluate("() => document.documentElement.dataset.theme") == "dark"
            else ["the theme did not follow the system's dark scheme"]
        )
        tab.emulate_media(color_scheme="light")
        tab.evaluate(READY)
        self._open_desktop = Desktop(read, axe, fit, frames, tab)
        return self._open_desktop

    @functools.cache  # noqa: B019
    def phone(self, page: str, lang: str = "en") -> Phone:
        context = self.browser.new_context(viewport=PHONE, color_scheme="dark")
        tab, *_ = _open(context, page_url(lang, page), "file://")
        theme, sideways, fit = tab.evaluate("() => document.documentElement.dataset.theme"), None, None
        sideways, fit, found = tab.evaluate(SIDEWAYS), tab.evaluate(FIT), None
        if lang == "en" and page in PHONE_SCANNED:
            found = axe_scan(tab, [r for r in self.rules if r != "color-contrast"])
            found += axe_scan(tab, ["color-contrast"], [HEADER, *FIGURES.split(", ")])
        context.close()
        return Phone(theme, sideways, fit, found)

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
