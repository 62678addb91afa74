"""Chapter 1's in-page MiniLM on the built site, as a reader offline meets it (book/minilm/static/minilm.js).

Reads the built book (run `make book` first). From disk (file://), with every other host blocked, the box on
chapters/why_multiple_heads.html runs all-MiniLM-L6-v2 in the page: its tokens equal the Python tokenizer's,
its attention equals mha.pretrained.attend within 0.005 and its sentence embeddings, with heads switched off,
equal mha.pretrained.ablated_embeddings within 1e-3 (the figure's one browser check of its numbers; the port,
ports/minilm.js, is checked on many more inputs without a browser by
tests/unit/mha/pretrained/test_minilm.py). The weights load only on first use, and only half of them: the word
embeddings' rows come as the sentences need them. The box says when it truncates. The model loads once: one
tab (the ``box`` fixture) lives for the module's tests that run it, each leaving the box as it found it, every
head on; the print and the first load over a slow network have tabs of their own.

It keeps its promises (issue 32): print, keyboard, first load, the difference view, axe-core. Each test below
reproduces one defect the issue found:
- the box printed as an empty frame: its static picture was hidden by a rule that outranked the print rule;
- its 72 thumbnails could not be reached by keyboard and had no name; only layer 1's heads could be shown
  large from the keyboard;
- the arrow keys in a "switch off" menu switched heads off at every key press;
- the first Run said nothing of its size until Run, showed no progress, could not be stopped, and decoded the
  weights on the page's main thread (the benchmark, benchmarks/bench_page_minilm.py, times it);
- switching a head off changed the large picture faintly or not at all;
- the large head's canvas had the role img and no name before Run (axe-core: role-img-alt).
"""

from __future__ import annotations

import re

import pytest
import torch

from book.minilm.census import load_head_results
from book.minilm.page import LAYERS_DIR, MAX_TOKENS, WEIGHTS_FILE, WORDS_DIR, box_spec
from mha.pretrained import ablate_encoder_heads, ablated_embeddings, attend
from tests.browser.figure_checks import assert_prints_its_picture, axe_findings
from tests.built_site import SITE, open_page
from tests.port_cases import ATTEND, HEADS_OFF

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PAGE = "chapters/why_multiple_heads"
BOX = ".mha-minilm"
API = f"document.querySelector('{BOX}').mha"
SPEC = box_spec(load_head_results()["labels"])
M = SPEC["messages"]
ATTENTION_TOLERANCE = 0.005  # the page's float16 weights against Python's float32
EMBEDDING_TOLERANCE = 1e-3


def _run(page) -> None:
    """Run the box on its sentences, as the Run button does, until it has drawn the whole model."""
    page.evaluate(f"() => {API}.refresh()")
    page.locator(f"{BOX} .mm-readout").filter(has_text="heads").wait_for()


def _close(page, errors) -> None:
    page.context.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def box(browser):
    """One tab of the chapter, from disk, other hosts blocked, for the tests that run the model (which then
    loads in it once); the page's decoders are counted (COUNT_DECODING) and its requests kept. Yields
    ``(page, errors, requests)``."""
    requests: list[str] = []
    page, errors = open_page(
        browser,
        PAGE,
        init_script=COUNT_DECODING,
        requests=requests,
        viewport={"width": 1280, "height": 900},
        color_scheme="light",
    )
    yield page, errors, requests
    _close(page, errors)


@pytest.fixture
def ran(box):
    """The shared tab with the box Run on its sentences: ``(page, errors)``."""
    page, errors, _ = box
    _run(page)
    return page, errors


def _weights(url: str) -> bool:
    return url.rsplit("/", 1)[-1] == WEIGHTS_FILE or any(f"/{d}/" in url for d in (WORDS_DIR, LAYERS_DIR))


def test_the_page_runs_minilm_as_python_does(box, minilm):
    tab, errors, requests = box
    assert tab.locator(BOX).count() == 1
    assert not any(_weights(r) for r in requests), "the weights loaded before the reader used the box"
    tab.evaluate(f"() => {API}.refresh()")  # Run, on the box's two sentences
    first = [r for r in requests if _weights(r)]
    assert sum(r.endswith(WEIGHTS_FILE) for r in first) == 1
    static = SITE / "_static"
    whole = (static / WEIGHTS_FILE).stat().st_size + sum(
        p.stat().st_size for d in (WORDS_DIR, LAYERS_DIR) for p in (static / d).iterdir()
    )
    loaded = sum((static / r.split("/_static/", 1)[1]).stat().st_size for r in first)
    assert loaded <= whole / 2, f"the first use loads {loaded / 1e6:.1f} MB of {whole / 1e6:.1f} MB"
    for sentence in ATTEND:
        got = tab.evaluate(f"s => {API}.attend(s)", sentence)
        tokens, expected = attend(minilm, sentence)  # (L, h, n, n)
        assert got["tokens"] == tokens, sentence
        attention = torch.tensor(got["attention"], dtype=torch.float64)
        assert attention.shape == expected.shape, sentence
        torch.testing.assert_close(attention.sum(-1), torch.ones(expected.shape[:-1], dtype=torch.float64))
        torch.testing.assert_close(
            attention, expected.double(), atol=ATTENTION_TOLERANCE, rtol=0, msg=f"{sentence}: attention"
        )
    for sentence, off in HEADS_OFF:
        got = torch.tensor(tab.evaluate(f"([s, off]) => {API}.embed(s, {{off}})", [sentence, off]))
        expected = ablated_embeddings(minilm, [sentence], [tuple(pair) for pair in off])[0]  # (d_model,)
        torch.testing.assert_close(got, expected, atol=EMBEDDING_TOLERANCE, rtol=0, msg=f"{sentence} {off}")
    assert sum(r.endswith(WEIGHTS_FILE) for r in requests) == 1  # once per page
    assert not errors, errors


def _all_heads_on(page) -> None:
    page.locator(f"{BOX} button[name=reset]").click()
    page.locator(f"{BOX} input[name=difference]").uncheck()
    page.locator(f"{BOX} .mm-readout").filter(has_text="All 72 heads on").wait_for()


# -- print --------------------------------------------------------------------------------------------------


def test_the_box_prints_its_static_picture(browser):
    page, errors = open_page(browser, PAGE)
    assert_prints_its_picture(page, f"{BOX} > img.mm-print")
    assert not page.locator(f"{BOX} .mm-grid").is_visible()
    assert not page.locator(f"{BOX} button[name=run]").is_visible()
    _close(page, errors)


# -- keyboard ---------------------------------------------------------------------------------------------


def _focused(page) -> dict:
    return page.evaluate(
        """() => { const e = document.activeElement;
        return {tag: e.tagName, name: e.getAttribute('aria-label') || e.textContent,
                layer: e.dataset.layer, head: e.dataset.head}; }"""
    )


def test_the_grid_is_one_tab_stop_and_any_head_is_shown_large_from_the_keyboard(ran):
    page, errors = ran
    box = page.locator(BOX)
    grid = box.get_by_role("grid", name=M["grid"])
    cells = grid.get_by_role("gridcell")
    assert cells.count() == SPEC["layers"] * SPEC["heads"]
    names = cells.evaluate_all("cells => cells.map((c) => c.getAttribute('aria-label'))")
    heads = {tuple(map(int, re.match(r"layer (\d+), head (\d+): ", n).groups())) for n in names}
    assert len(heads) == len(names) == 72  # every thumbnail named after its head, and its kind
    layer, head = SPEC["shown"]
    label = SPEC["kinds"][SPEC["labels"][layer][head]]
    assert grid.get_by_role("gridcell", name=f"layer {layer + 1}, head {head + 1}: {label}").count() == 1
    assert cells.evaluate_all("cells => cells.filter((c) => c.tabIndex === 0).length") == 1  # one Tab stop
    box.locator("button[name=run]").focus()
    page.keyboard.press("Tab")
    assert _focused(page)["layer"] == str(layer) and _focused(page)["head"] == str(head)
    for key in ["ArrowDown"] * 9 + [
        "ArrowRight"
    ] * 15:  # to the last layer's last head, and against the edges
        page.keyboard.press(key)
    assert (_focused(page)["layer"], _focused(page)["head"]) == ("5", "11")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    assert page.evaluate(f"() => {API}.shown") == [4, 0]
    assert box.locator(".mm-big-title").text_content().startswith("Layer 5, head 1 (")
    assert grid.get_by_role("gridcell", selected=True).get_attribute("data-layer") == "4"
    page.keyboard.press("Control+End")
    page.keyboard.press(" ")
    assert page.evaluate(f"() => {API}.shown") == [5, 11]
    page.keyboard.press("Tab")  # out of the grid at once: the next control
    assert _focused(page)["name"] == "Switch layer 6, head 12 off"
    page.keyboard.press("Shift+Tab")  # and back to the head it left
    assert (_focused(page)["layer"], _focused(page)["head"]) == ("5", "11")
    # the large head: a name, and Page Up / Page Down through all 72 heads
    big = box.locator(".mha-figure canvas")
    assert big.get_attribute("role") == "img" and "layer 6, head 12" in big.get_attribute("aria-label")
    big.focus()
    page.keyboard.press("ArrowRight")
    assert box.locator(".mha-readout").text_content().startswith("layer 6, head 12: query")
    page.keyboard.press("PageDown")
    assert page.evaluate(f"() => {API}.shown") == [0, 0]
    page.keyboard.press("PageUp")
    page.keyboard.press("PageUp")
    assert page.evaluate(f"() => {API}.shown") == [5, 10]
    page.evaluate(f"() => {{ {API}.shown = {list(SPEC['shown'])}; }}")
    assert not errors, errors


def test_a_menus_arrow_keys_choose_and_only_enter_or_leaving_it_switches_heads_off(ran):
    page, errors = ran
    box = page.locator(BOX)
    off = lambda: page.evaluate(f"() => {API}.off")  # noqa: E731
    layers = box.locator("select[name=layer_off]")
    layers.focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert layers.input_value() == "1" and off() == []  # chosen, not yet switched off
    page.keyboard.press("Enter")
    assert off() == [[1, h] for h in range(12)] and layers.input_value() == ""
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")  # changed its mind
    page.keyboard.press("Tab")
    assert len(off()) == 12
    patterns = box.locator("select[name=pattern_off]")
    patterns.focus()
    page.keyboard.press("ArrowDown")
    first = patterns.input_value()
    assert len(off()) == 12
    page.keyboard.press("Tab")  # leaving the menu switches its choice off
    labels = SPEC["labels"]
    expected = {(1, h) for h in range(12)} | {
        (layer, h) for layer in range(6) for h in range(12) if labels[layer][h] == first
    }
    assert {tuple(p) for p in off()} == expected
    box.locator("button[name=reset]").click()
    layers.select_option("5")  # a pick from the list (what a mouse does, and other checks) acts at once
    assert off() == [[5, h] for h in range(12)]
    _all_heads_on(page)
    assert not errors, errors


# -- the first load ----------------------------------------------------------------------------------------


def _throttle(cdp, mbit: float | None) -> None:
    """Chromium's network emulation (http only) in the DevTools session ``cdp``: `mbit` megabits per second,
    or none. (One session per page: a second session's "none" leaves the first one's throttle on.)"""
    rate = -1 if mbit is None else mbit * 1e6 / 8
    cdp.send(
        "Network.emulateNetworkConditions",
        {
            "offline": False,
            "latency": 0 if mbit is None else 20,
            "downloadThroughput": rate,
            "uploadThroughput": rate,
        },
    )


def test_the_first_run_says_its_size_shows_progress_draws_layers_as_they_come_and_can_be_stopped(
    browser, server
):
    page, errors = open_page(browser, PAGE, url=f"{server}/{PAGE}.html")
    box = page.locator(BOX)
    status, progress = box.locator(".mha-status"), box.locator("progress")
    assert status.text_content() == M["idle"] and f"{SPEC['characters'] / 1e6:.0f} MB" in M["idle"]
    assert status.get_attribute("aria-live") == "polite" and not progress.is_visible()
    cdp = page.context.new_cdp_session(page)
    _throttle(cdp, 20)
    for stop in ("Escape", "Cancel"):
        box.locator("button[name=run]").click()
        progress.wait_for()
        assert box.locator("button[name=cancel]").is_visible()
        assert re.search(r"[0-9.]+ of 29 MB", status.text_content())
        box.locator(".mha-figure canvas[data-mha-font-px]").wait_for()  # layer 1 is in: its heads, drawn
        waiting = box.locator(f"[role=gridcell][data-layer='5'][aria-label$='{M['thumb_waiting']}']")
        assert waiting.count() == 12 and progress.is_visible()  # the last layer is still loading
        assert 0 < float(progress.get_attribute("value")) < SPEC["characters"]
        assert status.text_content().startswith("Loading") and "of 6 layers drawn" in status.text_content()
        if stop == "Escape":
            page.keyboard.press("Escape")
        else:
            box.locator("button[name=cancel]").click()
        status.filter(has_text=M["cancelled"]).wait_for()
        assert not progress.is_visible() and not box.locator("button[name=cancel]").is_visible()
        assert not box.locator(".mha-figure").is_visible() and box.locator(".mm-readout").text_content() == ""
        assert (
            box.locator(f"[role=gridcell][aria-label$='{M['thumb_waiting']}']").count() == 0
        )  # as before Run
        assert _focused(page)["name"] == M["run"]  # not lost with the Cancel button
    _throttle(cdp, None)
    box.locator("button[name=run]").click()
    box.locator(".mm-readout").filter(has_text="All 72 heads on").wait_for()
    assert not progress.is_visible()
    _close(page, errors)


# The page's own float16 and base64 decoders (ports/bytes.js), counted on the main thread; the worker runs
# the port's own text (its function bytesPort), which no count reaches.
COUNT_DECODING = """(() => {
  const ns = (globalThis.mhaFrontEnd = {}), counts = (globalThis.mhaDecoded = {float16s: 0, base64Bytes: 0});
  for (const name of Object.keys(counts)) {
    let f = null;
    Object.defineProperty(ns, name, {
      get: () => f && ((...a) => { counts[name]++; return f(...a); }),
      set: (g) => { f = g; },
    });
  }
})();"""


def test_the_page_decodes_no_weight_on_its_main_thread(ran, minilm):
    page, errors = ran
    assert page.evaluate("() => mhaDecoded") == {"float16s": 0, "base64Bytes": 0}
    got = page.evaluate(f"s => {API}.attend(s)", "The cat sat on the mat.")
    tokens, expected = attend(minilm, "The cat sat on the mat.")  # (L, h, n, n)
    assert got["tokens"] == tokens
    torch.testing.assert_close(torch.tensor(got["attention"]), expected, atol=0.005, rtol=0)
    assert not errors, errors


# -- the difference view -----------------------------------------------------------------------------------

# A thumbnail's pixels away from the cross drawn over a head switched off; and the diverging scale's middle.
PIXELS = """([layer, head]) => {
  const canvas = document.querySelector(`.mha-minilm canvas[data-layer='${layer}'][data-head='${head}']`);
  const w = canvas.width, data = canvas.getContext('2d').getImageData(0, 0, w, canvas.height).data, out = [];
  for (let y = 2; y < canvas.height - 2; y += 3) for (let x = 2; x < w - 2; x += 3) {
    const i = 4 * (y * w + x);
    if (Math.abs(x - y) > 8 && Math.abs(x + y - w) > 8) out.push(Array.from(data.slice(i, i + 3)));
  }
  return out;
}"""
MIDDLE = [247, 247, 247]  # ColorBrewer RdBu's centre, the colour of "no change"


def test_the_difference_view_shows_what_switching_heads_off_changes(ran, minilm):
    page, errors = ran
    box = page.locator(BOX)
    title = box.locator(".mm-big-title")
    box.locator("select[name=layer_off]").select_option("0")
    box.locator(".mm-readout").filter(has_text="12 of 72 heads off").wait_for()
    box.locator("input[name=difference]").check()
    layer, head = SPEC["shown"]  # in layer 1: its weights cannot change
    pattern = SPEC["kinds"]["previous"]
    assert title.text_content() == M["big_diff_before"].format(
        layer=layer + 1, head=head + 1, pattern=pattern, first=1
    )
    assert all(p == MIDDLE for h in range(12) for p in page.evaluate(PIXELS, [0, h]))
    changed = sum(p != MIDDLE for p in page.evaluate(PIXELS, [1, 9]))
    assert changed > 20, "layer 2, head 10 looks unchanged in the difference view"
    page.evaluate(f"() => {{ {API}.shown = [1, 9]; }}")
    largest = float(re.search(r"the largest change is (\d+\.\d+)", title.text_content()).group(1))
    encoder, sentence = minilm, SPEC["defaults"]["sentence"]
    _, intact = attend(encoder, sentence)
    with ablate_encoder_heads(encoder, [(0, h) for h in range(12)]):
        _, off = attend(encoder, sentence)  # (L, h, n, n)
    expected = (off[1, 9] - intact[1, 9]).abs().max().item()
    assert largest > 0.1 and abs(largest - expected) < 0.01
    layout = page.evaluate(f"() => {API}.layout")
    ticks = [float(b["text"]) for b in layout["boxes"] if b["kind"] == "tick"]
    assert {b["text"] for b in layout["boxes"] if b["kind"] == "scale"} == {M["diff_scale"]}
    assert min(ticks) < 0 < max(ticks)  # a legend for both signs
    box.locator(".mha-figure canvas").focus()
    page.keyboard.press("ArrowRight")
    assert re.search(
        r"weight [0-9.]+ \(intact [0-9.]+, change [-+][0-9.]+\)", box.locator(".mha-readout").text_content()
    )
    box.locator("input[name=difference]").uncheck()
    assert "row i shows where token i looks" in title.text_content()
    _all_heads_on(page)
    page.evaluate(f"() => {{ {API}.shown = {list(SPEC['shown'])}; }}")
    assert not errors, errors


# -- axe-core ---------------------------------------------------------------------------------------------


# A width does not change colours, nor a theme widths: the two states cover both themes and both widths.
@pytest.mark.parametrize(("theme", "width"), [("light", 1280), ("dark", 390)])
def test_the_box_passes_axe_core_in_both_themes_on_desktop_and_phone(ran, theme, width):
    page, errors = ran
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(color_scheme=theme)  # the theme follows the reader's system
    page.locator(f"{BOX} .mm-readout").filter(has_text="heads").wait_for()
    # (before Run, the box is scanned with its page: tests/browser/test_site_pages.py)
    page.locator(f"{BOX} button[name=toggle]").click()
    page.locator(f"{BOX} .mm-readout").filter(has_text="1 of 72 heads off").wait_for()
    page.locator(f"{BOX} input[name=difference]").check()
    found = axe_findings(page, BOX)
    _all_heads_on(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.emulate_media(color_scheme="light")
    assert not found, f"after Run, a head off, the difference view ({theme}, {width} px): {found}"
    assert not errors, errors


# -- what a reader types (last: it leaves the box on a sentence of its own) --------------------------------


def test_the_box_shows_heads_switches_them_off_and_says_when_it_truncates(ran):
    tab, errors = ran
    root = tab.locator(BOX)
    assert root.locator(".mm-grid canvas").count() == 72
    root.locator("input[name=sentence]").fill("The cat sat on the mat because it was warm.")
    root.locator("button[name=run]").click()
    readout = root.locator(".mm-readout")
    readout.filter(has_text="All 72 heads on").wait_for()
    root.locator("canvas[data-layer='5'][data-head='2']").click()
    root.locator("button[name=toggle]").click()
    readout.filter(has_text="1 of 72 heads off").wait_for()
    assert "cosine" in readout.text_content()
    root.locator("select[name=layer_off]").select_option("0")
    readout.filter(has_text="13 of 72 heads off").wait_for()
    assert tab.evaluate(f"() => {API}.off.length") == 13
    root.locator("button[name=reset]").click()
    readout.filter(has_text="All 72 heads on").wait_for()
    long = " ".join(["word"] * (MAX_TOKENS + 20))
    root.locator("input[name=sentence]").fill(long)
    root.locator("button[name=run]").click()
    status = root.locator(".mha-status")
    status.filter(has_text="truncates").wait_for()
    assert f"has {MAX_TOKENS + 22} tokens" in status.text_content()
    got = tab.evaluate(f"s => {API}.tokenize(s)", long)
    assert len(got["tokens"]) == MAX_TOKENS and got["tokens"][-1] == "[SEP]" and got["truncated"]
    root.locator("input[name=sentence]").fill("   ")
    root.locator("button[name=run]").click()
    status.filter(has_text="Type a sentence first").wait_for()
    assert not errors, errors
