"""Chapter 1's in-page MiniLM on the built site, as a reader offline meets it (mha/widgets/static/minilm.js).

Reads the built book (run `make book` first, as for tests/browser/test_site.py). From disk (file://), with
every other host blocked, the box on chapters/why_multiple_heads.html runs all-MiniLM-L6-v2 in the page: its
tokens equal the Python tokenizer's, its attention equals mha.pretrained.attend within 0.005 and its sentence
embeddings, with heads switched off, equal mha.pretrained.ablated_embeddings within 1e-3 (the figure's one
browser check of its numbers; the port, ports/minilm.js, is checked on many more inputs without a browser by
tests/unit/test_ports.py). The weights load only on first use, and only half of them: the word embeddings'
rows come as the sentences need them. The box says when it truncates. The model loads once: the tab lives for
the whole module.
"""

from __future__ import annotations

import pytest
import torch

from mha.pretrained import ablated_embeddings, attend
from mha.widgets.minilm_page import CLASS_NAME, LAYERS_DIR, MAX_TOKENS, WEIGHTS_FILE, WORDS_DIR
from tests.built_site import SITE, is_local
from tests.port_cases import ATTEND, HEADS_OFF

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

PAGE = "chapters/why_multiple_heads"
ATTENTION_TOLERANCE = 0.005  # the page's float16 weights against Python's float32
EMBEDDING_TOLERANCE = 1e-3
ROOT = f"document.querySelector('.{CLASS_NAME}').mha"


@pytest.fixture(scope="module")
def tab(browser):
    """The chapter open in Chromium from disk, other hosts blocked, with its errors and requests."""
    tab = browser.new_page()
    errors, requests = [], []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("console", lambda m: m.type == "error" and errors.append(m.text))
    tab.on("request", lambda r: requests.append(r.url))
    tab.route(lambda u: not is_local(u), lambda route: route.abort())
    tab.goto((SITE / f"{PAGE}.html").as_uri(), wait_until="load")
    yield tab, errors, requests
    tab.close()


def _weights(url: str) -> bool:
    return url.rsplit("/", 1)[-1] == WEIGHTS_FILE or any(f"/{d}/" in url for d in (WORDS_DIR, LAYERS_DIR))


def test_the_page_runs_minilm_as_python_does(tab, minilm):
    tab, errors, requests = tab
    assert tab.locator(f".{CLASS_NAME}").count() == 1
    assert not any(_weights(r) for r in requests), "the weights loaded before the reader used the box"
    tab.evaluate(f"() => {ROOT}.refresh()")  # Run, on the box's two sentences
    first = [r for r in requests if _weights(r)]
    assert sum(r.endswith(WEIGHTS_FILE) for r in first) == 1
    static = SITE / "_static"
    whole = (static / WEIGHTS_FILE).stat().st_size + sum(
        p.stat().st_size for d in (WORDS_DIR, LAYERS_DIR) for p in (static / d).iterdir()
    )
    loaded = sum((static / r.split("/_static/", 1)[1]).stat().st_size for r in first)
    assert loaded <= whole / 2, f"the first use loads {loaded / 1e6:.1f} MB of {whole / 1e6:.1f} MB"
    for sentence in ATTEND:
        got = tab.evaluate(f"s => {ROOT}.attend(s)", sentence)
        tokens, expected = attend(minilm, sentence)  # (L, h, n, n)
        assert got["tokens"] == tokens, sentence
        attention = torch.tensor(got["attention"], dtype=torch.float64)
        assert attention.shape == expected.shape, sentence
        torch.testing.assert_close(attention.sum(-1), torch.ones(expected.shape[:-1], dtype=torch.float64))
        torch.testing.assert_close(
            attention, expected.double(), atol=ATTENTION_TOLERANCE, rtol=0, msg=f"{sentence}: attention"
        )
    for sentence, off in HEADS_OFF:
        got = torch.tensor(tab.evaluate(f"([s, off]) => {ROOT}.embed(s, {{off}})", [sentence, off]))
        expected = ablated_embeddings(minilm, [sentence], [tuple(pair) for pair in off])[0]  # (d_model,)
        torch.testing.assert_close(got, expected, atol=EMBEDDING_TOLERANCE, rtol=0, msg=f"{sentence} {off}")
    assert sum(r.endswith(WEIGHTS_FILE) for r in requests) == 1  # once per page
    assert not errors, errors


def test_the_box_shows_heads_switches_them_off_and_says_when_it_truncates(tab):
    tab, errors, _ = tab
    root = tab.locator(f".{CLASS_NAME}")
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
    assert tab.evaluate(f"() => {ROOT}.off.length") == 13
    root.locator("button[name=reset]").click()
    readout.filter(has_text="All 72 heads on").wait_for()
    long = " ".join(["word"] * (MAX_TOKENS + 20))
    root.locator("input[name=sentence]").fill(long)
    root.locator("button[name=run]").click()
    status = root.locator(".mha-status")
    status.filter(has_text="truncates").wait_for()
    assert f"has {MAX_TOKENS + 22} tokens" in status.text_content()
    got = tab.evaluate(f"s => {ROOT}.tokenize(s)", long)
    assert len(got["tokens"]) == MAX_TOKENS and got["tokens"][-1] == "[SEP]" and got["truncated"]
    root.locator("input[name=sentence]").fill("   ")
    root.locator("button[name=run]").click()
    status.filter(has_text="Type a sentence first").wait_for()
    assert not errors, errors
