"""Each figure keeps its promise (issue 32): the defects a reader met, each reproduced on the harness page.

In Chromium, on the harness page of tests/browser/harness_page.py (the figures' own files over ``file://``,
no book theme), driven as a reader drives them, with the keyboard where a reader would: a number box never
commits a number half typed, a setting that depends on another follows it and says so, "show numbers" writes
in the cells, the stepper reads out its weights and keeps the focus, the window explorer shows the reach the
chapter describes and redraws at a new width, a long word wraps inside its figure, the toy model names the
tokens it reads, and every picture has a name, a keyboard and a read-out. The same checks on the built book,
with the theme around the figures: tests/browser/test_site_keyboard.py, test_site_axe_*.py.
"""

from __future__ import annotations

import re

import pytest

from book.widgets.frontend import calculator_config, explorer_config, stepper_config
from book.widgets.windows import windows_config
from tests.browser.harness_page import tiny_stages, write_harness
from tests.contrast import with_contrast
from tests.port_cases import trained_like_model

SENTENCE = "the cat sat on the mat because it was tired"  # 10 tokens


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    payload, _ = trained_like_model()
    stages, tokens = tiny_stages()
    explorer = {"d_model": 32, "h": 8, "mask": "padding", "valid_length": 8, "sentence": SENTENCE}
    roots = [
        ("mha-explorer", "explorer", explorer_config(explorer)),
        ("mha-explorer", "trained", explorer_config({"sentence": "3 A5 2 ?", "mask": "causal"}, payload)),
        ("mha-stepper", "stepper", stepper_config(stages, tokens, "concat")),
        ("mha-calculator", "calculator", calculator_config({"model": "Llama 3.1 8B", "context": 4096})),
        ("mha-windows", "windows", windows_config()),
    ]
    return write_harness(tmp_path_factory.mktemp("promises"), roots)


@pytest.fixture(scope="module")
def context(browser):
    context = browser.new_context(viewport={"width": 1000, "height": 900})
    yield context
    context.close()


@pytest.fixture()
def page(context, harness):
    """A fresh harness page per test (its figures at their first settings), with page errors collected."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(harness.as_uri())
    page.wait_for_function(
        "() => document.getElementById('windows').mha && document.getElementById('windows').mha.layout"
    )
    yield page
    page.close()
    assert errors == [], errors


def settings(page, root: str) -> dict:
    return page.evaluate("id => document.getElementById(id).mha.settings", root)


def status(page, root: str) -> str:
    return page.locator(f"#{root} .mha-status").text_content()


def retype(page, box, text: str) -> list:
    """Select a box's text and type `text` key by key, as a reader does; the box's figure's settings after
    each key."""
    box.click()
    page.keyboard.press("ControlOrMeta+a")
    root = box.evaluate("b => b.closest('.mha-controls').parentElement.id")
    seen = []
    for key in text:
        page.keyboard.type(key)
        seen.append(settings(page, root))
    return seen


# -- number boxes: a value is committed on Enter, on leaving the box or with its arrows, never half typed ----


@pytest.mark.parametrize(
    ("root", "name", "over", "top"),
    [
        ("calculator", "context", 16_777_217, 16_777_216),
        ("calculator", "batch", 4097, 4096),
        ("windows", "n", 33, 32),
        ("explorer", "seed", 2**31, 2**31 - 1),
    ],
)
def test_a_number_box_commits_no_number_half_typed(page, root, name, over, top):
    box = page.locator(f"#{root} input[name={name}]")
    assert box.get_attribute("type") == "number" and int(box.get_attribute("max")) == top
    first = settings(page, root)[name]
    typed = retype(page, box, str(over))  # on the way: 1, 16, 167, ... 1677721 are settings no one chose
    assert [s[name] for s in typed] == [first] * len(typed)
    page.keyboard.press("Enter")  # one more than the box allows: said, and nothing changes
    assert settings(page, root)[name] == first
    assert f"must be a whole number from {box.get_attribute('min')} to {top}." in status(page, root)
    page.keyboard.press("Escape")  # the setting back in the box, and no warning left
    assert box.input_value() == str(first) and "whole number" not in status(page, root)
    retype(page, box, str(top))
    page.keyboard.press("Tab")  # leaving the box commits it
    assert settings(page, root)[name] == top
    box.focus()
    page.keyboard.press("ArrowDown")  # its arrows commit at once
    assert settings(page, root)[name] == top - 1


# -- settings that follow others: never silently -------------------------------------------------------------


def test_the_valid_length_follows_a_sentence_typed_over_the_old_one(page):
    """Selecting the sentence and typing a new one went through a one-word sentence and left the valid length
    at 1 for good, with every head on key 1; it now comes back, and says why it is low while it is."""
    box, slider = (
        page.locator("#explorer input[name=sentence]"),
        page.locator("#explorer input[name=valid_length]"),
    )
    words = " ".join(f"w{i}" for i in range(11))
    typed = retype(page, box, words)
    assert typed[0]["valid_length"] == 1  # "w": one token
    assert settings(page, "explorer")["valid_length"] == 8 and slider.input_value() == "8"
    assert status(page, "explorer") == ""
    retype(page, box, "a b c")
    assert settings(page, "explorer")["valid_length"] == 3
    assert status(page, "explorer") == (
        "The valid length is 3 while the sentence has 3 tokens; it goes back to 8 when the sentence has 8 "
        "tokens or more."
    )
    page.locator("#explorer select[name=mask]").select_option("causal")  # no padding: nothing to say
    assert status(page, "explorer") == ""


def test_a_refused_sentence_leaves_the_valid_length_as_the_picture_shows_it(page):
    """A sentence the model cannot read kept the picture but lowered the valid length (14 to 5) for good."""
    page.evaluate(
        "s => document.getElementById('trained').mha.update(s)",
        {"sentence": "3 A5 2 ? 1 2", "mask": "causal + padding", "valid_length": 5},
    )
    slider = page.locator("#trained input[name=valid_length]")
    page.locator("#trained input[name=sentence]").fill("3 xyz")  # pasted: refused, two tokens
    assert "cannot embed" in status(page, "trained") and slider.input_value() == "5"  # as drawn
    retype(page, page.locator("#trained input[name=sentence]"), "3 A5 2 ? 1 2 3")
    assert settings(page, "trained")["valid_length"] == 5 and slider.input_value() == "5"


def test_heads_and_the_layer_shown_say_when_they_follow(page):
    page.locator("#explorer select[name=d_model]").select_option("12")
    assert settings(page, "explorer")["h"] == 6
    assert status(page, "explorer") == "The heads h changed from 8 to 6: 8 does not divide d_model = 12."
    page.locator("#explorer select[name=mask]").select_option("none")
    assert status(page, "explorer") == ""
    box = page.locator("#windows input[name=layers]")
    retype(page, box, "3")
    page.keyboard.press("Enter")
    assert settings(page, "windows")["layer"] == 3
    assert status(page, "windows").startswith(
        "The show layer changed from 6 to 3: layers is now 3. After layer 3"
    )


# -- numbers in the cells --------------------------------------------------------------------------------


def test_show_numbers_writes_the_weights_in_the_cells(page, context):
    """In the cells, not in tables 900 px below the picture."""
    explorer = page.locator("#explorer")
    before = explorer.locator("canvas").screenshot()
    explorer.locator("input[name=show_numbers]").check()
    layout = page.evaluate("() => document.getElementById('explorer').mha.layout")
    assert layout["printed"] and layout["cw"] >= 26
    assert explorer.locator("canvas").screenshot() != before
    assert explorer.locator("table").count() == 1  # the shapes; no table of numbers
    assert not explorer.locator(".mha-note").nth(1).is_visible()
    phone = context.new_page()
    phone.set_viewport_size({"width": 390, "height": 800})
    phone.goto(page.url)
    phone.evaluate(
        "() => document.getElementById('explorer').mha.update({sentence: 'a b c d e f g h i j k l m n o p'})"
    )
    phone.locator("#explorer input[name=show_numbers]").check()
    note = phone.locator("#explorer .mha-note").nth(1)  # 16 tokens on a phone: too narrow, and it says so
    assert not phone.evaluate("() => document.getElementById('explorer').mha.layout.printed")
    assert note.is_visible() and "at least 26 px wide" in note.text_content()
    phone.close()


# -- the stepper ------------------------------------------------------------------------------------------


def test_the_stepper_prints_and_reads_out_the_weights(page):
    """So that "rows sum to 1" can be checked: each weight in its cell, and read out with its row's sum."""
    page.evaluate("() => document.getElementById('stepper').mha.update({stage: 'weights'})")
    assert page.evaluate("() => document.getElementById('stepper').mha.layout.printed")
    slider = page.locator("#stepper input[name=stage]")
    assert slider.get_attribute("aria-valuetext") == "10 of 13: attention weights"  # not "9"
    canvas = page.locator("#stepper canvas")
    canvas.focus()
    readout = page.locator("#stepper .mha-readout")
    text = readout.text_content()
    assert re.fullmatch(
        r"attention weights, head 1: query 1 \(\u201cthe\u201d\), key 1 \(\u201cthe\u201d\): 0\.\d{4}; "
        r"row 1 sums to 1\.0000",
        text,
    ), text
    page.keyboard.press("PageDown")
    page.keyboard.press("ArrowDown")
    assert readout.text_content().startswith("attention weights, head 2: query 2 (\u201ccat\u201d), key 1")
    page.keyboard.press("Escape")
    assert readout.text_content() == ""
    page.keyboard.press("ArrowRight")  # the next stage is another reader's business: no stage change here
    assert settings(page, "stepper") == {"stage": "weights"}


def test_the_stepper_keeps_the_focus_at_its_last_stage(page):
    next_ = page.locator("#stepper button", has_text="next")
    next_.focus()
    page.keyboard.press("Enter")  # concatenation -> output, the last stage
    assert settings(page, "stepper") == {"stage": "out"}
    assert (
        page.locator("#stepper input[name=stage]").get_attribute("aria-valuetext")
        == "13 of 13: output projection"
    )
    assert next_.get_attribute("aria-disabled") == "true"
    assert page.evaluate("() => document.activeElement.textContent") == next_.text_content()  # not lost
    page.keyboard.press("Enter")  # nothing beyond the last
    assert settings(page, "stepper") == {"stage": "out"}
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("ArrowLeft")  # the slider
    assert settings(page, "stepper") == {"stage": "concat"}


# The contrast of each stage's name as it is painted: its colour, faded by its own and its parents' opacity,
# over the background behind it (opacity was how the stages to come were dimmed, to 4.08:1).
_STAGE_CONTRAST = with_contrast("""
  const out = [];
  for (const button of document.querySelectorAll('#stepper .mha-stage-link')) {
    let back = [255, 255, 255], alpha = 1;
    for (let e = button; e; e = e.parentElement) {
      alpha *= Number(getComputedStyle(e).opacity);
      const b = rgb(getComputedStyle(e).backgroundColor);
      if (b.length < 4 || b[3] > 0.5) { back = b.slice(0, 3); break; }
    }
    const ink = rgb(getComputedStyle(button).color).slice(0, 3);
    const text = ink.map((c, i) => alpha * c + (1 - alpha) * back[i]);
    out.push(contrast(text, back));
  }
  return out;
""")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_stepper_s_stages_to_come_read_at_4_5_to_1(page, theme):
    page.evaluate(f"() => {{ document.documentElement.dataset.theme = '{theme}'; }}")
    page.evaluate("() => { document.body.style.color = '#222832'; }")  # the book theme's text, light
    page.evaluate("() => document.getElementById('stepper').mha.update({stage: 'x'})")  # 12 stages to come
    ratios = page.evaluate(_STAGE_CONTRAST)
    assert len(ratios) == 13 and min(ratios) >= 4.5, ratios


# -- the window explorer -----------------------------------------------------------------------------------


def test_the_window_explorer_shows_the_reach_the_chapter_describes(page):
    """Its first settings hold enough tokens to show six local layers of window 4 reaching 18 tokens back."""
    page.locator("#windows select[name=global_period]").select_option("0")  # "no global layer"
    assert (
        page.locator("#windows select[name=global_period] option:checked").text_content() == "no global layer"
    )
    assert status(page, "windows").startswith("After layer 6, token 24 has seen inputs 6 to 24.")  # 18 back
    layout = page.evaluate("() => document.getElementById('windows').mha.layout")
    kinds = {b["kind"] for b in layout["boxes"]}
    assert "bar" not in kinds and "swatch" in kinds  # yes/no: two colours, not a 0-1 scale
    assert [b["text"] for b in layout["boxes"] if b["kind"] == "legend"] == ["yes", "no"]
    page.locator("#windows canvas").focus()  # positions from 1, in the read-out as on the axes
    page.keyboard.press("End")
    assert page.locator("#windows .mha-readout").text_content() == (
        "Layer 6 (local, window 4): token 1 may attend to token 24: no; after layer 6, token 1 has seen "
        "input 24: no."
    )


def test_the_window_explorer_redraws_at_its_new_width(page):
    """Turned from a desktop to a phone, it kept its old width: the key was cut at 390 px."""
    wide = page.evaluate("() => document.getElementById('windows').mha.layout.width")
    page.set_viewport_size({"width": 390, "height": 800})
    page.wait_for_function(
        "() => { const el = document.getElementById('windows');"
        " return el.mha.layout.width <= el.querySelector('.mha-figure').clientWidth; }"
    )
    assert page.evaluate("() => document.getElementById('windows').mha.layout.width") < wide


# -- text: long words, the toy model's tokens, large numbers -------------------------------------------------


def test_a_long_word_wraps_inside_its_figure(page):
    page.set_viewport_size({"width": 390, "height": 800})
    word = "x" * 160
    page.evaluate(f"() => document.getElementById('explorer').mha.update({{sentence: 'a {word}'}})")
    retype(page, page.locator("#trained input[name=sentence]"), f"3 {word}")
    assert "cannot embed" in status(page, "trained")
    for root in ("explorer", "trained"):
        over = page.evaluate(
            """id => [...document.querySelectorAll(`#${id}, #${id} *`)]
                .filter(e => !e.matches('canvas, .mha-figure') && e.scrollWidth > e.clientWidth + 1
                             && getComputedStyle(e).overflowX === 'visible')
                .map(e => e.className || e.tagName)""",
            root,
        )
        width = page.evaluate(f"() => document.getElementById('{root}').getBoundingClientRect().right")
        right = page.evaluate(
            f"() => Math.max(...[...document.querySelectorAll('#{root} p, #{root} td, #{root} code')]"
            ".map(e => e.getBoundingClientRect().right))"
        )
        assert not over and right <= width, (root, over, right, width)


def test_the_toy_model_names_itself_and_the_tokens_it_reads(page):
    """Its note read "Trained model (trained model)", and a token it cannot read did not say which it can."""
    known = "0\u20137, A0\u2013A7, B0\u2013B7, C0\u2013C7, ?"
    assert page.locator("#trained .mha-note").first.text_content() == (
        "Trained model (recall-3-split): d_model = 16 and h = 4 are fixed by its weights, and the seed "
        f"plays no part. It reads the tokens {known}, separated by spaces."
    )
    retype(page, page.locator("#trained input[name=sentence]"), "3 9 x")
    assert status(page, "trained") == (
        f"This model cannot embed that sentence: unknown tokens '9', 'x'; it reads only the tokens {known}"
        " (The picture still shows the last valid input.)"
    )


def test_the_calculator_writes_large_numbers_with_large_units_and_grouped_digits(page):
    """Not "2724067590852.84 T" nor "589824.00 TiB"."""
    rows = page.evaluate(
        """() => document.getElementById('calculator').mha.update(
              {model: 'Llama 3.1 405B', context: 16777216, batch: 4096, dtype: 'float32'}).rows"""
    )
    text = "\n".join(value for _, value in rows)
    assert not re.search(r"\d{4}(\.\d+)? ?([kMGTPEZY]|[KMGTPEZY]iB|FLOP)", text), text
    assert "16,777,216 tokens x 4,096 sequences" in text
    assert re.search(r"\d\.\d\d (P|E|Z|Y)iB", text) and re.search(r"\d\.\d\d (P|E|Z|Y)\b", text), text


# -- every picture: a name, the keyboard, a read-out ---------------------------------------------------------


def test_every_picture_has_a_name_a_keyboard_and_a_read_out(page):
    for root in ("explorer", "trained", "stepper", "windows"):
        canvas = page.locator(f"#{root} canvas")
        assert canvas.get_attribute("role") == "img" and canvas.get_attribute("tabindex") == "0", root
        assert len(canvas.get_attribute("aria-label")) > 30, root
        assert not re.search(r"\ban [0-9]", canvas.get_attribute("aria-label")), root  # not "an 9 by 9"
        help_ = page.locator(f"#{canvas.get_attribute('aria-describedby')}")
        assert "arrow keys" in help_.text_content(), root
        readout = page.locator(f"#{root} .mha-readout")
        canvas.focus()
        page.keyboard.press("ArrowRight")
        assert readout.text_content(), root
        page.keyboard.press("Escape")
        assert readout.text_content() == "", root
