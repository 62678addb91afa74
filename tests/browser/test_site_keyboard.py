"""Every figure of the built book with the keyboard alone, and every figure whole in the dark theme.

Reads the built site (tests/built_site.py) from disk. On each chapter page with a figure, from
disk, the walk puts the focus on the figure's first control and presses Tab until the focus leaves the figure:
it must meet every control and the picture, in order, each with a focus ring that is drawn (an outline of 2 px
at least) and not cut by a box that scrolls or clips; it operates each as a reader would (arrow keys on menus,
sliders and number boxes, typing in a text box, Space on a checkbox, Enter on a button, the arrow keys and
Escape on the picture), checks that the figure changed (its picture, table, status or settings) and that the
focus stayed where it was. Chapter 1's MiniLM box has its own walk, with its Run
(tests/browser/test_site_minilm_promises.py: the grid, the menus, the first load).
"""

from __future__ import annotations

import json

import pytest

from tests.built_site import SITE

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

FIGURES = {  # a chapter and its figure's root
    "chapters/the_math": "mha-explorer",
    "chapters/appendix_toy_heads": "mha-explorer",
    "chapters/step_by_step": "mha-stepper",
    "chapters/attention_since_2017": "mha-windows",
    "chapters/typical_configs": "mha-calculator",
    "chapters/trained_heads": "mha-realheads",
}

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

# Mounted and drawn (the real-heads viewer once its data is inflated; the calculator has no layout).
DRAWN = """cls => {
  const r = document.querySelector('.' + cls);
  return Boolean(r.mha) && r.mha.layout !== null;
}"""

# How the figure sits in its output box: a frame is padding or a background around it.
FRAME = """cls => {
  const root = document.querySelector('.' + cls), out = root.parentElement, s = getComputedStyle(out);
  const a = root.getBoundingClientRect(), b = out.getBoundingClientRect();
  return {padding: s.padding, background: s.backgroundColor, left: a.left - b.left, right: b.right - a.right};
}"""


@pytest.fixture(scope="module")
def tab(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    yield tab
    context.close()


@pytest.fixture(scope="module")
def dark(browser):
    context = browser.new_context(color_scheme="dark", viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    yield tab
    context.close()


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


@pytest.mark.parametrize("page", sorted(FIGURES))
def test_every_control_of_the_figure_by_keyboard(tab, page):
    tab.goto((SITE / f"{page}.html").as_uri())
    root = tab.locator(f".{FIGURES[page]}").first
    tab.wait_for_function(DRAWN, arg=FIGURES[page])
    controls = root.evaluate(CONTROLS)
    pictured = FIGURES[page] != "mha-calculator"  # the calculator is a table
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


@pytest.mark.parametrize("page", sorted(FIGURES))
def test_no_light_frame_around_a_figure_in_the_dark(dark, page):
    """The theme pads an HTML output 8 px on a light grey in the dark theme; a figure fills its output."""
    dark.goto((SITE / f"{page}.html").as_uri())
    dark.evaluate("() => { document.documentElement.dataset.theme = 'dark'; }")
    frame = dark.evaluate(FRAME, FIGURES[page])
    assert frame["left"] == frame["right"] == 0 and frame["padding"] == "0px", frame
    assert frame["background"] in ("rgba(0, 0, 0, 0)", "transparent"), frame
