"""Every page of the built book in Chromium, as readers meet it: offline, on a desktop and a phone, light and
dark, by keyboard and on paper.

Each page is visited once (tests/browser/visits.py: from disk at 1280 px in the light theme, then in the
dark, then at 390 px; the pages with a figure and the home page from a local server too), with every request
to another host blocked, and these tests read what the visits collected. A page requests nothing from
another host, raises no error and logs none, decodes every image, and MathJax (vendored in
_vendor/mathjax) typesets every equation: no TeX delimiters left in the text outside code, no TeX errors, no
missing fonts. It passes axe-core's WCAG 2.2 A and AA rules (no violation of
impact serious or critical; the rules a colour or a width can change again in the dark and at 390 px); no page
scrolls sideways on a phone (what may be wider than the screen scrolls inside its own box: a code block, a
table wrapper, a figure); every figure fits its box, keeps its text at 4.5:1 (axe-core's contrast) and, in
the dark, sits in its output without a light frame. On each chapter with a figure, the keyboard walk puts the
focus on the figure's first control and presses Tab until the focus leaves the figure: it must meet every
control and the picture, in order, each with a focus ring that is drawn (an outline of 2 px at least) and
not cut by a box that scrolls or clips; it operates each as a reader would (arrow keys on menus, sliders and
number boxes, typing in a text box, Space on a checkbox, Enter on a button, the arrow keys and Escape on the
picture), checks that the figure changed (its picture, table, status or settings) and that the focus stayed
where it was. One page per kind of figure is printed as a reader's browser prints it (Playwright's page.pdf,
which fires beforeprint and afterprint: the figures redraw for paper, core.js's onPrint), and the PDF must
hold an image for every picture the page shows, its static images and each figure's canvas, in its state of
the moment (a reader's setting, here); in the printed layout no canvas is wider than its figure.

Chapter 1's MiniLM box and the decoder box have their own walks and prints, with their Run
(tests/browser/test_site_minilm.py, test_site_decoder.py); the Chinese site's sample is read by
tests/browser/test_site_zh.py through the same visits.
"""

from __future__ import annotations

import json

import pytest

from tests.browser.visits import FIGURE_PAGES, pdf_images
from tests.built_site import CHAPTER_PAGES, PAGES

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

KEYBOARD = {  # a chapter and its figure's root: the figures without a Run of their own
    "chapters/the_math": "mha-explorer",
    "chapters/appendix_toy_heads": "mha-explorer",
    "chapters/step_by_step": "mha-stepper",
    "chapters/attention_since_2017": "mha-windows",
    "chapters/typical_configs": "mha-calculator",
}
# One page per kind of figure prints (the explorer's two pages print alike).
PRINTED = {kind: page for page, kind in reversed(KEYBOARD.items())}


# ---------------------------------------------------------------------------------------------------------
# What a reader offline gets
# ---------------------------------------------------------------------------------------------------------


# Over http:// the pages with a figure and the home page: the others load only the theme's and MathJax's
# files, which these load too.
SCHEMES = [(p, s) for p in PAGES for s in ("http", "file") if s == "file" or p in ("intro", *FIGURE_PAGES)]


@pytest.mark.parametrize(("page", "scheme"), SCHEMES)
def test_pages_render_in_a_browser_with_every_image_decoded(page, scheme, visits):
    seen = visits.http(page) if scheme == "http" else visits.page(page).read
    failed, broken = seen.failed_local, seen.broken_images
    assert not failed, f"{page} ({scheme}): the site's own files failed to load: {failed}"
    assert not broken, f"{page} ({scheme}): images not decoded: {broken}"
    assert seen.title, f"{page} has no title"


@pytest.mark.parametrize(("page", "scheme"), SCHEMES)
def test_pages_raise_no_errors_and_need_no_other_host(page, scheme, visits):
    """A reader offline gets the whole page: nothing comes from a CDN, and no script fails."""
    seen = visits.http(page) if scheme == "http" else visits.page(page).read
    other_hosts, errors = sorted(set(seen.other_hosts)), seen.errors
    assert not other_hosts, f"{page} ({scheme}) requests other hosts: {other_hosts}"
    assert not errors, f"{page} ({scheme}): " + "\n".join(errors)
    assert all(mounted for _, mounted in seen.figures), f"{page} ({scheme}): a figure did not mount"


@pytest.mark.parametrize("page", CHAPTER_PAGES)
def test_chapters_show_typeset_equations_not_tex(page, visits):
    seen = visits.page(page).read
    raw_tex, tex_errors, fonts_failed = seen.raw_tex, seen.tex_errors, seen.fonts_failed
    assert seen.equations > 0, f"{page}: MathJax typeset no equation"
    assert not raw_tex, f"{page} shows raw TeX: {raw_tex}"
    assert not tex_errors, f"{page}: TeX errors or undefined macros: {tex_errors}"
    assert not fonts_failed, f"{page}: fonts failed to load: {fonts_failed}"


# ---------------------------------------------------------------------------------------------------------
# Every reader: axe-core, a phone, the dark theme
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["light", "dark", "phone"])
@pytest.mark.parametrize("page", PAGES)
def test_the_page_has_no_serious_accessibility_violation(page, state, visits):
    """Every rule at 1280 px in the light theme; the colours' rules in the dark; at 390 px (dark) the rules a
    width can change: targets and scrolling regions on the page, every rule on the header and figures."""
    found = visits.page(page).axe[state]
    assert not found, f"{page} ({state}):\n" + "\n".join(found)


@pytest.mark.parametrize("page", PAGES)
def test_no_page_scrolls_sideways_on_a_phone(page, visits):
    visit = visits.page(page)
    wide = visit.sideways
    assert visit.themes == {"light": "light", "dark": "dark", "phone": "dark"}, f"{page}: {visit.themes}"
    assert wide["scrollWidth"] <= wide["width"] and not wide["out"], f"{page} is wider than a phone: {wide}"


@pytest.mark.parametrize("state", ["light", "dark", "phone"])
@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_every_figure_fits_its_box(page, state, visits):
    bad = visits.page(page).fit[state]
    assert not bad, f"{page} ({state}): {bad}"


@pytest.mark.parametrize("page", sorted(KEYBOARD))
def test_no_light_frame_around_a_figure_in_the_dark(page, visits):
    """The theme pads an HTML output 8 px on a light grey in the dark theme; a figure fills its output."""
    frames = [f for f in visits.page(page).frames if f["figure"] == KEYBOARD[page]]
    assert frames, f"{page}: no {KEYBOARD[page]}"
    for frame in frames:
        assert frame["left"] == frame["right"] == 0 and frame["padding"] == "0px", frame
        assert frame["background"] in ("rgba(0, 0, 0, 0)", "transparent"), frame


# ---------------------------------------------------------------------------------------------------------
# By keyboard, and on paper (these change the page: they come after the visit's other checks)
# ---------------------------------------------------------------------------------------------------------

# What the figure shows, to tell whether a key changed it: its pictures, tables, status and settings.
STATE = """root => JSON.stringify({
  pictures: [...root.querySelectorAll('canvas')].map(c => c.toDataURL()),
  text: [...root.querySelectorAll('table, .mha-status, .mha-caption, .mha-readout')].map(e => e.textContent),
  settings: root.mha && root.mha.settings,
})"""

# The focused element: what it is, and whether its focus ring is drawn and whole. A ring is an outline (or a
# box-shadow) at least 2 px wide; it is cut when the element's box grown by the ring leaves the box of an
# ancestor that scrolls or clips (overflow other than visible).
FOCUSED = """() => {
  const el = document.activeElement, style = getComputedStyle(el), box = el.getBoundingClientRect();
  const width = parseFloat(style.outlineWidth) || 0, offset = parseFloat(style.outlineOffset) || 0;
  const drawn = (style.outlineStyle !== 'none' && width >= 2) || style.boxShadow !== 'none';
  const grow = Math.max(0, width + offset);
  const ring = {left: box.left - grow, top: box.top - grow};
  Object.assign(ring, {right: box.right + grow, bottom: box.bottom + grow});
  let cut = null;
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    const s = getComputedStyle(a);
    if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
    const r = a.getBoundingClientRect();
    const out = (side, sign) => sign * (ring[side] - r[side]) > 0.5;
    if (out('left', -1) || out('right', 1) || out('top', -1) || out('bottom', 1)) {
      cut = a.className || a.tagName;
      break;
    }
  }
  return {
    tag: el.tagName.toLowerCase(), type: el.type || '', name: el.name || el.className,
    text: el.textContent.trim(),
    disabled: el.getAttribute('aria-disabled') === 'true', drawn, cut, key: el.dataset.walk || null,
  };
}"""

# Every control of a figure a reader can reach, in the page's order, each marked with its place (data-walk).
CONTROLS = """root => [...root.querySelectorAll('select, input, button, canvas, [tabindex]')]
  .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length)
  .map((e, i) => {
    e.dataset.walk = String(i);
    return e.tagName.toLowerCase() + ' ' + (e.name || e.textContent.trim());
  })"""


def operate(tab, focused: dict) -> str:
    """Press what a reader presses on this control; returns the keys pressed."""
    tag, kind = focused["tag"], focused["type"]
    if tag == "select":
        keys = ["ArrowDown"]
    elif kind in ("number", "range"):
        keys = ["ArrowUp" if kind == "number" else "ArrowLeft"]
    elif kind == "text":
        keys = ["End", "Space", "d"]
    elif kind == "checkbox":
        keys = ["Space"]
    elif tag == "button":
        keys = ["Enter"]
    elif tag == "canvas":
        keys = ["ArrowRight", "ArrowDown"]
    else:
        raise AssertionError(f"a control the walk does not know: {focused}")
    for key in keys:
        tab.keyboard.press(key)
    return " ".join(keys)


@pytest.mark.parametrize("page", sorted(KEYBOARD))
def test_every_control_of_the_figure_by_keyboard(page, visits):
    tab = visits.page(page).tab
    root = tab.locator(f".{KEYBOARD[page]}").first
    controls = root.evaluate(CONTROLS)
    pictured = KEYBOARD[page] != "mha-calculator"  # the calculator is a table
    assert len(controls) >= 3 and any(c.startswith("canvas") for c in controls) == pictured, controls
    root.locator("[data-walk='0']").focus()
    tab.keyboard.press("Shift+Tab")
    tab.keyboard.press("Tab")  # reached by Tab from the page before it
    met, problems = [], []
    for _ in range(60):
        focused = tab.evaluate(FOCUSED)
        if not root.evaluate("(root) => root.contains(document.activeElement)"):
            break
        label = f"{focused['tag']} {focused['name']} {focused['text'][:20]}"
        met.append(focused["key"])
        if not focused["drawn"]:
            problems.append(f"{label}: no focus ring")
        if focused["cut"]:
            problems.append(f"{label}: its focus ring is cut by {focused['cut']}")
        before = root.evaluate(STATE)
        keys = operate(tab, focused)
        after = root.evaluate(STATE)
        if after == before and not focused["disabled"] and focused["tag"] != "canvas":
            problems.append(f"{label}: {keys} changed nothing")
        if focused["tag"] == "canvas":
            if not any(json.loads(after)["text"]):
                problems.append(f"{label}: the arrow keys read out nothing")
            tab.keyboard.press("Escape")
        if tab.evaluate(FOCUSED)["key"] != focused["key"]:
            problems.append(f"{label}: {keys} moved the focus")
        tab.keyboard.press("Tab")
    missed = [c for i, c in enumerate(controls) if str(i) not in met]
    assert not missed and not problems, f"{page}: missed {missed}; {problems}"


# What the page shows: its images and the canvases of its live figures (not the MiniLM box's, see above).
PICTURES = """() => ({
  images: [...document.querySelectorAll('.bd-article img')].filter(i => i.getClientRects().length).length,
  canvases: [...document.querySelectorAll('.bd-article .mha-canvas')]
    .filter(c => !c.closest('.mha-minilm') && c.getClientRects().length).length,
})"""

# In the printed layout: canvases wider than the figure that holds them.
CUT = """() => [...document.querySelectorAll('.mha-figure .mha-canvas')]
  .filter(c => !c.closest('.mha-minilm'))
  .filter(c => c.getBoundingClientRect().width > c.closest('.mha-figure').getBoundingClientRect().width + 0.5)
  .map(c => c.getAttribute('aria-label'))"""


@pytest.mark.parametrize("page", sorted(PRINTED.values()))
def test_each_figure_prints_its_picture(page, visits):
    tab = visits.page(page).tab
    kind = KEYBOARD[page]
    tab.set_viewport_size({"width": 1920, "height": 1000})  # wider than paper
    tab.evaluate(f"() => document.querySelector('.{kind} select, .{kind} input').focus()")
    tab.keyboard.press("ArrowDown")  # a reader's setting: the printed picture is the one shown now
    shown = tab.evaluate(PICTURES)
    images = pdf_images(tab.pdf())
    assert images >= shown["images"] + shown["canvases"], (page, shown, images)
    tab.emulate_media(media="print")
    cut = tab.evaluate(CUT)
    tab.emulate_media(media="screen")
    assert cut == [], page
