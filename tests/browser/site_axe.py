"""The axe-core scan of the built site that tests/browser/test_site_axe_light.py and ``_dark.py`` run.

Accessibility is measured, not assumed (STYLE.md 34): every page of the book (``_toc.yml``'s, in the built
site of tests/built_site.py) is scanned with axe-core (the copy that ``axe-playwright-python`` bundles,
driving the house's Chromium) against the rules tagged WCAG 2.0, 2.1 and 2.2 A and AA, experimental rules with
those tags included (``label-content-name-mismatch``, ``td-has-header`` ...), at a desktop's width, and the
pages with a figure at a phone's width too; a violation of impact serious or critical fails. One file per
theme, so that ``make test``'s two workers (``--dist loadfile``) scan the themes side by side; each file opens
one browser context and one tab, and reuses it.

Chapter 1's MiniLM box is scanned here as the page opens; tests/browser/test_site_minilm_promises.py scans it
after a Run too (its weights load for seconds).

One rule is run in two parts, for time: axe's ``color-contrast`` checks every element with text, and a code
cell's syntax colouring makes thousands of them (3,900 spans on one page: most of a scan's time), all on one
background and in a dozen colours. So axe runs every rule on the page but its code blocks, then every rule but
the contrast on the code blocks, and :data:`CODE_CONTRAST` checks every span of every code block shown, as axe
computes it (the span's colour on the nearest opaque background, 4.5:1 for text of normal size), once per
colour and block. axe-core is put into the page once per visit and called directly.
"""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe

from mha.widgets.frontend import FIGURES, ROOT_CLASSES
from tests import ROOT
from tests.built_site import PAGES, SITE

TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")
IMPACTS = ("serious", "critical")
DESKTOP, PHONE = 1280, 390
# a figure's root in a page's source (in a notebook's JSON, its quotes escaped)
FIGURE_ROOT = re.compile(r"""class=\\?["'](""" + "|".join(ROOT_CLASSES.values()) + r")\b")

# The page is scanned once it is as a reader sees it: MathJax has typeset it, its fonts are in, and its
# figures have drawn (a figure root is mounted when it has el.mha; the real-heads viewer inflates its data).
READY = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;
  await Promise.all([...document.querySelectorAll('FIGURES')].map(r => r.mha && r.mha.ready));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
}""".replace("FIGURES", FIGURES)


def cases() -> list[tuple[str, int]]:
    """(page, width): every page of the book at a desktop's width, those with a figure at a phone's width too
    (a figure is found in the page's source, the chapter's notebook: the list is known before a build)."""
    out = []
    for page in PAGES:
        out.append((page, DESKTOP))
        source = next(p for p in (ROOT / f"{page}.ipynb", ROOT / f"{page}.md") if p.exists())
        if FIGURE_ROOT.search(source.read_text(encoding="utf-8")):
            out.append((page, PHONE))
    return out


def rule_ids(tab) -> list[str]:
    """The ids of axe's rules with a WCAG 2.x A or AA tag, experimental ones included."""
    tab.evaluate(Axe().axe_script)
    return tab.evaluate(
        "tags => axe.getRules().filter(r => r.tags.some(t => tags.includes(t))).map(r => r.ruleId)",
        list(TAGS),
    )


# The contrast of every coloured span of every code block shown (see the module's docstring): WCAG's ratio of
# the span's colour to the nearest opaque background behind it, the span's own or its block's.
CODE_CONTRAST = """() => {
  const rgba = (c) => c.match(/[\\d.]+/g).map(Number);
  const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (m) => 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]);
  const back = (e) => {
    for (; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] === 1) return c;
    }
    return [255, 255, 255];
  };
  const low = [];
  for (const pre of document.querySelectorAll('div.highlight pre')) {
    if (!pre.getClientRects().length) continue; // folded away
    const done = new Set();
    for (const el of [pre, ...pre.querySelectorAll('*')]) {
      if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
      const fg = getComputedStyle(el).color, bg = back(el).slice(0, 3), key = fg + bg;
      if (done.has(key)) continue;
      done.add(key);
      const [a, b] = [lum(rgba(fg)), lum(bg)];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) low.push(`"${el.textContent.slice(0, 20)}" ${fg} on rgb(${bg}): ${ratio.toFixed(2)}`);
    }
  }
  return low;
}"""


# axe-core's own call, once its script is in the page (axe-playwright-python's Axe.run injects it every call)
RUN = "([context, options]) => axe.run(context, options)"
CODE = "div.highlight pre"  # a code block: its syntax colouring is thousands of spans


def scan(tab, url: str, theme: str, width: int, rules: list[str]) -> list[str]:
    """Open `url` in `tab` at `width` in `theme` and return its serious and critical violations as lines."""
    tab.set_viewport_size({"width": width, "height": 900})
    tab.goto(url, wait_until="load")
    # the theme's switch: the attribute its script sets from the reader's choice (the context's color
    # scheme already makes "auto" pick it); the figures redraw for it
    tab.evaluate(
        "t => { document.documentElement.dataset.theme = t; document.documentElement.dataset.mode = t; }",
        theme,
    )
    tab.evaluate(READY)
    tab.evaluate(Axe().axe_script)

    def run(context: dict, ids: list[str]) -> list[dict]:
        # (preload: false, or axe-core reads every stylesheet itself, which fails from disk and says so)
        options = {
            "runOnly": {"type": "rule", "values": ids},
            "resultTypes": ["violations"],
            "preload": False,
        }
        return tab.evaluate(RUN, [context, options])["violations"]

    # every rule on the page but its code blocks; every rule but the contrast on the code blocks, whose
    # contrast CODE_CONTRAST checks (see the module's docstring)
    violations = run({"include": [["html"]], "exclude": [[CODE]]}, rules)
    if tab.locator(CODE).count():
        violations += run({"include": [[CODE]]}, [r for r in rules if r != "color-contrast"])
    lines = [
        f"{v['id']} ({v['impact']}): {node['target']} {node.get('failureSummary', '')[:160]}"
        for v in violations
        if v["impact"] in IMPACTS
        for node in v["nodes"]
    ]
    return lines + [f"color-contrast in code: {low}" for low in tab.evaluate(CODE_CONTRAST)]


def theme_tests(theme: str):
    """The module fixture ``tab`` (one context in ``theme``'s colour scheme, one tab reused for every page)
    and the test of every page, for one theme's file: one file per theme, so that `make test`'s two workers
    scan the two themes at once (``--dist loadfile``)."""

    @pytest.fixture(scope="module")
    def tab(browser, built_site):
        context = browser.new_context(color_scheme=theme)
        tab = context.new_page()
        tab.goto((SITE / "intro.html").as_uri())
        tab.rules = rule_ids(tab)
        yield tab
        context.close()

    @pytest.mark.parametrize(("page", "width"), cases())
    def test_the_page_has_no_serious_accessibility_violation(tab, page, width):
        found = scan(tab, (SITE / f"{page}.html").as_uri(), theme, width, tab.rules)
        assert not found, f"{page} at {width} px, {theme}:\n" + "\n".join(found)

    return tab, test_the_page_has_no_serious_accessibility_violation
