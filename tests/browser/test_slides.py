"""The lecture decks of `make slides` (scripts/build_slides.py, scripts/tag_slides.py, slides/).

The decks are built once into a temporary folder, then each is opened from disk (file://) in headless Chromium
with every request to another host blocked, as a lecturer offline would open it: no error, at least 8 slides,
paging works, equations typeset, the interactive figures mount; and in the same visit it is read as a lecture
hall sees it, at 1280 x 800: every slide fits (also with an interactive figure at its largest settings), no
slide shows more than 8 lines of code or a test-harness comment, figure and widget text is at least about 18
px (a picture's smallest text is book.figures' TEXT_PT at the dpi written in the PNG,
tests/unit/test_figure_style.py; a canvas's is the font size heatmaps.js reports), and a focused figure keeps
its arrow keys. (The rules that shape a chapter into a deck: tests/unit/scripts/test_tag_slides.py.)
"""

from __future__ import annotations

import hashlib

import pytest

from book.figures._style import TEXT_PT
from book.widgets.frontend import FIGURES
from scripts import build_slides, zh_sync
from tests import ROOT
from tests.zh_site import FIGURE_PAGES as ZH_FIGURE_PAGES

pytestmark = pytest.mark.site  # builds the decks


CHAPTERS = build_slides.chapters()


def _digest(paths):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.fixture(scope="module")
def decks(tmp_path_factory, minilm):
    """Every chapter's deck; chapter 1's carries all-MiniLM-L6-v2's weights (hence the `minilm` fixture)."""
    before = _digest(CHAPTERS)
    out = tmp_path_factory.mktemp("slides")
    built = build_slides.build(out)
    assert _digest(CHAPTERS) == before, "building the decks changed a committed notebook"
    return built


def test_every_chapter_has_a_deck_that_names_no_other_host(decks):
    assert set(decks) == {p.stem for p in CHAPTERS}
    for stem, deck in decks.items():
        html = deck.read_text()
        for cdn in ("unpkg.com", "cdnjs", "cdn.jsdelivr", "require.min.js", "jquery", "MathJax.Hub"):
            assert cdn not in html, f"{stem}: {cdn}"
        assert deck.name == f"{stem}.slides.html"


_READ_DECK = r"""async (figures) => {
  await MathJax.startup.promise;
  await document.fonts.ready;
  const first = Reveal.getIndices();
  Reveal.next();
  const second = Reveal.getIndices();
  return {
    total: Reveal.getTotalSlides(),
    moved: JSON.stringify(first) !== JSON.stringify(second),
    equations: document.querySelectorAll("mjx-container").length,
    texErrors: document.querySelectorAll("mjx-container merror").length,
    figures: document.querySelectorAll(figures).length,
    mounted: [...document.querySelectorAll(figures)].filter(el => el.mha).length,
    brokenImages: [...document.images].filter(i => !i.complete || i.naturalWidth === 0).length,
    fontsFailed: [...document.fonts].filter(f => f.status === "error").map(f => f.family),
  };
}"""


def _open_deck(deck, browser):
    """The deck from disk, every other host blocked, read: ``(tab, seen, problems)``, where ``problems``
    lists requests to other hosts, files beside the deck that failed and the page's errors."""
    tab = browser.new_page(viewport={"width": W, "height": H})
    errors, other_hosts, failed = [], [], []
    tab.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    tab.on("console", lambda m: m.type == "error" and errors.append(f"console error: {m.text}"))
    tab.on("request", lambda r: r.url.startswith(("file:", "data:", "blob:")) or other_hosts.append(r.url))
    tab.on("requestfailed", lambda r: r.url.startswith("file:") and failed.append(r.url))
    tab.route(lambda url: not url.startswith(("file:", "data:", "blob:")), lambda route: route.abort())
    tab.goto(deck.as_uri(), wait_until="load")
    seen = tab.evaluate(_READ_DECK, FIGURES)
    return tab, seen, {"other hosts": sorted(set(other_hosts)), "failed": failed, "errors": errors}


# ---------------------------------------------------------------------------------------------------------
# In a lecture hall: 1280 x 800
# ---------------------------------------------------------------------------------------------------------

W, H = 1280, 800

# Every slide of the deck, shown in turn: how far its content reaches (zoom included), its code lines, its
# harness comments, the size of figure text (a picture's smallest text, TEXT_PT points, at the dpi its PNG
# records, as drawn) and of the interactive figures' text (HTML, and the smallest font drawn on a canvas).
_MEASURE = r"""async ([largest, textPt]) => {
  await MathJax.startup.promise;
  await document.fonts.ready;
  await window.mhaFitted;
  Reveal.configure({transition: "none"});
  const W = Reveal.getConfig().width, H = Reveal.getConfig().height, out = [];
  const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const dpi = (img) => {  // the PNG's pHYs chunk: pixels per metre (matplotlib writes the figure's dpi)
    const data = /^data:image\/png;base64,/.test(img.src) ? atob(img.src.split(",")[1].slice(0, 8000)) : "";
    const at = data.indexOf("pHYs");
    if (at < 0 || data.charCodeAt(at + 12) !== 1) return null;
    const ppm = [...data.slice(at + 4, at + 8)].reduce((n, c) => n * 256 + c.charCodeAt(0), 0);
    return ppm * 0.0254;
  };
  for (const s of Reveal.getSlides()) {
    if (largest && !s.querySelector("select")) continue;  // (only a slide with a select changes)
    const idx = Reveal.getIndices(s);
    Reveal.slide(idx.h, idx.v);
    await new Promise(r => requestAnimationFrame(r));  // shown (the deck's own refit at 0 ms has run)
    // The deck fits a shown slide again 0, 250 and 1000 ms after it is shown or a control changes
    // (mhaRefit, for a figure that grows once shown): its last fit, run here once the figure has drawn.
    const refit = async () => { await frame(); mhaFitSlide(s); await frame(); };
    if (s.querySelector("FIGURES")) await refit();
    if (largest && s.querySelector("select")) {  // every control of a figure at its last (largest) choice
      for (const select of s.querySelectorAll("select")) {
        select.selectedIndex = select.options.length - 1;
        select.dispatchEvent(new Event("change", {bubbles: true}));
      }
      await refit();
    }
    const scale = Reveal.getScale(), {top, left} = s.getBoundingClientRect();
    const problems = [];
    let bottom = 0, right = 0;
    for (const e of s.querySelectorAll("*")) {
      if (e.closest("aside.notes, mjx-assistive-mml")) continue;
      const b = e.getBoundingClientRect();
      if (!b.height) continue;
      bottom = Math.max(bottom, (b.bottom - top) / scale);
      right = Math.max(right, (b.right - left) / scale);
    }
    if (bottom > H + 1) problems.push(`runs ${Math.round(bottom - H)} px below the slide`);
    if (right > W + 1) problems.push(`runs ${Math.round(right - W)} px past its right edge`);
    for (const pre of s.querySelectorAll(".jp-InputArea pre, .jp-RenderedMarkdown pre")) {
      if (pre.closest("aside.notes")) continue;
      const n = pre.textContent.replace(/\n$/, "").split("\n").length;
      if (n > 8) problems.push(`${n} lines of code`);
    }
    const shownText = [...s.childNodes].filter(n => !(n.matches && n.matches("aside.notes")))
      .map(n => n.textContent).join(" ");
    if (/nbval/.test(shownText)) problems.push("a test-harness comment");
    const figures = [], zoom = parseFloat(s.style.zoom) || 1;
    for (const img of s.querySelectorAll(".jp-OutputArea-output img")) {
      const b = img.getBoundingClientRect();
      if (!img.naturalWidth || !b.width) continue;
      const d = dpi(img);
      if (!d) { problems.push("a picture without its dpi"); continue; }
      const px = textPt / 72 * d * (b.width / scale) / img.naturalWidth;
      figures.push({px: Math.round(px * 10) / 10, size: [img.naturalWidth, img.naturalHeight]});
      const size = `${img.naturalWidth} x ${img.naturalHeight}`;
      if (px < 17.5) problems.push(`figure text ${px.toFixed(1)} px (${size})`);
    }
    for (const canvas of s.querySelectorAll("FIGURES".split(", ").map(f => f + " canvas").join(", "))) {
      if (!canvas.dataset.mhaFontPx || !canvas.getBoundingClientRect().width) continue;
      const px = parseFloat(canvas.dataset.mhaFontPx) * zoom;
      figures.push({px: Math.round(px * 10) / 10, canvas: true});
      if (px < 17.5) problems.push(`canvas text ${px.toFixed(1)} px`);
    }
    for (const e of s.querySelectorAll("FIGURES".split(", ").map(f => f + " *").join(", "))) {
      if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
      const px = parseFloat(getComputedStyle(e).fontSize) * zoom;
      if (px >= 17.5) continue;
      problems.push(`figure text ${px.toFixed(1)} px: ${e.textContent.trim().slice(0, 30)}`);
      break;
    }
    out.push({index: [idx.h, idx.v], problems, figures, text: s.textContent.trim().slice(0, 60)});
  }
  return out;
}""".replace("FIGURES", FIGURES)


def _open(deck, browser):
    tab = browser.new_page(viewport={"width": W, "height": H})
    tab.goto(deck.as_uri(), wait_until="load")
    return tab


@pytest.mark.parametrize("chapter", [p.stem for p in CHAPTERS])
def test_the_deck_opens_offline_and_every_slide_fits_1280_by_800_in_a_hall(chapter, decks, browser):
    """One visit of each deck: it opens offline, pages and typesets; every slide fits and reads in a hall;
    with every select of its figures at its last (largest) choice, every slide still fits; a focused explorer
    keeps its arrow keys."""
    tab, seen, problems = _open_deck(decks[chapter], browser)
    assert not problems["other hosts"], f"{chapter} requests other hosts: {problems['other hosts']}"
    assert not problems["failed"], f"{chapter}: files beside the deck failed to load: {problems['failed']}"
    assert not problems["errors"], "\n".join(problems["errors"])
    assert seen["total"] >= 8, seen
    assert seen["moved"], "Reveal.next() did not change the slide"
    assert seen["equations"] > 0 and seen["texErrors"] == 0, seen
    assert seen["mounted"] == seen["figures"], f"{chapter}: an interactive figure did not mount: {seen}"
    assert seen["brokenImages"] == 0 and not seen["fontsFailed"], seen

    slides = tab.evaluate(_MEASURE, [False, TEXT_PT])
    bad = [
        f"slide {s['index']} ({s['text'][:40]!r}): {'; '.join(s['problems'])}"
        for s in slides
        if s["problems"]
    ]
    assert not bad, f"{chapter}: {len(bad)} of {len(slides)} slides\n" + "\n".join(bad)

    if chapter in EXPLORER_DECKS:
        _assert_a_focused_explorer_keeps_its_arrow_keys(tab)
    if seen["figures"]:  # (a deck without a figure has no select to set)
        slides = tab.evaluate(_MEASURE, [True, TEXT_PT])
        bad = [f"slide {s['index']}: {'; '.join(p for p in s['problems'] if 'runs' in p)}" for s in slides]
        bad = [b for b in bad if not b.endswith(": ")]
        assert not bad, f"{chapter}: with every select at its last choice\n" + "\n".join(bad)
    tab.close()


@pytest.mark.slow
def test_the_minilm_box_runs_in_its_deck_offline_and_its_slide_still_fits(decks, browser):
    """Chapter 1's box loads the model from the deck's own files; its heads still fit the slide at 18 px."""
    tab = _open(decks["why_multiple_heads"], browser)
    tab.evaluate(_SHOW, ".mha-minilm")
    box = tab.locator(".mha-minilm")
    box.locator("button[name=run]").click()
    tab.wait_for_selector(".mha-minilm .mha-figure canvas[data-mha-font-px]", timeout=120_000)
    tab.wait_for_timeout(1200)  # the deck fits the slide again 0, 250 and 1000 ms after the box grew
    at = tab.evaluate(_AT)
    slide = next(s for s in tab.evaluate(_MEASURE, [False, TEXT_PT]) if s["index"] == at)
    tab.close()
    assert slide["figures"], "the box drew no head to measure"
    assert not slide["problems"], slide["problems"]


def test_the_decoder_box_runs_in_its_deck_offline_and_its_slide_still_fits(decks, browser):
    """The decoder box of "Heads that work together" computes from the deck's own weights script, offline,
    switches a head off there, and its slide keeps every text at the hall's size."""
    deck = decks["induction_heads"]
    assert (deck.parent / build_slides.ASSETS / "mha" / "decoder-weights.js").is_file()
    tab = _open(deck, browser)
    errors = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.route(lambda u: not u.startswith(("file://", "data:", "blob:")), lambda route: route.abort())
    tab.evaluate(_SHOW, ".mha-decoder")
    box = tab.locator(".mha-decoder")
    box.locator(".md-token").first.wait_for(timeout=60_000)
    box.locator("input[name=off_1_0]").check()
    box.locator(".md-heads-off").filter(has_text="1 of 8 heads off").wait_for()
    tab.wait_for_timeout(1200)  # the deck fits the slide again 0, 250 and 1000 ms after the box changed
    at = tab.evaluate(_AT)
    slide = next(s for s in tab.evaluate(_MEASURE, [False, TEXT_PT]) if s["index"] == at)
    tab.close()
    assert slide["figures"], "the box drew no picture to measure"
    assert not slide["problems"], slide["problems"]
    assert not errors, errors


_SHOW = r"""async (selector) => {
  await window.mhaFitted;
  Reveal.configure({transition: "none"});
  const slide = document.querySelector(selector).closest("section:not(.stack)"), i = Reveal.getIndices(slide);
  Reveal.slide(i.h, i.v);
}"""
_AT = "() => { const i = Reveal.getIndices(); return [i.h, i.v]; }"

_KEYS = r"""async (selector) => {
  await window.mhaFitted;
  Reveal.configure({transition: "none"});
  const figure = document.querySelector(selector);
  const slide = figure.closest("section:not(.stack)");
  const i = Reveal.getIndices(slide);
  Reveal.slide(i.h, i.v);
  const target = figure.querySelector("canvas, [tabindex]") || figure;
  if (!target.hasAttribute("tabindex") && target.tabIndex < 0) target.setAttribute("tabindex", "0");
  target.focus();
  return {focused: figure.contains(document.activeElement), at: Reveal.getIndices()};
}"""


EXPLORER_DECKS = ("the_math", "appendix_toy_heads")


def _assert_a_focused_explorer_keeps_its_arrow_keys(tab) -> None:
    before = tab.evaluate(_KEYS, ".mha-explorer")
    assert before["focused"]
    for key in ("ArrowRight", "ArrowDown", "ArrowLeft", "PageDown", " "):
        tab.keyboard.press(key)
    assert tab.evaluate("Reveal.getIndices()") == before["at"], "a key for the explorer changed the slide"
    tab.evaluate("document.activeElement.blur()")
    tab.keyboard.press("ArrowRight")
    assert tab.evaluate("Reveal.getIndices()") != before["at"], "away from the figure, the keys page again"


def test_decks_show_no_harness_comment_and_open_on_a_title_slide(decks):
    for stem, deck in decks.items():
        html = deck.read_text()
        assert "nbval" not in html, f"{stem}: a test-harness comment is in the deck"
        number = [p.stem for p in CHAPTERS].index(stem) + 1
        assert f"Chapter {number} of Multi-Head Attention, interactively, version" in html, stem
        assert "In this chapter:" in html, stem


# ---------------------------------------------------------------------------------------------------------
# The Chinese decks (python -m scripts.build_slides --lang zh), of the chapters translated so far
# ---------------------------------------------------------------------------------------------------------

ZH_CHAPTERS = [d.split("/")[1] for d in zh_sync.translated_documents() if d.startswith("chapters/")]
# Opened in Chromium: one deck per kind of figure (the Chinese words change the text, not the slides' parts;
# every Chinese deck is built and read as a file).
ZH_OPENED = sorted({page.split("/")[1] for page in ZH_FIGURE_PAGES.values()} & set(ZH_CHAPTERS))


@pytest.fixture(scope="module")
def zh_decks(decks):
    """The translated chapters' Chinese decks, in zh/ beside the English decks, whose _assets/ they use."""
    out = next(iter(decks.values())).parent / "zh"
    return build_slides.build(out, [ROOT / "zh" / "chapters" / f"{c}.ipynb" for c in ZH_CHAPTERS], lang="zh")


def test_every_chinese_deck_is_built_in_chinese(zh_decks):
    assert set(zh_decks) == set(ZH_CHAPTERS)
    for chapter, deck in zh_decks.items():
        html = deck.read_text(encoding="utf-8")
        number = [p.stem for p in CHAPTERS].index(chapter) + 1
        assert '<html lang="zh">' in html and "../_assets/" in html
        assert not any(
            cdn in html for cdn in ("unpkg.com", "cdnjs", "cdn.jsdelivr", "require.min.js", "jquery")
        )
        assert f"第 {number} 章" in html and "本章内容" in html, "the title slide"
        assert "In this chapter" not in html and "Exercise: " not in html, "English words of the deck"


@pytest.mark.parametrize("chapter", ZH_OPENED)
def test_chinese_decks_open_offline_fit_the_hall_and_speak_chinese(chapter, zh_decks, browser):
    deck = zh_decks[chapter]
    tab = browser.new_page(viewport={"width": W, "height": H})
    errors, failed = [], []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("requestfailed", lambda r: failed.append(r.url))
    tab.route(lambda url: not url.startswith(("file:", "data:", "blob:")), lambda route: route.abort())
    tab.goto(deck.as_uri(), wait_until="load")
    seen = tab.evaluate(_READ_DECK, FIGURES)
    slides = tab.evaluate(_MEASURE, [False, TEXT_PT])
    tab.close()
    assert not errors and not failed, (errors, failed)
    assert seen["total"] >= 8 and seen["equations"] > 0 and seen["texErrors"] == 0, seen
    assert seen["mounted"] == seen["figures"], f"{chapter}: an interactive figure did not mount: {seen}"
    bad = [f"slide {s['index']}: {'; '.join(s['problems'])}" for s in slides if s["problems"]]
    assert not bad, f"{chapter}: " + "\n".join(bad)
