"""The built pages on a phone: at 390 px no page scrolls sideways, in the light and the dark theme.

Reads the built site (tests/built_site.py) from disk, as a reader who saved it
would open it. What may be wider than the screen must scroll inside its own box (a code block, a table
wrapper, a figure), never the page.
"""

import re

import pytest

from mha.widgets import frontend
from tests.built_site import PAGES, SITE

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PHONE = {"width": 390, "height": 844}

# Elements that end right of the viewport, outside any box that scrolls or clips them itself.
_SIDEWAYS = """() => {
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


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_page_scrolls_sideways_on_a_phone(browser, scheme):
    context = browser.new_context(viewport=PHONE, color_scheme=scheme)
    page = context.new_page()
    wide = {}
    for name in PAGES:
        page.goto((SITE / f"{name}.html").as_uri())
        page.wait_for_load_state("load")
        found = page.evaluate(_SIDEWAYS)
        if found["scrollWidth"] > found["width"] or found["out"]:
            wide[name] = found
    context.close()
    assert not wide, f"pages wider than a {PHONE['width']} px phone ({scheme}): {wide}"


# Resolves once every figure of the page has drawn (the real heads inflate their weights first).
READY = (
    "() => Promise.all([...document.querySelectorAll('FIGURES')].map((e) => e.mha && e.mha.ready))".replace(
        "FIGURES", frontend.FIGURES
    )
)

# In every figure: what ends right of the figure's box outside a scrolling box, text under 4.5:1 against the
# colour behind it (WCAG), a grey read-out bar with nothing in it.
_FIGURES = """() => {
  const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  const lum = (c) => { const m = rgb(c); return 0.2126 * f(m[0]) + 0.7152 * f(m[1]) + 0.0722 * f(m[2]); };
  const behind = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor, m = rgb(c);
      if (m.length < 4 || m[3] > 0.5) return c;
    }
    return getComputedStyle(document.body).backgroundColor;
  };
  const out = [];
  const roots = 'FIGURES';
  for (const fig of document.querySelectorAll(roots)) {
    const name = fig.className.split(' ')[0], right = fig.getBoundingClientRect().right;
    for (const el of fig.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (!r.width || el.closest('[hidden]')) continue;
      const tag = `${name} ${el.tagName}`;
      if (r.right > right + 1 && !el.closest('.mha-figure')) out.push(`${tag}: right ${r.right}`);
      if (el.tagName === 'CANVAS' && r.width > el.parentElement.clientWidth + 1) out.push(`${tag} too wide`);
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own) continue;
      const a = lum(getComputedStyle(el).color), b = lum(behind(el));
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) out.push(`${tag} "${el.textContent.slice(0, 15)}": ${ratio.toFixed(2)}:1`);
    }
    const readout = fig.querySelector('.mha-readout');
    if (readout && !readout.textContent.trim() && rgb(getComputedStyle(readout).backgroundColor)[3] !== 0) {
      out.push(`${name}: an empty grey read-out bar`);
    }
  }
  return out.slice(0, 5);
}""".replace("FIGURES", frontend.FIGURES)


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_figure_fits_its_box_and_reads_in_both_themes(browser, width, scheme):
    """The pydata theme follows the reader's system on "auto": color_scheme dark gives data-theme="dark"."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    found = {}
    for name in PAGES:
        html = (SITE / f"{name}.html").read_text()
        if not re.search(r"""class=["'](?:[^"']*\s)?mha-""", html):
            continue
        page.goto((SITE / f"{name}.html").as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("() => document.documentElement.dataset.theme") == scheme
        page.evaluate(READY)  # the real heads inflate their weights
        bad = page.evaluate(_FIGURES)
        if bad:
            found[name] = bad
    context.close()
    assert not found, f"at {width} px, {scheme}: {found}"
