"""The decoder box of "Heads that work together" on the built site (issue 37): the page computes what Python
does.

Reads the built book (run `make book` first, as for tests/browser/test_site.py), opened from disk (file://)
with every other host blocked, and once over http://. The box (book/decoder/box.py,
book/decoder/static/decoderbox.js) must:
- compute with the weights script that the build wrote into _static/ (never inlined in the page) what
  book.decoder.model.predict computes: attention and probabilities within 2e-3, the same tokens and notes;
- refuse bad input with a plain Error whose message says why (never a TypeError or a RangeError), and show a
  message, never a broken picture, for a text the model cannot read whole;
- be usable by keyboard, print its static picture, fit a 390 px phone, and pass axe-core in both themes, as
  every figure does since issue 32.
"""

from __future__ import annotations

import numpy as np
import pytest

from book.decoder.induction import head_name
from book.decoder.model import DECODER, MESSAGES, predict
from book.decoder.page import WEIGHTS_SCRIPT
from tests.browser.figure_checks import assert_prints_its_picture, axe_findings
from tests.built_site import SITE, open_page

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PAGE = "chapters/induction_heads"
BOX = ".mha-decoder"
API = f"document.querySelector('{BOX}').mha"
TOLERANCE = 2e-3  # the bound on attention and probabilities
# (text, heads off): ordinary text, a repeat with either half of the circuit off, code, unknown characters
CASES = [
    ("The return statement leaves the current function call.", []),
    ("Xq7#kP2w and Xq7#kP2w", [[1, 0], [1, 1], [1, 2], [1, 3]]),
    ("Xq7#kP2w and Xq7#kP2w", [[0, 1], [0, 3]]),
    ("def f(x):\n    return x + 1\n", [[0, 0]]),
    ("caf\u00e9 \U0001f600 and " + "a long text " * 12, []),  # unknown characters, longer than the context
]


def _open(browser, url: str | None = None, **context):
    """The chapter (from disk unless `url`), every other host blocked, once its box has run; its errors."""
    page, errors = open_page(browser, PAGE, url=url, **context)
    page.locator(f"{BOX} .md-token").first.wait_for()  # the box has run the model on its text
    return page, errors


def _close(page, errors) -> None:
    page.context.close()
    assert not errors, errors


def _spec(page) -> dict:
    return page.evaluate(f"() => {API}.spec")


def _assert_equal_to_python(got: dict, text: str, off: list) -> float:
    """The page's predict against Python's; returns the largest difference."""
    expected = predict(text, off=[tuple(pair) for pair in off])
    assert got["tokens"] == expected["tokens"]
    assert (got["truncated"], got["unknown"], got["note"]) == (
        expected["truncated"],
        expected["unknown"],
        expected["note"],
    )
    attention = np.array(got["attention"])
    assert attention.shape == tuple(expected["attention"].shape)
    worst = float(np.abs(attention - expected["attention"].numpy()).max())
    for row, want in zip(got["top"], expected["top"], strict=True):
        assert len(row) == len(want) == 5
        probabilities = dict(row)
        for token, p in want:  # each of Python's five, unless it is tied with the sixth
            if token in probabilities:
                worst = max(worst, abs(probabilities[token] - p))
            else:
                assert p - want[-1][1] < 1e-4, (token, p, row)
        assert [p for _, p in row] == sorted((p for _, p in row), reverse=True)
    assert worst <= TOLERANCE, worst
    return worst


def test_the_page_predicts_what_python_predicts_from_disk_and_over_http(browser, server):
    page, errors = _open(browser)
    for text, off in CASES:
        got = page.evaluate(f"([t, off]) => {API}.predict(t, {{off}})", [text, off])
        _assert_equal_to_python(got, text, off)
    # what the box shows is the same model: its text's guesses and its right guesses on each copy
    spec = _spec(page)
    text = spec["defaults"]["text"]
    top = predict(text)["top"]
    chips = page.locator(f"{BOX} .md-token .md-guess").all_text_contents()
    assert chips == [spec["shown"].get(row[0][0], row[0][0]) for row in top]
    _close(page, errors)
    page, errors = _open(browser, f"{server}/{PAGE}.html")
    got = page.evaluate(f"([t, off]) => {API}.predict(t, {{off}})", list(CASES[1]))
    _assert_equal_to_python(got, *CASES[1])
    _close(page, errors)


def test_the_chinese_page_computes_from_the_english_sites_weights(browser):
    page, errors = _open(browser, (SITE / "zh" / f"{PAGE}.html").as_uri())
    got = page.evaluate(f"([t, off]) => {API}.predict(t, {{off}})", list(CASES[2]))
    _assert_equal_to_python(got, *CASES[2])
    assert not (SITE / "zh" / "_static" / WEIGHTS_SCRIPT).exists()  # one copy, the English site's
    _close(page, errors)


def test_the_weights_are_a_script_beside_the_box_never_inlined_and_the_page_stays_small():
    page = (SITE / f"{PAGE}.html").read_bytes()
    weights = SITE / "_static" / WEIGHTS_SCRIPT
    assert "decoder" in weights.name and weights.suffix == ".js"
    assert weights.read_bytes()[-300:-10] not in page  # not inlined
    assert len(page) < 2 * 2**20
    assert len(page) + weights.stat().st_size <= 8 * 2**20


def test_bad_input_is_refused_with_a_plain_error_whose_message_says_why(browser):
    page, errors = _open(browser)
    last = f"layer in 0..{DECODER.layers - 1} and head in 0..{DECODER.h - 1}"
    cases = {
        '""': MESSAGES["empty"],
        '"abc", {off: [[0, 9]]}': last,
        '"abc", {off: [[2, 0]]}': last,
        '"abc", {off: [[0]]}': last,
        '"abc", {off: [[0.5, 1]]}': last,
        '"abc", {off: "L1H2"}': "off must be a sequence of (layer, head) pairs",
        "null": "text must be a string",
        "42": "text must be a string",
    }
    for args, message in cases.items():
        outcome = "(e) => [e.constructor.name, e.message]"
        kind, text = page.evaluate(f"() => {API}.predict({args}).then(() => ['resolved', ''], {outcome})")
        assert kind == "Error" and message in text, (args, kind, text)
    # in the box: an empty text is a message, the picture stays; a long text and unknown characters are said
    box = page.locator(BOX)
    text = box.locator("input[name=text]")
    chips = box.locator(".md-token").count()
    text.fill("")
    status = box.locator(".mha-status")
    status.filter(has_text=MESSAGES["empty"]).wait_for()
    assert box.locator(".md-token").count() == chips and box.locator("canvas").is_visible()
    text.fill("na\u00efve \U0001f600 " + "x" * DECODER.context)
    status.filter(has_text="only the last").wait_for()
    said = status.text_content()
    assert "\u00ef" not in said  # cut away with the start of the text
    assert box.locator(".md-token").count() == DECODER.context
    text.fill("na\u00efve \U0001f600 text")
    status.filter(has_text="\U0001f600").wait_for()
    assert "2 characters" in status.text_content() and box.locator(".md-token").count() == 12
    _close(page, errors)


def test_heads_switched_off_in_the_box_change_what_it_guesses_as_in_python(browser):
    page, errors = _open(browser)
    spec = _spec(page)
    box = page.locator(BOX)
    text = spec["defaults"]["text"]
    m = len(text) // 2

    def copies(off):
        top = predict(text, off=off)["top"]
        right = [top[i][0][0] == text[i + 1] for i in range(len(text) - 1)]
        return sum(right[: m - 1]), sum(right[m : 2 * m - 1])

    accuracy = box.locator(".md-accuracy")
    first, second = copies([])
    assert (
        f"{first} of {m - 1} positions of the first copy and {second} of {m - 1}" in accuracy.text_content()
    )
    previous = [
        (layer, head)
        for layer in range(DECODER.layers)
        for head in range(DECODER.h)
        if spec["roles"][layer][head] == "previous token"
    ]
    assert previous, "the chapter names its previous-token heads in the box"
    for layer, head in previous:
        box.get_by_role("checkbox", name=head_name(layer, head), exact=False).check()
    first, second = copies(previous)
    accuracy.filter(has_text=f"and {second} of {m - 1} of the second").wait_for()
    assert page.evaluate(f"() => {API}.off") == [list(p) for p in previous]
    names = ", ".join(f"{head_name(*p)} (previous token)" for p in previous)
    assert box.locator(".md-heads-off").text_content() == f"{len(previous)} of 8 heads off: {names}."
    box.get_by_role("button", name=spec["messages"]["reset"]).click()
    box.locator(".md-heads-off").filter(has_text="All 8 heads on.").wait_for()
    _close(page, errors)


# -- keyboard -----------------------------------------------------------------------------------------------


def _focused(page) -> dict:
    return page.evaluate(
        """() => { const e = document.activeElement;
        return {tag: e.tagName, name: e.getAttribute('name'), role: e.getAttribute('role'),
                label: e.getAttribute('aria-label') || e.textContent}; }"""  # (a chip's name is its text)
    )


def test_every_control_is_reached_and_used_by_keyboard(browser):
    page, errors = _open(browser)
    spec = _spec(page)
    box = page.locator(BOX)
    box.locator("input[name=text]").focus()
    page.keyboard.press("Tab")
    assert _focused(page)["name"] == "random"
    before = box.locator("input[name=text]").input_value()
    page.keyboard.press("Enter")  # a new random sequence, written twice
    page.wait_for_function(f"(before) => {API}.settings.text !== before", arg=before)
    after = box.locator("input[name=text]").input_value()
    box.locator(".md-token").nth(len(after) - 1).wait_for()
    half = len(after) // 2
    assert (
        after != before and after[:half] == after[half:] and spec["lengths"][0] <= half <= spec["lengths"][1]
    )
    page.keyboard.press("Tab")  # the text: one Tab stop, on the chosen character (the last at first)
    focused = _focused(page)
    assert focused["role"] == "option" and focused["label"].startswith(f"character {len(after)} ")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(f"() => {API}.selected") == 1
    guesses = box.locator(".md-guesses").text_content()
    assert guesses.startswith("After character 2 ") and guesses.count("\u201d 0.") == 5
    page.keyboard.press("End")
    assert page.evaluate(f"() => {API}.selected") == len(after) - 1
    page.keyboard.press("Tab")  # the first check box: Space switches its head off
    assert _focused(page)["name"] == "off_0_0"
    page.keyboard.press("Space")
    box.locator(".md-heads-off").filter(has_text="1 of 8 heads off: L1H1.").wait_for()
    assert page.evaluate(f"() => {API}.off") == [[0, 0]]
    for _ in range(DECODER.layers * DECODER.h):  # to the reset button
        page.keyboard.press("Tab")
    assert _focused(page)["name"] == "reset"
    page.keyboard.press("Enter")
    box.locator(".md-heads-off").filter(has_text="All 8 heads on.").wait_for()
    page.keyboard.press("Tab")  # the head menu: the arrow keys choose a head, drawn at once
    assert _focused(page)["name"] == "head"
    shown = page.evaluate(f"() => {API}.shown")
    page.keyboard.press("ArrowDown")
    index = shown[0] * DECODER.h + shown[1] + 1
    assert page.evaluate(f"() => {API}.shown") == [index // DECODER.h, index % DECODER.h]
    page.keyboard.press("Tab")  # the picture: a name, the arrow keys read its cells, Page Down the next head
    canvas = box.locator("canvas")
    assert _focused(page)["role"] == "img" and "Page Up and Page Down" in canvas.get_attribute("aria-label")
    page.keyboard.press("ArrowUp")
    assert (
        box.locator(".mha-readout")
        .text_content()
        .startswith(head_name(index // DECODER.h, index % DECODER.h))
    )
    page.keyboard.press("PageDown")
    index += 1
    assert page.evaluate(f"() => {API}.shown") == [index // DECODER.h % DECODER.layers, index % DECODER.h]
    _close(page, errors)


# -- print, phone, dark, axe-core ----------------------------------------------------------------------------


def test_the_box_prints_its_static_picture(browser):
    page, errors = _open(browser)
    assert_prints_its_picture(page, f"{BOX} > img.md-print")
    assert not page.locator(f"{BOX} .md-tokens").is_visible()
    assert not page.locator(f"{BOX} button[name=random]").is_visible()
    _close(page, errors)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_box_fits_a_phone(browser, theme):
    page, errors = _open(browser, viewport={"width": 390, "height": 844}, color_scheme=theme)
    page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
    page.evaluate(f"() => {API}.random()")
    wide = page.evaluate(
        f"""() => {{ const box = document.querySelector('{BOX}'), right = box.getBoundingClientRect().right;
        return [...box.querySelectorAll('*')].filter((e) => e.getClientRects().length
            && !e.closest('.mha-figure') && e.getBoundingClientRect().right > right + 0.5)
            .map((e) => e.tagName + '.' + e.className); }}"""
    )
    assert wide == [], wide  # nothing runs past the box but the picture, which scrolls in its frame
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    # a text longer than the context: 128 tokens still fit the frame, the colour bar under the picture
    page.locator(f"{BOX} input[name=text]").fill("The cat sat on the mat because it was tired. " * 4)
    page.wait_for_function(f"() => {API}.layout && {API}.layout.cols === 128")
    drawn = page.evaluate(f"""() => {{ const c = document.querySelector('{BOX} canvas');
        return [c.getBoundingClientRect().width, c.parentElement.clientWidth, {API}.layout.under]; }}""")
    assert drawn[0] <= drawn[1] and drawn[2], drawn
    if theme == "dark":  # the box paints the page's dark background, its text light
        colour = page.evaluate(f"() => getComputedStyle(document.querySelector('{BOX} .md-accuracy')).color")
        assert sum(map(int, colour[4:-1].split(",")[:3])) > 3 * 150, colour
    _close(page, errors)


# A width does not change colours, nor a theme widths: the two states cover both themes and both widths.
@pytest.mark.parametrize(("theme", "width"), [("light", 1280), ("dark", 390)])
def test_the_box_passes_axe_core_in_both_themes_on_desktop_and_phone(browser, theme, width):
    page, errors = _open(browser, viewport={"width": width, "height": 900}, color_scheme=theme)
    page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
    # (as it opens, the box is scanned with its page: tests/browser/test_site_pages.py)
    page.locator(f"{BOX} input[name=off_1_0]").check()
    page.locator(f"{BOX} .md-heads-off").filter(has_text="1 of 8").wait_for()
    page.evaluate(f"() => {{ {API}.selected = 3; }}")
    found = axe_findings(page, BOX)
    assert not found, f"a head off, a character chosen: {found}"
    _close(page, errors)
