"""Chapter 1's in-page MiniLM on the built site, as a reader offline meets it (mha/widgets/static/minilm.js).

Reads the built book (run `make book` first, as for tests/test_site.py). Over http and from disk (file://),
with every other host blocked, the box on chapters/why_multiple_heads.html runs all-MiniLM-L6-v2 in the
page: its tokens equal the Python tokenizer's (the book's corpus, odd input and a seeded sample of Unicode),
its attention equals mha.pretrained.attend within 0.005 and its sentence embeddings, with heads switched off,
equal mha.pretrained.ablated_embeddings within 1e-3. The weights load only on first use, and the box says
when it truncates. The model loads once per scheme: both tabs live for the whole module.
"""

from __future__ import annotations

import random

import pytest
import torch
from test_site import SCHEMES, SITE, _built_site, _is_local, server  # noqa: F401  (fixtures)

from mha.chapters.minilm_heads import load_corpus
from mha.pretrained import ablated_embeddings, attend, load_minilm
from mha.widgets.minilm_page import CLASS_NAME, MAX_TOKENS, WEIGHTS_FILE

pytestmark = pytest.mark.site  # reads the built book

PAGE = "chapters/why_multiple_heads"
ATTENTION_TOLERANCE = 0.005  # the page's float16 weights against Python's float32
EMBEDDING_TOLERANCE = 1e-3
ROOT = f"document.querySelector('.{CLASS_NAME}').mha"
ODD = [
    'Hello, world!!! (really?) -- yes; it\'s "quoted" & <tagged> #1 @you 50% a+b=c ~x^2 `q` |p|',
    "In 2024, 3.14159 of 1,000,000 cost $5.00 or €4,50 at 10:30pm on 12/31.",
    "Naïve café résumé Ångström Øresund Straße İstanbul ΟΔΟΣ ﬁne",
    "東京は日本の首都です。中文分词，逐字切分",
    "I ❤️ 🍕 and 👍🏽 🇫🇷!",
    "qzxjkwvbnm flibbertigibbetous supercalifragilisticexpialidocious",
    "\x00tab\there\u200bzero\u00a0nbsp\u3000wide\ufeffbom\ufffdrepl\x85next",
    "e\u0301 a\u0308\u0323 ɐ ʃ ə θ Ǆ ǅ ǆ Ⅻ ① ½ ² ＡＢＣ１２３ ｶﾀｶﾅ",
    "x" * 150,
]
# Characters from many scripts and blocks; a seeded sample of short strings. (Characters that Unicode
# assigned after the tokenizer's tables were made may differ; the blocks below are old.)
BLOCKS = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF),
          (0x900, 0x97F), (0x2000, 0x206F), (0x20A0, 0x22FF), (0x3000, 0x30FF), (0x4E00, 0x9FFF),
          (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1F300, 0x1F5FF), (0x0, 0x1F), (0x7F, 0x9F)]  # fmt: skip


def _sample(n: int = 200, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(chr(rng.randint(*rng.choice(BLOCKS))) for _ in range(rng.randint(1, 12))) for _ in range(n)
    ]


@pytest.fixture(scope="module")
def tabs(server, browser):  # noqa: F811
    """tabs(scheme): the chapter open in Chromium, other hosts blocked, with its errors and requests."""
    opened = {}

    def open_tab(scheme: str):
        if scheme not in opened:
            origin = server if scheme == "http" else "file://"
            url = f"{server}/{PAGE}.html" if scheme == "http" else (SITE / f"{PAGE}.html").as_uri()
            tab = browser.new_page()
            errors, requests = [], []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            tab.on("console", lambda m: m.type == "error" and errors.append(m.text))
            tab.on("request", lambda r: requests.append(r.url))
            tab.route(lambda u: not _is_local(u, origin), lambda route: route.abort())
            tab.goto(url, wait_until="load")
            opened[scheme] = (tab, errors, requests)
        return opened[scheme]

    yield open_tab
    for tab, _, _ in opened.values():
        tab.close()


def test_the_page_is_light_and_the_weights_are_beside_the_script():
    assert (SITE / f"{PAGE}.html").stat().st_size < 2_000_000
    weights = SITE / "_static" / WEIGHTS_FILE
    assert weights.is_file() and weights.stat().st_size <= 64_000_000
    assert (SITE / "_static" / "minilm.js").is_file()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_page_runs_minilm_as_python_does(scheme, tabs):
    tab, errors, requests = tabs(scheme)
    assert tab.locator(f".{CLASS_NAME}").count() == 1
    assert not any(WEIGHTS_FILE in r for r in requests), "the weights loaded before the reader used the box"
    tab.evaluate(f"() => {ROOT}.load()")
    assert sum(WEIGHTS_FILE in r for r in requests) == 1
    encoder = load_minilm()
    sentences = ["The animal didn't cross the street because it was too tired.", ODD[2], ODD[3], "a"]
    if scheme == "file":
        sentences += [ODD[4]]
    for sentence in sentences:
        got = tab.evaluate(f"s => {ROOT}.attend(s)", sentence)
        tokens, expected = attend(encoder, sentence)  # (L, h, n, n)
        assert got["tokens"] == tokens, sentence
        attention = torch.tensor(got["attention"], dtype=torch.float64)
        assert attention.shape == expected.shape, sentence
        torch.testing.assert_close(attention.sum(-1), torch.ones(expected.shape[:-1], dtype=torch.float64))
        torch.testing.assert_close(
            attention, expected.double(), atol=ATTENTION_TOLERANCE, rtol=0, msg=f"{sentence}: attention"
        )
    layer_3 = [[2, j] for j in range(12)]
    cls_like = [[i, j] for i in range(6) for j in range(0, 12, 3)]
    for sentence, off in [(sentences[0], []), (sentences[0], [[0, 2]]), (sentences[1], layer_3 + cls_like)]:
        got = torch.tensor(tab.evaluate(f"([s, off]) => {ROOT}.embed(s, {{off}})", [sentence, off]))
        expected = ablated_embeddings(encoder, [sentence], [tuple(pair) for pair in off])[0]  # (d_model,)
        torch.testing.assert_close(got, expected, atol=EMBEDDING_TOLERANCE, rtol=0, msg=f"{sentence} {off}")
    assert not errors, errors


def test_the_page_tokenizes_as_the_python_tokenizer(tabs):
    tab, errors, _ = tabs("file")
    corpus = load_corpus()
    texts = corpus["sentences"] + [t for pair in corpus["paraphrase_pairs"] for t in pair] + ODD + _sample()
    got = tab.evaluate(
        f"async all => {{ const out = []; for (const s of all) out.push((await {ROOT}.tokenize(s)).tokens); "
        "return out; }",
        texts,
    )
    tokenizer = load_minilm().tokenizer
    wrong = [(s, g) for s, g in zip(texts, got, strict=True) if g != tokenizer.encode(s).tokens]
    assert not wrong, wrong[:3]
    assert not errors, errors


def test_the_box_shows_heads_switches_them_off_and_says_when_it_truncates(tabs):
    tab, errors, _ = tabs("file")
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
