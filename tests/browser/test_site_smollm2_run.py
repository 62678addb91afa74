"""SmolLM2-135M-Instruct in the page (issue 47): "Run on your own text" of the figure mha-smollm2 on
chapters/trained_heads.html, from disk (file://), every other host blocked.

One tab (the ``tab`` fixture) loads the weights once for the module; the texts are short. The page's
``el.mha.predict`` equals :func:`mha.pretrained.smollm2.predict` within 1e-3 (attention, and the top-5
probabilities matched by id; the same top-1 wherever Python's top-1 beats its top-2 by more than 2e-3), with
and without heads off; ``el.mha.generate`` gives Python's greedy ids; on random word tokens written twice the
page predicts the second copy, and switching off the heads its own attention scores as induction heads breaks
it; bad arguments reject with a plain Error. The budgets are the benchmark's
(benchmarks/bench_page_smollm2.py), not these tests'.
"""

from __future__ import annotations

import random

import pytest
import torch

from book.smollm2.weights import MAX_TOKENS, PARTS_DIR, WEIGHTS_BYTES, WEIGHTS_FILE
from mha.pretrained.smollm2 import generate, predict, tokenize
from tests.browser.figure_checks import axe_findings
from tests.built_site import SITE, open_page

pytestmark = [
    pytest.mark.site,
    pytest.mark.usefixtures("built_site"),
    pytest.mark.xdist_group("smollm2_page"),
]

PAGE = "chapters/trained_heads"
ROOT = ".mha-smollm2"
API = f"document.querySelector('{ROOT}').mha"
TOLERANCE = 1e-3
TEXTS = [
    "The cat sat on the mat. The cat sat on the",
    "def add(a, b):\n    return a + b  # 12 + 34",
]
OFF = [[3, 1], [7, 4], [19, 7], [19, 8], [25, 0]]
COPY = 20  # random word tokens, written twice


def _weights(url: str) -> bool:
    return url.endswith("/" + WEIGHTS_FILE) or f"/{PARTS_DIR}/" in url


@pytest.fixture(scope="module")
def tab(browser):
    """The chapter from disk, other hosts blocked: ``(page, errors, requests)``; the model loads in it
    once."""
    requests: list[str] = []
    page, errors = open_page(
        browser, PAGE, requests=requests, viewport={"width": 1280, "height": 900}, color_scheme="light"
    )
    page.wait_for_function(f"() => {API} && typeof {API}.predict === 'function'")
    yield page, errors, requests
    page.context.close()
    assert not errors, errors


def _predict(page, text: str, off=None) -> dict:
    if off is None:
        return page.evaluate(f"t => {API}.predict(t)", text)
    return page.evaluate(f"([t, off]) => {API}.predict(t, {{off}})", [text, off])


def _compare(got: dict, want: dict, label: str) -> tuple[float, float]:
    """The largest differences (attention, top-5 probabilities) of the page's predict from Python's."""
    assert got["ids"] == want["ids"], label
    assert got["tokens"] == want["tokens"], label
    attention = torch.tensor(got["attention"], dtype=torch.float64)
    assert attention.shape == want["attention"].shape, label
    a = (attention - want["attention"].double()).abs().max().item()
    p = 0.0
    for i, (mine, theirs) in enumerate(zip(got["top"], want["top"], strict=True)):
        assert len(mine) == 5, label
        probability = {int(j): q for j, q in mine}
        for j, q in theirs:
            if j in probability:
                p = max(p, abs(probability[j] - q))
            else:  # then it is near the fifth's probability, as near as the tolerance
                assert q - mine[-1][1] <= TOLERANCE, f"{label}: position {i}, id {j}"
        if theirs[0][1] - theirs[1][1] > 2e-3:
            assert mine[0][0] == theirs[0][0], f"{label}: top-1 at position {i}"
    assert a <= TOLERANCE and p <= TOLERANCE, f"{label}: attention {a:.2g}, probabilities {p:.2g}"
    return a, p


def test_nothing_loads_until_asked_and_the_size_is_said_first(tab):
    page, _, requests = tab
    assert not any(_weights(r) for r in requests), "the weights loaded before the reader asked"
    section = page.locator(f"{ROOT} .ms-run")
    assert f"{WEIGHTS_BYTES / 1e6:.1f} MB" in section.inner_text()
    static = SITE / "_static"
    parts = sum(p.stat().st_size for p in (static / PARTS_DIR).iterdir())
    size = (static / WEIGHTS_FILE).stat().st_size + parts
    assert size == WEIGHTS_BYTES <= 135_000_000


def test_predict_equals_python_with_and_without_heads_off(tab, smollm2):
    page, errors, requests = tab
    worst = [0.0, 0.0]
    for text, off in zip(TEXTS, (None, OFF), strict=True):  # one text intact, the other with heads off
        got = _predict(page, text, off)
        want = predict(text, off=[tuple(p) for p in off or []])
        a, p = _compare(got, want, f"{text!r} off={off}")
        worst = [max(worst[0], a), max(worst[1], p)]
    print(f"largest differences to Python: attention {worst[0]:.3g}, top-5 probabilities {worst[1]:.3g}")
    assert sum(r.endswith("/" + WEIGHTS_FILE) for r in requests) == 1  # loaded once
    assert not errors, errors


def test_generate_gives_python_s_greedy_ids(tab, smollm2):
    page, _, _ = tab
    text = "<|im_start|>user\nName three colours.<|im_end|>\n<|im_start|>assistant\n"
    got = page.evaluate(f"([t, off]) => {API}.generate(t, {{max_new_tokens: 12, off}})", [text, OFF])
    assert got == generate(text, max_new_tokens=12, off=[tuple(p) for p in OFF])


def _repeated(smollm2) -> tuple[str, list[int]]:
    """20 random word tokens (" word", letters only) written twice: a text whose ids are those 40."""
    tokens = smollm2.tokenizer.get_vocab()
    words = sorted(t for t in tokens if t[:1] == "Ġ" and t[1:].isascii() and t[1:].isalpha() and len(t) > 3)
    rng = random.Random(47)
    while True:
        picked = rng.sample(words, COPY)
        ids = [tokens[t] for t in picked]
        text = smollm2.tokenizer.decode(ids + ids)
        if tokenize(text) == ids + ids:
            return text, ids + ids


def test_the_page_predicts_the_second_copy_and_its_induction_heads_break_it(tab, smollm2):
    page, _, _ = tab
    text, ids = _repeated(smollm2)
    # Only the top-5 and each head's induction score leave the page (not the 432,000 weights): the score is
    # the mean weight from a second-copy position i to i - COPY + 1, the token after its earlier occurrence.
    got = page.evaluate(
        f"""async ([t, copy]) => {{ const r = await {API}.predict(t);
              const score = r.attention.map(heads => heads.map(a => {{ let s = 0;
                for (let i = copy; i < 2 * copy - 1; i++) s += a[i][i - copy + 1];
                return s / (copy - 1); }}));
              return {{ids: r.ids, top: r.top, score}}; }}""",
        [text, COPY],
    )
    assert got["ids"] == ids

    def accuracy(top, positions):
        return sum(top[i][0][0] == ids[i + 1] for i in positions) / len(positions)

    first, second = range(0, COPY - 1), range(COPY, 2 * COPY - 1)
    intact = (accuracy(got["top"], first), accuracy(got["top"], second))
    assert intact[1] >= 0.4 and intact[1] - intact[0] >= 0.3, intact
    score = torch.tensor(got["score"])  # (L, h)
    score[0] = 0  # layers >= 1
    bar = max(0.25, score.max().item() / 2)
    heads = [[int(layer), int(head)] for layer, head in (score >= bar).nonzero().tolist()]
    assert heads
    broken = page.evaluate(
        f"async ([t, off]) => ({{top: (await {API}.predict(t, {{off}})).top}})", [text, heads]
    )
    after = accuracy(broken["top"], second)
    print(f"second copy: {intact[1]:.2f} (first {intact[0]:.2f}), {after:.2f} with {len(heads)} heads off")
    assert intact[1] - after >= 0.3, (intact, after, heads)


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ("m.predict('')", "must not be empty"),
        ("m.predict(42)", "must be a string"),
        ("m.predict('Hi', {off: [[30, 0]]})", "which the model lacks"),
        ("m.predict('Hi', {off: [[0, 9]]})", "which the model lacks"),
        ("m.predict('Hi', {off: [['a', 1]]})", "pairs of integers"),
        (f"m.predict('word '.repeat({MAX_TOKENS + 5}))", f"more than the {MAX_TOKENS} tokens"),
        ("m.generate('Hi', {max_new_tokens: 0})", "max_new_tokens"),
        (f"m.generate('word '.repeat({MAX_TOKENS - 2}), {{max_new_tokens: 5}})", "more than the"),
    ],
)
def test_bad_arguments_reject_with_a_plain_error(tab, call, says):
    page, _, _ = tab
    got = page.evaluate(
        f"""async () => {{ const m = {API};
            try {{ await {call}; return null; }}
            catch (e) {{ return [e.constructor.name, e.message]; }} }}"""
    )
    assert got is not None and got[0] == "Error" and says in got[1], got


def test_the_section_runs_switches_heads_off_and_continues(tab, smollm2):
    page, errors, _ = tab
    section = page.locator(f"{ROOT} .ms-run")
    # The section continues a text by spec.run.new_tokens (24; tests/unit/book/smollm2 checks it is >= 20)
    # with generate, which test_generate_gives_python_s_greedy_ids checks: 4 here, for the suite's time.
    page.evaluate(f"() => {{ {API}.spec.run.new_tokens = 4; }}")
    section.locator("textarea").fill("One, two, three, four, five")
    section.locator("button[name=run_model]").click()
    section.locator(".ms-continuation mark").wait_for(timeout=120_000)
    assert section.locator(".ms-top-table tr").count() == 1 + len(tokenize("One, two, three, four, five"))
    before = section.locator(".ms-continuation mark").inner_text()
    assert before
    n = len(tokenize("One, two, three, four, five"))
    said = page.locator(f"{ROOT} > .mha-status").inner_text()  # the figure's status: the reader's text now
    assert said.startswith(f"Your text, {n} tokens, run by SmolLM2 in this page"), said
    page.locator(f"{ROOT} .ms-off summary").click()
    section.locator("button[name=off_induction]").click()
    section.locator(".mha-status").filter(has_text="switched off").wait_for(timeout=120_000)
    assert page.evaluate(f"() => {API}.off.length") > 0
    findings = axe_findings(page, ROOT)
    assert not findings, findings
    assert not errors, errors
