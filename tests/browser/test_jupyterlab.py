"""The live widgets in a real JupyterLab: Python computes, the book's front end draws what it is sent.

The test starts JupyterLab with a notebook of a head explorer, a stage stepper, a cost calculator, the
MiniLM box and the decoder box (scripts/lab.py), opens it in headless Chromium (every request to
another host is aborted), runs all cells, and then acts as a reader: it changes the explorer's ``h`` from 4 to
8 and checks that the page draws 8 panels with the weights Python computed (:func:`explorer_weights`), changes
every control of each figure and waits for the page's picture and Python's answer, steps the stepper, changes
the calculator's model, runs the MiniLM box on a typed sentence and switches a layer of it off, switches a
head of the decoder box off, and asks the kernel what it now holds. How long a change takes to draw is
benchmarks/bench_jupyterlab.py's, not a test's.

Set ``MHA_LAB_SCREENSHOT=path.png`` to keep a screenshot of the notebook.
"""

from __future__ import annotations

import json
import os
import time

import pytest
import torch

from book.compute.explorer import explorer_weights
from book.decoder.model import predict
from scripts.lab import JUPYTER, SENTENCE, TIMED_CHANGE, kernel, open_notebook, running_lab

CHANGES = 4  # changes of each control: every mask, both directions of h

pytestmark = [
    pytest.mark.slow,  # starts JupyterLab and a kernel
    pytest.mark.pretrained,  # the kernel runs all-MiniLM-L6-v2
    pytest.mark.skipif(not JUPYTER.exists(), reason=f"needs JupyterLab installed beside {JUPYTER.parent}"),
]


@pytest.fixture(scope="module")
def page(tmp_path_factory, browser):
    """One JupyterLab and one tab for the module, in the session's browser (tests/conftest.py)."""
    with running_lab(tmp_path_factory.mktemp("lab")) as lab:
        tab = open_notebook(browser, lab)
        yield tab
        tab.close()


EXPLORER = ".jp-OutputArea .mha-explorer"


def test_h_from_4_to_8_draws_eight_panels_of_python_weights(page):
    settings = page.evaluate(f"() => document.querySelector('{EXPLORER}').mha.settings")
    assert (settings["d_model"], settings["h"]) == (32, 4)
    assert page.evaluate(f"() => document.querySelector('{EXPLORER}').mha.weights.length") == 4
    received = page.evaluate(f"() => document.querySelector('{EXPLORER}').mha.received")
    page.locator(f"{EXPLORER} select[name=h]").select_option("8")
    assert page.evaluate(f"() => document.querySelector('{EXPLORER}').mha.weights.length") == 8  # at once
    page.wait_for_function(f"() => document.querySelector('{EXPLORER}').mha.received > {received}")
    drawn = page.evaluate(
        f"""() => {{ const m = document.querySelector('{EXPLORER}').mha;
                    return {{weights: m.weights, panels: m.layout.rects.length, live: m.live,
                             h: m.settings.h, shapes: m.canvas.closest('.mha-explorer')
                             .querySelector('.mha-shapes').textContent}}; }}"""
    )
    assert drawn["live"] and drawn["panels"] == 8 and drawn["h"] == 8
    assert "(8, 10, 10)" in drawn["shapes"] and "32 / 8 = 4" in drawn["shapes"]
    expected = explorer_weights(SENTENCE, d_model=32, h=8, mask="none", seed=0)
    torch.testing.assert_close(torch.tensor(drawn["weights"]), expected, atol=1e-7, rtol=0)
    assert kernel(page, "print(e.settings['h'], tuple(e.weights.shape))").split() == [
        "8",
        "(8,",
        "10,",
        "10)",
    ]
    # the reader's text is drawn literally and the kernel answers with the friendly messages
    page.locator(f"{EXPLORER} input[name=sentence]").fill("$x^2$ \\foo <b>x</b> 注意力")
    page.wait_for_function(
        f"() => document.querySelector('{EXPLORER}').mha.tokens.length === 6", timeout=10000
    )
    assert page.locator(f"{EXPLORER} .mha-token").all_text_contents() == [
        "$x^2$",
        "\\foo",
        "<b>x</b>",
        *"注意力",  # Chinese is split by character, as the page's port splits it
    ]
    assert page.locator(f"{EXPLORER} b").count() == 0
    page.locator(f"{EXPLORER} input[name=sentence]").fill(" ".join(["w"] * 17))
    status = page.locator(f"{EXPLORER} .mha-status")
    status.filter(has_text="at most 16").wait_for(timeout=10000)
    page.locator(f"{EXPLORER} input[name=sentence]").fill(SENTENCE)
    page.wait_for_function(f"() => document.querySelector('{EXPLORER}').mha.message === ''")
    assert page.errors == [], page.errors


def test_every_explorer_control_draws_at_once_then_python_s_arrays(page):
    """A change of h, the seed or the mask draws from the page's port at once, then Python's answer arrives
    (TIMED_CHANGE fails otherwise); the page ends on Python's arrays for the last settings."""
    masks = ["causal", "padding", "causal + padding", "none"]
    now = page.evaluate(f"() => document.querySelector('{EXPLORER}').mha.settings")
    heads = [8, 4] if now["h"] == 4 else [4, 8]  # every change of h is a change, whatever ran before
    seed = now["seed"] + 1  # likewise for the seed
    for i in range(CHANGES):
        page.evaluate(TIMED_CHANGE, [EXPLORER, "h", heads[i % 2]])
        page.evaluate(TIMED_CHANGE, [EXPLORER, "seed", seed + i])
        page.evaluate(TIMED_CHANGE, [EXPLORER, "mask", masks[i % 4]])
    last = {"h": heads[(CHANGES - 1) % 2], "mask": masks[(CHANGES - 1) % 4], "seed": seed + CHANGES - 1}
    expected = explorer_weights(SENTENCE, d_model=32, **last)
    deadline = time.monotonic() + 10  # an answer to an earlier change may arrive after the last change's
    while True:
        weights = torch.tensor(page.evaluate(f"() => document.querySelector('{EXPLORER}').mha.weights"))
        if weights.shape == expected.shape and torch.allclose(weights, expected, atol=1e-7, rtol=0):
            break
        assert time.monotonic() < deadline, "the page never showed Python's arrays for the last settings"
        time.sleep(0.05)
    assert page.errors == [], page.errors


def test_stepper_steps_and_the_kernel_follows(page):
    root = ".jp-OutputArea .mha-stepper"
    assert page.evaluate(f"() => document.querySelector('{root}').mha.settings.stage") == "x"
    page.locator(root).get_by_text("next \u25b6").click()
    page.locator(root).get_by_text("next \u25b6").click()
    assert page.locator(f"{root} .mha-current").text_content() == "keys"
    deadline = time.monotonic() + 10
    while kernel(page, "print(s.stage)").strip() != "k":
        assert time.monotonic() < deadline, "the kernel did not follow the stepper"
        time.sleep(0.05)
    kernel(page, "s.update(stage='weights')")  # Python moves the page
    page.wait_for_function(f"() => document.querySelector('{root}').mha.settings.stage === 'weights'")
    for i in range(CHANGES):  # the slider redraws (TIMED_CHANGE fails otherwise)
        page.evaluate(TIMED_CHANGE, [root, "stage", (i * 5) % 13])
    assert page.errors == [], page.errors


def test_calculator_model_change_is_computed_by_python(page):
    root = ".jp-OutputArea .mha-calculator"
    page.locator(f"{root} select[name=model]").select_option("GPT-2 small")
    first_row = page.locator(f"{root} table tr").first
    first_row.filter(has_text="GPT-2 small").wait_for(timeout=10000)
    rows = page.locator(f"{root} table tr").all_text_contents()
    assert kernel(page, "print(c.settings['model'])").strip() == "GPT-2 small"
    expected = json.loads(kernel(page, "import json; print(json.dumps(c.rows))"))
    assert rows == [label + value for label, value in expected]
    assert page.errors == [], page.errors


def test_the_minilm_box_runs_the_encoder_in_the_kernel(page):
    """The live box suggests the stored sentences and computes any sentence with Python, heads off too."""
    root = ".jp-OutputArea .mha-minilm"
    assert page.locator(f"{root} datalist option").count() == 60  # the corpus of "What trained heads do"
    page.locator(f"{root} input[name=sentence]").fill("Birds <b>sing</b>.")
    page.locator(f"{root} button[name=run]").click()
    page.locator(f"{root} .mm-readout").filter(has_text="All 72 heads on").wait_for(timeout=30000)
    drawn = page.evaluate(f"() => document.querySelector('{root}').mha.drawn")
    tokens = kernel(page, "print(' '.join(m.encoder.tokenizer.encode('Birds <b>sing</b>.').tokens))").split()
    assert drawn["tokens"] == tokens and not drawn["stored"]
    assert page.locator(f"{root} b").count() == 0  # text drawn literally
    page.locator(f"{root} select[name=layer_off]").select_option("5")
    page.locator(f"{root} .mm-readout").filter(has_text="12 of 72 heads off").wait_for(timeout=30000)
    assert page.errors == [], page.errors


def test_the_decoder_box_draws_at_once_what_python_predicts(page):
    root = ".jp-OutputArea .mha-decoder"
    text = kernel(page, "print(d.spec['defaults']['text'])").strip()
    page.locator(f"{root} .md-token").nth(len(text) - 1).wait_for(timeout=10000)  # no Run: drawn at once
    got = page.evaluate(f"() => document.querySelector('{root}').mha.predict('abc abc', {{off: [[1, 0]]}})")
    expected = predict("abc abc", off=[(1, 0)])
    assert got["tokens"] == expected["tokens"]
    # The kernel and this process run the same float32 model, maybe on other kernels and threads: round-off.
    assert torch.allclose(torch.tensor(got["attention"]), expected["attention"], rtol=0, atol=1e-5)
    page.locator(f"{root} input[name=off_0_1]").check()
    page.locator(f"{root} .md-heads-off").filter(
        has_text="1 of 8 heads off: L1H2 (previous token)."
    ).wait_for()
    m = len(text) // 2
    top = predict(text, off=[(0, 1)])["top"]
    second = sum(top[i][0][0] == text[i + 1] for i in range(m, 2 * m - 1))
    page.locator(f"{root} .md-accuracy").filter(has_text=f"and {second} of {m - 1} of the second").wait_for()


def test_screenshot_and_nothing_fetched_from_elsewhere(page):
    path = os.environ.get("MHA_LAB_SCREENSHOT")
    if path:
        page.locator(EXPLORER).scroll_into_view_if_needed()
        page.screenshot(path=path, full_page=True)
    assert page.errors == [], page.errors
    # JupyterLab itself asks for nothing elsewhere; if it ever does, it is blocked, and the widgets still work
    assert all("mha" not in url for url in page.blocked), page.blocked


def test_the_calculator_draws_at_once_then_python_s_answer(page):
    """The calculator draws a change at once from its port, then Python's rows. TIMED_CHANGE fails if either
    does not come; the kernel ends on the last settings."""
    calculator = ".jp-OutputArea .mha-calculator"
    for i in range(CHANGES):
        times = page.evaluate(TIMED_CHANGE, [calculator, "context", 1024 + i])
        assert len(times) == 2  # the page's picture, then Python's
    assert kernel(page, "print(c.settings['context'])").strip() == str(1024 + CHANGES - 1)
    assert page.errors == [], page.errors
