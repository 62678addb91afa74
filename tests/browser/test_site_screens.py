"""Every screen: the figures' canvas layout, their colours in the dark, at a phone's and a desktop's width.

In Chromium, on the harness page of tests/browser/harness_page.py (the figures' own files, no book theme):
the heatmap grid lays itself out so that no title, label, tick or key overlaps another or leaves the canvas,
for every h <= 16 and 1 <= n <= 16 (sampled densely), at 390 and 1280 px, light and dark; the per-head scale
colours each head's largest weight at the top of the scale; text in a figure has a contrast of at least 4.5:1.
"""

import pytest

from book.widgets.frontend import explorer_config
from book.widgets.spec import sparse_spec, windows_spec
from tests.browser.harness_page import write_harness
from tests.contrast import with_contrast

WIDTHS = (390, 1280)
WORDS = "the cat sat on the mat because it was tired and then slept in the warm sun".split()  # noqa: SIM905

# Every text box against every other, against the panels and the colour bar, and against the canvas edges.
_OVERLAPS = """(id) => {
  const L = document.querySelector(`#${id}`).mha.layout;
  const bad = [];
  const texts = L.boxes.filter((b) => b.text), solid = L.boxes.filter((b) => !b.text);
  const meet = (a, b) => a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5
    && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
  for (const a of texts) {
    const out = a.x < -0.5 || a.y < -0.5 || a.x + a.w > L.width + 0.5 || a.y + a.h > L.height + 0.5;
    if (out) bad.push(`${a.kind} "${a.text}" leaves the canvas`);
    for (const s of solid) if (meet(a, s)) bad.push(`${a.kind} "${a.text}" on a ${s.kind}`);
  }
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const a = texts[i], b = texts[j];
      // turned key labels of one panel stand apart along their slant (checked below), not as boxes
      const slanted = L.angle === Math.PI / 4;
      if (slanted && a.kind === 'key' && b.kind === 'key' && Math.abs(a.y - b.y) < 1) continue;
      if (meet(a, b)) bad.push(`${a.kind} "${a.text}" over ${b.kind} "${b.text}"`);
    }
  }
  // turned key labels stand at least one line height (12 px) apart
  if (L.angle === Math.PI / 4 && L.cw * Math.sin(L.angle) < 12 - 1e-9) bad.push(`keys ${L.cw} px apart`);
  const box = document.querySelector(`#${id} .mha-figure`).clientWidth;
  if (L.width > box + 1) bad.push(`canvas ${L.width} px in a ${box} px box`);
  return bad.slice(0, 5);
}"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    directory = tmp_path_factory.mktemp("screens")
    settings = {"d_model": 64, "h": 4, "sentence": " ".join(WORDS[:5])}
    roots = [
        ("mha-explorer", "explorer", explorer_config(settings)),
        ("mha-windows", "windows", {"spec": windows_spec()}),
        ("mha-sparse", "sparse", {"spec": sparse_spec()}),
    ]
    return write_harness(directory, roots)


def _open(browser, harness, width, scheme):
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto(harness.as_uri())
    page.wait_for_function("() => document.querySelector('#explorer').mha")
    return context, page


@pytest.mark.parametrize("width", WIDTHS)
def test_no_label_overlaps_or_leaves_the_canvas_for_any_h_and_n(browser, harness, width):
    context, page = _open(browser, harness, width, "light")
    failures = {}
    for scale in ("shared", "per head"):
        page.select_option("#explorer select[name=scale]", scale)
        for h in (1, 2, 4, 8, 16):
            ns = range(1, 17) if h in (1, 16) else (1, 2, 3, 5, 8, 13, 16)
            for n in ns:
                page.evaluate(
                    "([h, s]) => document.querySelector('#explorer').mha.update({h, sentence: s})",
                    [h, " ".join(WORDS[:n])],
                )
                bad = page.evaluate(_OVERLAPS, "explorer")
                if bad:
                    failures[(scale, h, n)] = bad
    context.close()
    assert not failures, f"at {width} px: {dict(list(failures.items())[:4])}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_window_explorer_fits_and_its_labels_do_not_overlap(browser, harness, width):
    context, page = _open(browser, harness, width, "dark")
    failures = {}
    for n, window, layers in [(2, 1, 1), (8, 2, 3), (16, 4, 6), (24, 4, 8), (32, 8, 8)]:
        page.evaluate(
            "(s) => document.querySelector('#windows').mha.update(s)",
            {"n": n, "window": window, "layers": layers, "layer": layers},
        )
        bad = page.evaluate(_OVERLAPS, "windows")
        if bad:
            failures[n] = bad
    context.close()
    assert not failures, f"at {width} px: {failures}"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sparse_figure_fits_and_its_labels_do_not_overlap(browser, harness, width):
    context, page = _open(browser, harness, width, "dark")
    failures = {}
    for n, k in [(1, 1), (5, 2), (11, 4), (16, 3), (16, 16)]:
        page.evaluate(
            "(s) => document.querySelector('#sparse').mha.update(s)",
            {"sentence": " ".join(WORDS[:n]), "top_k": k},
        )
        bad = page.evaluate(_OVERLAPS, "sparse")
        if bad:
            failures[(n, k)] = bad
    context.close()
    assert not failures, f"at {width} px: {failures}"


def test_the_per_head_scale_colours_each_heads_largest_weight_at_the_top(browser, harness):
    context, page = _open(browser, harness, 1280, "light")
    page.evaluate(
        "() => document.querySelector('#explorer').mha.update({h: 16, sentence: arguments[0]})".replace(
            "arguments[0]", repr(" ".join(WORDS))
        )
    )
    colours = {}
    for scale in ("shared", "per head"):
        page.select_option("#explorer select[name=scale]", scale)
        colours[scale] = page.evaluate("""() => {
          const el = document.querySelector('#explorer'), L = el.mha.layout, w = el.mha.weights;
          const c = el.mha.canvas, ctx = c.getContext('2d'), k = c.width / L.width;
          return w.map((rows, p) => {
            let best = [0, 0, -1];
            rows.forEach((r, i) => r.forEach((v, j) => { if (v > best[2]) best = [i, j, v]; }));
            const x = L.rects[p].x + (best[1] + 0.5) * L.cw, y = L.rects[p].y + (best[0] + 0.5) * L.ch;
            return Array.from(ctx.getImageData(Math.floor(x * k), Math.floor(y * k), 1, 1).data.slice(0, 3));
          });
        }""")
    context.close()
    yellow = [253, 231, 37]  # the top of viridis
    near = lambda rgb: sum(abs(a - b) for a, b in zip(rgb, yellow, strict=True)) < 30  # noqa: E731
    assert all(near(rgb) for rgb in colours["per head"]), colours["per head"]
    assert sum(near(rgb) for rgb in colours["shared"]) < len(colours["shared"]) // 2  # on 0-1 most are dim


_CONTRAST = with_contrast("""
  const bg = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor, m = rgb(c);
      if (m.length < 4 || m[3] > 0.5) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const out = [];
  for (const el of document.querySelectorAll('.mha-explorer *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const ratio = contrast(rgb(getComputedStyle(el).color), rgb(bg(el)));
    if (ratio < 4.5) out.push(`${el.tagName} "${el.textContent.slice(0, 20)}": ${ratio.toFixed(2)}`);
  }
  return out;
""")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_text_in_a_figure_has_a_contrast_of_4_5(browser, harness, theme):
    context, page = _open(browser, harness, 390, theme)
    page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
    page.check("#explorer input[name=show_numbers]")
    low = page.evaluate(_CONTRAST)
    context.close()
    assert not low, low
