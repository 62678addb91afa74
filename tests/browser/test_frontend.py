"""The browser front ends in book/widgets/static/, in headless Chromium: controls, drawing, text, live mode.

A tiny harness page (the static files copied beside an HTML file that includes them with classic
``<script src>`` tags and their data inline, as the book's pages do) is opened over ``file://``, the
stricter scheme, and every request to another host is aborted. The tests check that every control drives
the picture, that the keyboard reads it out, that text is shown literally, that a reader's bad input keeps
the picture and says why, that the stepper shows the stages it is given and that the calculator and the
window explorer answer their controls. The harness page (tests/browser/harness_page.py) writes the inline
data with the helpers of :mod:`book.widgets.frontend`, in the format documented at the top of each JavaScript
file, as the book's pages carry it. The last tests load the same files as anywidget's ES module
(:func:`book.widgets.frontend.widget_esm`) in live mode, over ``http://`` (Chromium runs no module from a
``blob:`` URL on a ``file://`` page), where the page draws what Python sends.

The numbers the ports compute (book/widgets/static/ports/) are checked against Python in the fast lane, by
each twin's unit test file (tests/ports.py); the built book's pages check each figure's numbers once more end
to end (tests/browser/test_site*.py).
"""

from __future__ import annotations

import functools
import http.server
import itertools
import threading

import pytest
import torch

from book.chapters.tasks import TASKS
from book.chapters.training import OneLayerAttentionModel
from book.compute.explorer import explorer_weights, head_choices, split_tokens
from book.compute.stages import STAGES
from book.widgets.frontend import (
    calculator_config,
    explorer_config,
    stepper_config,
)
from book.widgets.spec import sparse_spec, windows_spec
from book.widgets.windows import windows_config
from mha.multihead import MultiHeadAttention
from scripts.chromium import CHROMIUM
from tests.browser.harness_page import tiny_stages, write_harness
from tests.browser.widget_harness import RENDER_LIVE, live_payload
from tests.port_cases import TRAINED_SENTENCES, trained_like_model

SENTENCE = "the cat sat on the mat because it was tired"

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (/usr/bin/chromium)")


# ---------------------------------------------------------------------------------------------------------
# Fixtures: one browser, the harness over file:// (and http://, for the live widgets' ES modules)
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    directory = tmp_path_factory.mktemp("frontend")
    payload, _ = trained_like_model()
    stages, tokens = tiny_stages()
    write_harness(
        directory,
        [
            ("mha-explorer", "explorer", explorer_config({"d_model": 32, "h": 4, "sentence": SENTENCE})),
            (
                "mha-explorer",
                "trained",
                explorer_config({"sentence": "3 A5 2 ?", "mask": "causal"}, payload),
            ),
            ("mha-stepper", "stepper", stepper_config(stages, tokens, "x")),
            ("mha-calculator", "calculator", calculator_config({"model": "Llama 3.1 8B", "context": 4096})),
            ("mha-windows", "windows", windows_config(n=12, window=3, layers=4, global_period=2)),
            ("mha-sparse", "sparse", {"spec": sparse_spec(), "settings": {"sentence": SENTENCE, "top_k": 3}}),
        ],
    )
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {
        "file": (directory / "index.html").as_uri(),
        "http": f"http://127.0.0.1:{server.server_port}/index.html",
    }
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page(browser, site):
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on(
        "console",
        lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None,
    )

    def only_local(route):
        url = route.request.url
        local = url.startswith("file://") or url.startswith("http://127.0.0.1:")
        route.continue_() if local else route.abort()

    page.route("**/*", only_local)
    page.goto(site["file"])
    page.wait_for_function("document.getElementById('calculator').mha !== undefined")
    page.problems = problems
    yield page
    page.close()


@pytest.fixture(autouse=True)
def _no_page_errors(request):
    yield
    if "page" in request.fixturenames:
        page = request.getfixturevalue("page")
        assert page.problems == [], page.problems


def update(page, root: str, settings: dict):
    return page.evaluate("([id, s]) => document.getElementById(id).mha.update(s)", [root, settings])


def settings_of(page, root: str) -> dict:
    return page.evaluate("id => document.getElementById(id).mha.settings", root)


def commit(box, value: str) -> None:
    """Type a value into a number box and press Enter: a number box commits then, not while typed."""
    box.fill(value)
    box.press("Enter")


def picture(page, root: str = "explorer") -> str:
    return page.evaluate("id => document.querySelector('#' + id + ' canvas').toDataURL()", root)


# ---------------------------------------------------------------------------------------------------------
# The explorer
# ---------------------------------------------------------------------------------------------------------


def test_controls_agree_with_settings(page):
    settings = {
        "d_model": 48,
        "h": 6,
        "mask": "causal + padding",
        "valid_length": 3,
        "sentence": "a b c d",
        "seed": 9,
    }
    update(page, "explorer", settings)
    assert settings_of(page, "explorer") == {**settings, "source": "fresh"}
    root = page.locator("#explorer")
    assert root.locator("select[name=d_model]").input_value() == "48"
    assert root.locator("select[name=h]").input_value() == "6"
    options = root.locator("select[name=h] option").evaluate_all("os => os.map(o => Number(o.value))")
    assert options == head_choices(48)
    assert root.locator("select[name=mask]").input_value() == "causal + padding"
    assert root.locator("input[name=valid_length]").input_value() == "3"
    assert root.locator("input[name=valid_length]").get_attribute("max") == "4"
    assert root.locator("input[name=valid_length]").is_enabled()
    assert root.locator("input[name=sentence]").input_value() == "a b c d"
    assert root.locator("input[name=seed]").input_value() == "9"
    for name in ("d_model", "h", "mask", "valid_length", "sentence", "seed"):  # every control is labelled
        control = root.locator(f"[name={name}]")
        assert root.locator(f"label[for='{control.get_attribute('id')}']").count() == 1
    # d_model 48 -> 32 keeps no divisor 6: h becomes the largest divisor below it, 4
    update(page, "explorer", {"d_model": 32})
    assert settings_of(page, "explorer")["h"] == 4
    assert root.locator("select[name=h]").input_value() == "4"
    update(page, "explorer", {"mask": "causal"})
    assert root.locator("input[name=valid_length]").is_disabled()


def test_every_control_changes_the_drawing(page):
    update(
        page,
        "explorer",
        {"d_model": 16, "h": 4, "mask": "padding", "valid_length": None, "sentence": SENTENCE, "seed": 0},
    )
    root = page.locator("#explorer")

    def changes(action, key, value):
        before = picture(page)
        action()
        assert picture(page) != before, key
        assert settings_of(page, "explorer")[key] == value, key

    changes(lambda: root.locator("select[name=d_model]").select_option("24"), "d_model", 24)
    changes(lambda: root.locator("select[name=h]").select_option("8"), "h", 8)
    changes(
        lambda: root.locator("select[name=mask]").select_option("causal + padding"),
        "mask",
        "causal + padding",
    )
    changes(lambda: root.locator("input[name=valid_length]").fill("4"), "valid_length", 4)
    changes(lambda: root.locator("input[name=sentence]").fill("one two three"), "sentence", "one two three")
    changes(lambda: commit(root.locator("input[name=seed]"), "42"), "seed", 42)
    # the keyboard: arrow keys on a focused select or number input
    root.locator("input[name=seed]").focus()
    changes(lambda: page.keyboard.press("ArrowUp"), "seed", 43)
    root.locator("select[name=h]").focus()
    changes(lambda: page.keyboard.press("ArrowUp"), "h", 6)
    root.locator("select[name=mask]").focus()
    changes(lambda: page.keyboard.press("ArrowUp"), "mask", "padding")
    root.locator("input[name=valid_length]").focus()
    changes(lambda: page.keyboard.press("ArrowLeft"), "valid_length", 2)  # 4, clamped to n = 3, minus 1
    root.locator("select[name=d_model]").focus()
    changes(lambda: page.keyboard.press("ArrowDown"), "d_model", 32)


def test_text_is_shown_literally(page):
    sentence = "<b>x</b> $x^2$ \\foo 多头注意力 <img src=x onerror=alert(1)>"
    update(page, "explorer", {"sentence": sentence, "d_model": 8, "h": 2, "mask": "none", "seed": 0})
    root = page.locator("#explorer")
    tokens = split_tokens(sentence)  # 多头注意力: five tokens, one a character
    assert root.locator(".mha-token").all_text_contents() == tokens
    assert root.locator("b, img").count() == 0  # no element made from a token
    assert root.locator("canvas").get_attribute("aria-label").endswith(f"for the tokens: {' '.join(tokens)}")


def test_invalid_sentences_keep_the_picture(page):
    update(page, "explorer", {"sentence": "the cat sat", "d_model": 16, "h": 2, "mask": "causal", "seed": 5})
    before = picture(page)
    status = page.locator("#explorer .mha-status")
    page.locator("#explorer input[name=sentence]").fill("   ")
    assert status.text_content() == (
        "Type a sentence: the explorer needs at least one token (the words between spaces, and each "
        "Chinese or Japanese character on its own)."
        " (The picture still shows the last valid input.)"
    )
    assert picture(page) == before
    long = " ".join(f"w{i}" for i in range(17))
    weights = update(page, "explorer", {"sentence": long})
    assert status.text_content() == (
        "That sentence has 17 tokens; the explorer shows at most 16. Please shorten it."
        " (The picture still shows the last valid input.)"
    )
    assert picture(page) == before
    torch.testing.assert_close(
        torch.tensor(weights, dtype=torch.float32),
        explorer_weights("the cat sat", d_model=16, h=2, mask="causal", seed=5),
    )
    page.locator("#explorer input[name=sentence]").fill("the dog")
    assert status.text_content() == ""
    assert picture(page) != before


def test_keyboard_readout(page):
    update(
        page, "explorer", {"sentence": "alpha beta gamma", "d_model": 16, "h": 4, "mask": "causal", "seed": 3}
    )
    weights = explorer_weights("alpha beta gamma", d_model=16, h=4, mask="causal", seed=3)
    readout = page.locator("#explorer .mha-readout")
    page.locator("#explorer canvas").focus()
    assert "query \u201calpha\u201d" in readout.text_content()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("PageDown")
    text = readout.text_content()
    assert "head 2" in text and "query \u201cgamma\u201d" in text and "key \u201cbeta\u201d" in text
    assert f"weight {weights[1, 2, 1]:.4f}" in text
    page.keyboard.press("End")
    assert "key \u201cgamma\u201d" in readout.text_content()
    page.keyboard.press("ArrowUp")
    assert "masked" in readout.text_content()  # beta may not attend to gamma
    # a tap on a cell selects it; hovering reads out the cell under the pointer
    layout = page.evaluate("() => document.getElementById('explorer').mha.layout")
    rect, cell = layout["rects"][3], layout["cw"]
    page.locator("#explorer canvas").click(
        position={"x": rect["x"] + 1.5 * cell, "y": rect["y"] + 2.5 * cell}
    )
    text = readout.text_content()
    assert "head 4" in text and "query \u201cgamma\u201d" in text and "key \u201cbeta\u201d" in text
    assert f"weight {weights[3, 2, 1]:.4f}" in text
    box = page.locator("#explorer canvas").bounding_box()
    page.mouse.move(box["x"] + rect["x"] + 0.5 * cell, box["y"] + rect["y"] + 0.5 * cell)
    assert "head 4" in readout.text_content() and "query \u201calpha\u201d" in readout.text_content()
    page.mouse.move(0, 0)  # leaving the picture reads out the selected cell again
    assert "query \u201cgamma\u201d" in readout.text_content()


def test_trained_model_mode(page):
    """A trained model fixes d_model, h and the seed; a token it cannot embed keeps the picture and says why.
    (Its weights equal Python's: tests/unit/book/compute/test_explorer.py, and the built appendix page in
    tests/browser/test_site.py.)"""
    root = page.locator("#trained")
    for name in ("d_model", "h", "seed"):
        assert root.locator(f"[name={name}]").is_disabled()
    assert root.locator("select[name=d_model]").input_value() == "16"
    assert root.locator("select[name=h]").input_value() == "4"
    assert update(page, "trained", {"sentence": TRAINED_SENTENCES[-1], "mask": "causal"}) is not None
    before = picture(page, "trained")
    root.locator("input[name=sentence]").fill("3 xyz 2")
    assert (
        root.locator(".mha-status")
        .text_content()
        .startswith("This model cannot embed that sentence: unknown token 'xyz'")
    )
    assert picture(page, "trained") == before
    root.locator("select[name=source]").select_option("fresh")
    assert root.locator("select[name=d_model]").is_enabled()


# ---------------------------------------------------------------------------------------------------------
# The stepper and the calculator
# ---------------------------------------------------------------------------------------------------------


def test_stepper_shows_each_stage(page):
    stages, _ = tiny_stages()
    root = page.locator("#stepper")
    for stage in STAGES:
        before = picture(page, "stepper")
        got = update(page, "stepper", {"stage": stage.key})
        assert got == stages[stage.key].tolist(), stage.key
        assert settings_of(page, "stepper") == {"stage": stage.key}
        if stage.key != "x":
            assert picture(page, "stepper") != before, stage.key
        assert root.locator(".mha-current").text_content() == stage.title
    root.locator("input[name=stage]").fill("3")
    assert settings_of(page, "stepper") == {"stage": "v"}
    root.get_by_text("next \u25b6").click()
    assert settings_of(page, "stepper") == {"stage": "q_heads"}
    caption = "5. queries split into heads: Qi = X WiQ, shape (2, 4, 4) = (h, n, d_k)"  # Q<sub>i</sub> ...
    assert root.locator(".mha-caption").text_content() == caption


def test_calculator_answers_its_controls(page):
    """A model, a context typed in, and a context no control offers. (Its numbers equal mha.costs':
    tests/unit/mha/costs/test_report.py, and the built page in tests/browser/test_site.py.)"""
    root = page.locator("#calculator")
    before = root.locator("table").text_content()
    root.locator("select[name=model]").select_option("GPT-2 small")
    commit(root.locator("input[name=context]"), "0")
    assert "whole number" in root.locator(".mha-status").text_content()
    commit(root.locator("input[name=context]"), "1024")
    assert root.locator("table").text_content() != before
    assert settings_of(page, "calculator")["context"] == 1024


def test_the_live_explorer_draws_at_once_then_what_python_sends(browser, site):
    """The anywidget module (the static files plus one export, as Python builds it) in live mode."""
    from book.widgets import HeadExplorer
    from book.widgets.frontend import widget_esm

    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: route.continue_() if "127.0.0.1" in route.request.url else route.abort())
    page.goto(site["http"])  # ES modules from a blob: URL need http (Chromium refuses them over file://)
    explorer = HeadExplorer(d_model=16, h=2, mask="causal", sentence="a b <b>c</b>", seed=1)
    traits = {"config": explorer.config, "settings": explorer.settings, "drawn": live_payload(explorer.drawn)}
    page.evaluate(RENDER_LIVE, [widget_esm("mountExplorer"), traits, "live"])
    view = page.evaluate(
        "() => ({live: live.root.mha.live, weights: live.root.mha.weights, tokens: live.root.mha.tokens})"
    )
    assert view["live"] and view["tokens"] == ["a", "b", "<b>c</b>"]
    torch.testing.assert_close(torch.tensor(view["weights"]), explorer.weights, atol=0, rtol=0)
    assert page.locator("#live .mha-token").all_text_contents() == ["a", "b", "<b>c</b>"]

    # The reader picks h = 4: the page draws at once from the port, the settings go to Python, and Python's
    # arrays replace the picture when they arrive.
    expected = explorer_weights("a b <b>c</b>", d_model=16, h=4, mask="causal", seed=1)
    draws = page.evaluate("() => live.root.mha.draws")
    page.locator("#live select[name=h]").select_option("4")
    state = page.evaluate(
        "() => ({saved: live.saved, weights: live.root.mha.weights, draws: live.root.mha.draws})"
    )
    assert state["saved"] == [{**explorer.settings, "h": 4}] and state["draws"] == draws + 1
    torch.testing.assert_close(torch.tensor(state["weights"]), expected, atol=1e-5, rtol=0)  # the port
    explorer.settings = state["saved"][-1]  # what ipywidgets does with the message
    page.evaluate("d => live.python('drawn', d)", live_payload(explorer.drawn))
    got = page.evaluate("() => live.root.mha.weights")
    torch.testing.assert_close(torch.tensor(got), expected, atol=0, rtol=0)  # Python's own float32 values
    assert page.locator("#live .mha-shapes").text_content().count("(4, 3, 3)") == 1

    # Python changes the settings (a notebook cell): the controls follow, then the new picture arrives.
    explorer.update(mask="none", sentence="")
    page.evaluate("s => live.python('settings', s)", explorer.settings)
    assert page.locator("#live select[name=mask]").input_value() == "none"
    page.evaluate("d => live.python('drawn', d)", live_payload(explorer.drawn))
    assert page.locator("#live .mha-status").text_content() == explorer.message
    assert "at least one token" in explorer.message and page.locator("#live .mha-warning").count() == 1
    page.evaluate("() => live.cleanup()")
    assert page.evaluate("() => Object.keys(live.handlers)") == []
    page.close()
    assert errors == [], errors


def test_the_live_stepper_and_calculator(browser, site):
    from book.widgets import cost_calculator, stage_stepper
    from book.widgets.frontend import widget_esm

    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/*", lambda route: route.continue_() if "127.0.0.1" in route.request.url else route.abort())
    page.goto(site["http"])
    stages, tokens = tiny_stages()
    stepper = stage_stepper(stages, tokens=tokens, start="x")
    traits = {"config": stepper.config, "settings": stepper.settings}
    page.evaluate(RENDER_LIVE, [widget_esm("mountStepper"), traits, "steps"])
    page.locator("#steps").get_by_text("next \u25b6").click()
    assert page.evaluate("() => steps.saved") == [{"stage": "q"}]
    stepper.update(stage="weights")
    page.evaluate("s => steps.python('settings', s)", stepper.settings)
    assert page.locator("#steps .mha-current").text_content() == "attention weights"

    calc = cost_calculator("Llama 3.1 8B", context=4096)
    traits = {"config": calc.config, "settings": calc.settings, "drawn": calc.drawn}
    page.evaluate(RENDER_LIVE, [widget_esm("mountCalculator"), traits, "calc"])
    assert page.evaluate("() => calc.root.mha.rows") == [list(r) for r in calc.rows]
    page.locator("#calc select[name=model]").select_option("GPT-2 small")
    saved = page.evaluate("() => calc.saved")
    assert saved == [{**calc.settings, "model": "GPT-2 small"}]
    # drawn at once from the port; then Python's answer (the same rows) takes its place
    assert page.locator("#calc table tr").first.text_content().startswith("modelGPT-2 small")
    assert page.evaluate("() => calc.root.mha.received") == 1  # Python's first rows, at mount
    calc.settings = saved[-1]
    page.evaluate("d => calc.python('drawn', d)", {**calc.drawn, "message": "from Python"})
    assert page.locator("#calc table tr").all_text_contents() == [k + v for k, v in calc.rows]
    assert page.evaluate("() => calc.root.mha.received") == 2
    assert page.locator("#calc .mha-status").text_content() == "from Python"
    page.close()
    assert errors == [], errors


# ---------------------------------------------------------------------------------------------------------
# The window explorer, and the counts under the explorer's picture
# ---------------------------------------------------------------------------------------------------------


def test_the_window_explorer_s_controls_follow_the_spec(page):
    """The layer menu offers 1 .. layers, and a number no control offers says the spec's message. (Its
    numbers equal book.compute.since_2017's: tests/unit/book/compute/test_since_2017.py, and the built page in
    tests/browser/test_site_since_2017.py.)"""
    update(page, "windows", {"n": 9, "window": 1, "layers": 3, "global_period": 0})
    root = page.locator("#windows")
    assert root.locator("select[name=layer] option").count() == 3  # 1 .. layers
    commit(root.locator("input[name=layers]"), "5")
    assert root.locator("select[name=layer] option").count() == 5
    commit(root.locator("input[name=n]"), "99")
    spec = windows_spec()
    assert root.locator(".mha-status").text_content() == (
        "The tokens must be a whole number from 2 to 32." + spec["messages"]["still"]
    )
    assert settings_of(page, "windows")["n"] == 9


def test_the_sparse_figure_keeps_python_s_keys_and_reads_out_by_keyboard(page):
    """The kept keys are index_selection's (the port's numbers against Python's:
    tests/unit/book/compute/test_attention_2026.py);
    the slider, the keyboard read-out and a sentence too long for the figure, as the spec says."""
    from book.compute.attention_2026 import index_selection

    drawn = update(page, "sparse", {"sentence": SENTENCE, "top_k": 2, "seed": 0})
    assert drawn["selected"] == index_selection(SENTENCE, 2, seed=0)[1].tolist()
    root, n = page.locator("#sparse"), len(SENTENCE.split())
    assert root.locator("input[name=top_k]").get_attribute("max") == str(n)
    root.locator("input[name=top_k]").fill(str(n))
    assert settings_of(page, "sparse")["top_k"] == n
    assert (
        f"{n * (n + 1) // 2} query\u2013key pairs kept of {n * (n + 1) // 2}"
        in root.locator(".mha-status").text_content()
    )
    update(page, "sparse", {"top_k": 2})
    page.locator("#sparse canvas").focus()
    readout = root.locator(".mha-readout")
    assert (
        "query \u201cthe\u201d (row 1)" in readout.text_content()
        and "kept (rank 1 of 1)" in readout.text_content()
    )
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert "a later key, never scored" in readout.text_content()
    before = picture(page, "sparse")
    root.locator("input[name=sentence]").fill(" ".join(["w"] * 17))
    spec = sparse_spec()
    assert root.locator(".mha-status").text_content() == (
        "That sentence has 17 tokens; the figure shows at most 16. Please shorten it."
        + spec["messages"]["still"]
    )
    assert picture(page, "sparse") == before


def test_the_sparse_figure_reads_chinese_by_character_and_keeps_its_warnings(page):
    """Chinese typed without spaces is one token a character (the help says so); a seed no control offers,
    left with Tab for the picture, keeps its warning (the canvas's focus redraws, it does not rewrite the
    status); with the sentence cleared the slider keeps the picture's top-k."""
    root, spec = page.locator("#sparse"), sparse_spec()
    update(page, "sparse", {"sentence": SENTENCE, "top_k": 4, "seed": 0})
    assert "Chinese or Japanese character" in root.locator(".mha-help").text_content()
    chinese = "猫坐在垫子上因为它累了"
    root.locator("input[name=sentence]").fill(chinese)
    assert page.evaluate("document.getElementById('sparse').mha.update({})")["tokens"] == list(chinese)
    assert root.locator("input[name=top_k]").get_attribute("max") == "11"
    assert root.locator(".mha-status").text_content().split(". ")[1].startswith("11 tokens")
    seed = root.locator("input[name=seed]")
    seed.fill("-1")
    seed.press("Tab")  # to the canvas, whose first focus picks a cell and redraws
    assert page.evaluate("document.activeElement.tagName") == "CANVAS"
    whole = spec["messages"]["whole"].format(label="indexer seed", lo=0, hi=2**31 - 1)
    assert root.locator(".mha-status").text_content() == whole + spec["messages"]["still"]
    assert "mha-warning" in root.locator(".mha-status").get_attribute("class")
    assert settings_of(page, "sparse")["seed"] == 0
    page.keyboard.press("ArrowDown")
    assert root.locator(".mha-status").text_content() == whole + spec["messages"]["still"]
    before = picture(page, "sparse")
    root.locator("input[name=sentence]").fill("")
    slider = root.locator("input[name=top_k]")
    assert (slider.input_value(), slider.get_attribute("max")) == ("4", "11")
    messages = spec["messages"]
    assert root.locator(".mha-status").text_content() == messages["no_tokens"] + messages["still"]
    assert picture(page, "sparse") == before
    update(page, "sparse", {"sentence": SENTENCE, "seed": 0})


HEATMAP = """([n, panels, options]) => {
  const canvas = document.createElement('canvas');
  document.body.appendChild(canvas);
  const names = options.tokens || ['w'];
  const tokens = Array.from({length: n}, (_, i) => names[i % names.length] + (options.tokens ? '' : i));
  const values = tokens.map(() => tokens.map(() => 0.5));
  const layout = mhaFrontEnd.drawHeatmaps(canvas, Object.assign({
    panels: Array.from({length: panels},
      (_, p) => ({title: (options.titles || [])[p] || 'head ' + (p + 1), values, mask: null})),
    rowLabels: tokens, colLabels: tokens, rowName: 'query', colName: 'key', lo: 0, hi: 1, format: null,
    selected: null, groups: null, scaleLabel: 'weight', maskKey: 'masked'}, options.spec));
  canvas.remove();
  return mhaFrontEnd.layoutView(layout);
}"""


def test_heatmaps_keep_a_phone_s_picture_in_view_and_its_labels_apart(page):
    """What the tester met on a 390 px phone (a 341 px box), drawn by heatmaps.js alone: the decoder's 128
    tokens fit the box, the colour bar under the picture (not 634 px wide, its scale off-screen); the MiniLM
    box's 27 rows label every 3rd row, 21 px apart, not every 2nd crowded at 14 px; at a desktop's 656 px
    the sparse figure's two panels of 12 tokens share a line (not stacked 900 px tall); a Chinese title too
    long for its panel takes two lines, not an ellipsis."""
    phone = {"cell": [16, 16], "minCell": 2, "maxWidth": 341, "maxColumns": 1}
    decoder = page.evaluate(HEATMAP, [128, 1, {"spec": phone}])
    assert decoder["under"] and decoder["width"] <= 341 and decoder["cw"] == 2
    inside = [b for b in decoder["boxes"] if b["x"] < 0 or b["x"] + b["w"] > decoder["width"] + 0.5]
    assert not inside, inside  # the title, the bar, its ticks and keys: all within the picture's width
    minilm = page.evaluate(HEATMAP, [27, 1, {"spec": {"cell": [26, 26], "maxWidth": 300, "maxColumns": 1}}])
    rows = sorted(b["y"] for b in minilm["boxes"] if b["kind"] == "query")
    assert minilm["ch"] < 12 and min(b - a for a, b in itertools.pairwise(rows)) >= 15, (minilm["ch"], rows)
    sparse = {"cell": [22, 22], "oneLine": 12, "maxWidth": 656}
    wide = page.evaluate(HEATMAP, [12, 2, {"spec": sparse, "tokens": ["because", "the", "cat", "tired"]}])
    assert wide["perLine"] == 2 and wide["height"] < 400 and not wide["under"], wide["height"]
    long = ["internationalization", "responsibilities", "the", "cat"]
    wide = page.evaluate(HEATMAP, [16, 2, {"spec": sparse, "tokens": long}])
    assert wide["perLine"] == 2 and wide["cw"] >= 12
    title = "保留：每个查询的前 4 个，其余的键都不计分"
    narrow = page.evaluate(HEATMAP, [8, 1, {"spec": {"cell": [16, 16], "maxWidth": 400}, "titles": [title]}])
    (drawn,) = [b["text"] for b in narrow["boxes"] if b["kind"] == "title"]
    assert "\u2026" not in drawn and drawn.replace(" ", "") == title.replace(" ", ""), drawn


def test_the_parameter_counts_shown_are_python_s(page):
    """The line under the picture shows the counts Python made: a fresh layer's from the spec, a trained
    model's from its payload (nothing counted in the page)."""
    from book.widgets.frontend import module_parameters

    def line(root: str) -> str:
        text = page.locator(f"#{root} .mha-shapes p").nth(1).text_content()
        return text.split(": ", 1)[1]

    def expected(counts: dict) -> str:
        each = " + ".join(f"{w} {counts[w]:,}" for w in ("W_q", "W_k", "W_v", "W_o"))
        return f"{each} = {counts['total']:,}"

    for d_model in (8, 48):
        update(page, "explorer", {"d_model": d_model, "h": 2})
        assert line("explorer") == expected(module_parameters(MultiHeadAttention(d_model, 2)))
    with torch.random.fork_rng():
        torch.manual_seed(1)
        model = OneLayerAttentionModel(TASKS["recall-3-split"], d_model=16, h=4)
    update(page, "trained", {"source": "trained", "sentence": "3 A5 2 ?"})  # another test may leave it fresh
    assert line("trained") == expected(module_parameters(model.attn))
    update(page, "trained", {"source": "fresh"})
    fresh = settings_of(page, "trained")
    assert line("trained") == expected(module_parameters(MultiHeadAttention(fresh["d_model"], fresh["h"])))
