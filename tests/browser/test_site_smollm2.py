"""The SmolLM2 figure on the built site (book/smollm2/static/smollm2.js), as a reader offline meets it.

Reads the built book (run `make book` first). From disk (file://), with every other host blocked, the figure
``mha-smollm2`` on chapters/trained_heads.html opens on its default view, draws it from the weights stored in
the page (no request for them), and says its Notice, the one book.smollm2.page.notices computed; any of the
270 heads is reached from the controls, the layer's grid and the large head's Page Up / Page Down; every head
of the grid is named with its group and census kind, and the status and read-outs are live regions; at 390 px
it fits, in dark mode and light it passes axe-core, and print shows its picture of the default view. One tab
(the ``tab`` fixture) serves the module's tests, each leaving the figure on its default view; print and the
Chinese page have their own.
"""

from __future__ import annotations

import pytest

from book.smollm2.census import load_results
from book.smollm2.page import DEFAULT_PROMPT, figure_spec, notices
from book.smollm2.stored import load_stored
from tests.browser.figure_checks import assert_prints_its_picture, axe_findings
from tests.built_site import open_page

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PAGE = "chapters/trained_heads"
ROOT = ".mha-smollm2"
API = f"document.querySelector('{ROOT}').mha"
RESULTS, STORED = load_results(), load_stored()
SPEC = figure_spec(RESULTS, STORED)
M = SPEC["messages"]
NAMES = [p["name"] for p in STORED["prompts"]]
NOTICES = notices(RESULTS, STORED)


def _open(browser, lang: str = "", **context):
    requests: list[str] = []
    page, errors = open_page(browser, f"{lang}/{PAGE}" if lang else PAGE, requests=requests, **context)
    page.evaluate(f"() => {API}.ready")
    return page, errors, requests


@pytest.fixture(scope="module")
def tab(browser):
    page, errors, requests = _open(browser, viewport={"width": 1280, "height": 900}, color_scheme="light")
    yield page, errors, requests
    page.context.close()
    assert not errors, errors


def _default(page) -> None:
    page.evaluate(
        f"() => {API}.update({{prompt: {DEFAULT_PROMPT!r}, layer: {SPEC['defaults']['layer']}, "
        f"head: {SPEC['defaults']['head']}}})"
    )
    page.locator(f"{ROOT} .ms-notice").filter(
        has_text=NOTICES[NAMES.index(DEFAULT_PROMPT)]["text"]
    ).wait_for()


def test_it_opens_on_its_default_view_from_the_stored_weights_and_says_its_notice(tab):
    page, errors, requests = tab
    root = page.locator(ROOT)
    assert root.count() == 1
    drawn = page.evaluate(f"() => {API}.drawn")
    d = SPEC["defaults"]
    assert (drawn["prompt"], drawn["layer"], drawn["head"], drawn["live"]) == (
        d["prompt"],
        d["layer"],
        d["head"],
        False,
    )
    index = NAMES.index(DEFAULT_PROMPT)
    assert drawn["tokens"] == STORED["prompts"][index]["tokens"]
    assert root.locator(".ms-notice").text_content() == NOTICES[index]["text"]
    status = root.locator(":scope > .mha-status")  # the figure's own, not "Run on your own text"'s
    assert status.get_attribute("role") == "status" and status.get_attribute("aria-live") == "polite"
    assert root.locator(".ms-notice").get_attribute("aria-live") == "polite"
    assert root.locator(".mha-readout").get_attribute("aria-live") == "polite"
    # the stored prompt's weights are the file's, within half a step of 1/255
    got = page.evaluate(
        f"() => {API}.stored({DEFAULT_PROMPT!r}).then((s) => s.attention[{d['layer']}][{d['head']}])"
    )
    from book.smollm2.stored import dequantise

    expected = dequantise(STORED)[index][d["layer"], d["head"]]
    assert (
        max(abs(a - b) for ra, rb in zip(got, expected, strict=True) for a, b in zip(ra, rb, strict=True))
        < 1e-6
    )
    assert not any(r.startswith(("http:", "https:")) for r in requests)
    # the scores shown are the prompt's and the census's, and the kind and group the census's
    cells = root.locator(".ms-scores td").all_text_contents()
    score = STORED["prompts"][index]["scores"]
    assert cells[:2] == [
        f"{score['sink'][d['layer']][d['head']]:.2f}",
        f"{RESULTS['scores']['sink'][d['layer']][d['head']]:.2f}",
    ]
    assert (
        root.locator(".ms-kind")
        .text_content()
        .startswith("Kind in the census: induction head. Key/value group 3")
    )
    assert not errors, errors


def test_every_head_is_named_and_reached_by_keyboard(tab):
    page, errors, _ = tab
    root = page.locator(ROOT)
    d = SPEC["defaults"]
    grid = root.get_by_role("grid", name=f"The 9 heads of layer {d['layer'] + 1}", exact=False)
    cells = grid.get_by_role("gridcell")
    assert cells.count() == 9
    names = cells.evaluate_all("cells => cells.map((c) => c.getAttribute('aria-label'))")
    labels = RESULTS["labels"][d["layer"]]
    assert names == [f"head {i + 1}, group {i // 3 + 1}: {SPEC['kinds'][labels[i]]}" for i in range(9)]
    assert cells.evaluate_all("cells => cells.filter((c) => c.tabIndex === 0).length") == 1
    root.locator("select[name=head]").focus()
    page.keyboard.press("Tab")  # into the grid, on the head shown
    assert page.evaluate("() => document.activeElement.dataset.head") == str(d["head"])
    for key in ("ArrowUp", "ArrowUp", "ArrowLeft", "Enter"):  # group 3 -> group 1, head 7 -> head 1
        page.keyboard.press(key)
    assert page.evaluate(f"() => [{API}.drawn.layer, {API}.drawn.head]") == [d["layer"], 0]
    assert root.locator("select[name=head]").input_value() == "0"
    big = root.locator(".mha-figure canvas")
    assert big.get_attribute("role") == "img" and f"layer {d['layer'] + 1}, head 1 " in big.get_attribute(
        "aria-label"
    )
    big.focus()
    page.keyboard.press("ArrowDown")
    assert root.locator(".mha-readout").text_content().startswith(f"layer {d['layer'] + 1}, head 1: query")
    page.keyboard.press("PageUp")  # head 9 of the layer before
    assert page.evaluate(f"() => [{API}.drawn.layer, {API}.drawn.head]") == [d["layer"] - 1, 8]
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    assert page.evaluate(f"() => [{API}.drawn.layer, {API}.drawn.head]") == [d["layer"], 1]
    root.locator("select[name=layer]").select_option(index=29)  # the last layer, from its control
    root.locator("select[name=head]").select_option(index=8)
    assert page.evaluate(f"() => [{API}.drawn.layer, {API}.drawn.head]") == [29, 8]
    for name in NAMES:  # every prompt draws, with its own notice
        root.locator("select[name=prompt]").select_option(value=name)
        notice = NOTICES[NAMES.index(name)]["text"]
        root.locator(".ms-notice").filter(has_text=notice).wait_for()
        assert page.evaluate(f"() => {API}.drawn.prompt") == name
    _default(page)
    assert not errors, errors


@pytest.mark.parametrize(("theme", "width"), [("light", 1280), ("dark", 390)])
def test_it_fits_a_phone_and_passes_axe_core_in_both_themes(tab, theme, width):
    page, errors, _ = tab
    page.set_viewport_size({"width": width, "height": 900})
    page.emulate_media(color_scheme=theme)
    page.wait_for_timeout(100)  # the picture redraws at its new width
    fit = page.evaluate(
        f"""() => {{ const r = document.querySelector('{ROOT}'), box = r.getBoundingClientRect();
        return {{doc: document.documentElement.scrollWidth, view: innerWidth, root: r.scrollWidth,
                 width: r.clientWidth, right: box.right}}; }}"""
    )
    found = axe_findings(page, ROOT)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.emulate_media(color_scheme="light")
    assert fit["doc"] <= fit["view"] and fit["root"] <= fit["width"] + 1, fit
    assert not found, f"({theme}, {width} px): {found}"
    assert not errors, errors


def test_print_shows_the_picture_of_the_default_view(browser):
    page, errors, _ = _open(browser)
    assert_prints_its_picture(page, f"{ROOT} > img.mm-print")
    assert not page.locator(f"{ROOT} .ms-grid").is_visible()
    assert not page.locator(f"{ROOT} select[name=prompt]").is_visible()
    page.context.close()
    assert not errors, errors


def test_the_chinese_page_draws_it_in_chinese(browser):
    page, errors, _ = _open(browser, "zh", viewport={"width": 390, "height": 900}, color_scheme="dark")
    root = page.locator(ROOT)
    assert page.evaluate(f"() => {API}.drawn.prompt") == DEFAULT_PROMPT
    assert root.locator(".ms-notice").text_content().startswith("请注意：第 19 层的头 7（普查中是归纳头）")
    assert root.locator("label").all_text_contents()[:3] == ["提示", "层", "头"]
    found = axe_findings(page, ROOT)
    page.context.close()
    assert not found, found
    assert not errors, errors
