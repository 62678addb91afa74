"""The cases on which each port of book/widgets/static/ports/ is checked against its Python twin.

Each port's unit tests (in its Python twin's test file, tests/ports.py) run it on them in mini-racer (the
fast lane); the browser tests run the
page's one end-to-end parity check per figure on some of them (tests/browser/test_site*.py). One list per
port, here, so the two lanes check the same inputs.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import torch

from book.chapters.tasks import TASKS
from book.chapters.training import OneLayerAttentionModel
from book.compute.explorer import MASKS, head_choices, split_tokens
from book.widgets.frontend import model_payload
from book.widgets.spec import explorer_spec, stepper_spec, windows_spec
from mha.masks import causal_mask

# -- bytes and words (ports/bytes.js, ports/random.js) -----------------------------------------------------

# A string of every UTF-8 length, the empty string, HTML, TeX, combined emoji and the planes' edges.
UTF8_TEXTS = [
    "",
    "the",
    "多头注意力",
    "<b>",
    "\\foo",
    "é",
    "🍕👍🏽 🇫🇷",
    "\x00\x7f\x80\u07ff\u0800\uffff\U00010000\U0010ffff",
]


# -- the explorer (ports/random.js, ports/explorer.js) -------------------------------------------------------

# Sentences and their tokens (book.compute.explorer.split_tokens, ports/explorer.js splitTokens): words
# between spaces, each Chinese or Japanese character a token (a Chinese reader types no spaces).
SPLIT_CASES = [
    ("the cat  sat\ton\nthe\r\nmat", ["the", "cat", "sat", "on", "the", "mat"]),
    ("猫坐在垫子上因为它累了", list("猫坐在垫子上因为它累了")),
    ("猫坐在垫子上，因为它累了。", list("猫坐在垫子上，因为它累了。")),
    ("多头注意力 attention 很好", ["多", "头", "注", "意", "力", "attention", "很", "好"]),
    ("GPT-4o的注意力", ["GPT-4o", "的", "注", "意", "力"]),
    ("東京はカタカナ", list("東京はカタカナ")),
    ("全角\u3000空格", ["全", "角", "空", "格"]),
    ("ＡＢ１ 𠀋𪚲", ["Ａ", "Ｂ", "１", "𠀋", "𪚲"]),
    ("한국어 문장 é\u00a0x 👍🏽", ["한국어", "문장", "é\u00a0x", "👍🏽"]),
    ("", []),
    (" \t\n ", []),
]
WORDS = ["the", "cat", "$x^2$", "\\foo", "<b>x</b>", "多头注意力", "sat", "on", "mat", "the", "a", "é"]


def explorer_sweep() -> list[dict]:
    """60 settings: every mask, every d_model, several h and seeds, 1 to 16 tokens, odd whitespace."""
    cases = []
    for i in range(60):
        d_model = (8, 12, 16, 24, 32, 48, 64)[i % 7]
        choices = head_choices(d_model)
        n = 1 + (i * 5) % 16
        words = [WORDS[(i + 3 * k) % len(WORDS)] for k in range(n)]
        separators = [" ", "\t", "\n ", "\r\n", "  "]
        sentence = "".join(w + separators[(i + k) % len(separators)] for k, w in enumerate(words))
        cases.append(
            {
                "sentence": ("\t" if i % 5 == 0 else "") + sentence,
                "d_model": d_model,
                "h": choices[(i // 7) % len(choices)],
                "mask": MASKS[i % 4],
                "valid_length": None if i % 3 == 0 else 1 + (i * 7) % n,
                "seed": (i * 2654435761) % 2**31,
            }
        )
    return cases


def _words(start: int, n: int) -> list[str]:
    """WORDS from ``start`` on, as many as make exactly ``n`` tokens (a Chinese word is a token per
    character), skipping a word that would pass ``n``."""
    words, count, j = [], 0, start
    while count < n:
        word = WORDS[j % len(WORDS)]
        if count + len(split_tokens(word)) <= n:
            words.append(word)
            count += len(split_tokens(word))
        j += 1
    return words


def site_explorer_sweep() -> list[dict]:
    """56 settings more, as the built page is driven: every mask kind, several d_model and h, seeds, 1 to 16
    tokens, valid lengths."""
    settings = []
    for i in range(56):
        d_model = (8, 12, 16, 24, 32, 48, 64)[i % 7]
        choices = head_choices(d_model)
        n = 1 + (i * 5) % 16
        separator = "\t" if i % 9 == 0 else " "
        settings.append(
            {
                "d_model": d_model,
                "h": choices[i % len(choices)],
                "mask": MASKS[i % 4],
                "valid_length": 1 + (i * 3) % n,
                "sentence": separator.join(_words(i, n)),
                "seed": (i * 7919) % 1000,
            }
        )
    return settings


def trained_like_model() -> tuple[dict, Callable[[list[str]], torch.Tensor]]:
    """A small randomly initialised toy model of chapter 1 (split embedding), as the page's payload.

    Returns the payload and a function from tokens to the expected weights ``(h, n, n)`` under a causal mask.
    """
    with torch.random.fork_rng():
        torch.manual_seed(1)
        model = OneLayerAttentionModel(TASKS["recall-3-split"], d_model=16, h=4).eval()
    payload = model_payload(
        model.attn, model.task.token_names(), model.embed_names, model.task.seq_len, name="recall-3-split"
    )

    def expected(tokens):
        with torch.no_grad():
            x = model.embed_names(tokens)  # (n, d_model)
            return model.attn(x[None], mask=causal_mask(len(tokens)))[1][0]  # (h, n, n)

    return payload, expected


TRAINED_SENTENCES = ["3 A5 2 ?", "0", "1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 ?"]  # recall-3-split's tokens
SHIPPED_SENTENCES = ["3 1 4 1 5 2 6", "7", "1 2 3 4 5 6 7"]  # copy-3's, the model chapter 1's appendix ships

# -- the settings' rules (ports/settings.js) -----------------------------------------------------------------


def merge_cases() -> list[tuple[dict, dict, dict, dict | None]]:
    """(spec, state, changes, fixed): valid and invalid changes of the explorer, the window explorer and the
    stepper."""
    explorer = explorer_spec()
    trained = explorer_spec(trained=True)
    windows = windows_spec()
    stepper = stepper_spec()
    start = {**explorer["defaults"], "valid_length": 8}
    wstart = {**windows["defaults"]}
    return [
        *[(explorer, start, {"d_model": d}, None) for d in (8, 12, 16, 24, 48, 64, 10)],
        *[(explorer, start, {"h": h}, None) for h in (1, 3, 5, 8, 16, 32)],
        *[(explorer, {**start, "h": 16, "d_model": 64}, {"d_model": d}, None) for d in (8, 12, 24, 48)],
        *[(explorer, start, {"mask": m}, None) for m in (*MASKS, "future", 3)],
        (explorer, start, {"sentence": "a b"}, None),
        (explorer, start, {"sentence": ""}, None),
        (explorer, start, {"sentence": 3}, None),
        (explorer, start, {"valid_length": None}, None),
        (explorer, start, {"valid_length": 11}, None),
        (explorer, start, {"valid_length": 0}, None),
        (explorer, start, {"seed": -1}, None),
        (explorer, start, {"seed": 2**31}, None),
        (explorer, start, {"seed": 7, "mask": "padding", "valid_length": 2}, None),
        (explorer, start, {"source": "trained"}, None),
        # the valid length follows the sentence, down and back up to the value chosen (or all tokens)
        (explorer, {**start, "mask": "padding"}, {"sentence": "a"}, None),
        (
            explorer,
            {**start, "valid_length": 1, "valid_length_chosen": 8},
            {"sentence": " ".join("abcdefghij")},
            None,
        ),
        (explorer, {**start, "valid_length": 1, "valid_length_chosen": 8}, {"sentence": "a b c"}, None),
        (
            explorer,
            {**start, "valid_length": 3, "valid_length_chosen": None},
            {"sentence": "a b c d e"},
            None,
        ),
        (explorer, start, {"valid_length": 10}, None),
        (explorer, {**start, "sentence": "a b c"}, {"valid_length": 3, "sentence": "a b c"}, None),
        (explorer, {**start, "h": 6, "d_model": 48}, {"d_model": 32, "sentence": "x"}, None),
        (explorer, start, {"heads": 3}, None),
        (trained, {**start, "source": "trained"}, {"d_model": 16}, {"d_model": 24, "h": 3}),
        (trained, {**start, "source": "trained"}, {"d_model": 24, "mask": "causal"}, {"d_model": 24, "h": 3}),
        (trained, {**start, "source": "trained"}, {"source": "fresh"}, None),
        *[(windows, wstart, {"layers": k}, None) for k in (1, 3, 8, 9, 0)],
        (windows, {**wstart, "layer": 4}, {"layers": 6}, None),
        *[(windows, wstart, {"layer": k}, None) for k in (1, 6, 7)],
        *[(windows, wstart, {"global_period": p}, None) for p in (0, 2, 5)],
        (windows, wstart, {"n": 1}, None),
        (windows, wstart, {"window": 32, "n": 32}, None),
        *[(stepper, {"stage": "out"}, {"stage": k}, None) for k in ("x", "weights", "nope", 3, None)],
        (stepper, {"stage": "out"}, {"step": "x"}, None),
    ]


# -- the window explorer (ports/windows.js) ------------------------------------------------------------------

WINDOW_SWEEP = [
    {"n": 16, "window": 4, "layers": 6, "global_period": 3},
    {"n": 9, "window": 1, "layers": 3, "global_period": 0},
    {"n": 32, "window": 5, "layers": 8, "global_period": 2},
    {"n": 12, "window": 3, "layers": 7, "global_period": 6},
    {"n": 7, "window": 32, "layers": 2, "global_period": 4},
]

# -- the sparse-attention figure (ports/sparse.js) -----------------------------------------------------------

SPARSE_SWEEP = [
    {"sentence": "the cat sat on the mat because it was tired and warm", "top_k": 4, "seed": 0},
    {"sentence": "the cat sat on the mat because it was tired and warm", "top_k": None, "seed": 0},
    {"sentence": "a", "top_k": 1, "seed": 3},
    {
        "sentence": "one two three four five six seven eight nine ten eleven twelve 13 14 15 16",
        "top_k": 1,
        "seed": 7,
    },
    {"sentence": "多头 注意力 is   here\tnow  again and again", "top_k": 3, "seed": 2**31 - 1},
    {"sentence": "x x x x x x", "top_k": 2, "seed": 5},
    {"sentence": "猫坐在垫子上因为它累了", "top_k": 4, "seed": 0},  # 11 tokens: one a character
]

# -- MiniLM (ports/minilm.js) --------------------------------------------------------------------------------

DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired."
# Hard inputs: punctuation, numbers, accents, Chinese and Japanese, emoji, unknown words, control and
# invisible characters, combining marks, a word longer than WordPiece reads, and 30 words.
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
    "On a quiet morning the old fisherman walked slowly down to the harbour, checked his nets twice, "
    "and waited for the tide to turn before he set out at dawn.",
]
# Characters from many scripts and blocks; a seeded sample of short strings. (Characters that Unicode
# assigned after the tokenizer's tables were made may differ; the blocks below are old.)
BLOCKS = [(0x20, 0x7E), (0xA0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF),
          (0x900, 0x97F), (0x2000, 0x206F), (0x20A0, 0x22FF), (0x3000, 0x30FF), (0x4E00, 0x9FFF),
          (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1F300, 0x1F5FF), (0x0, 0x1F), (0x7F, 0x9F)]  # fmt: skip


def unicode_sample(n: int = 200, seed: int = 0) -> list[str]:
    """``n`` short strings of characters drawn from :data:`BLOCKS`."""
    rng = random.Random(seed)
    return [
        "".join(chr(rng.randint(*rng.choice(BLOCKS))) for _ in range(rng.randint(1, 12))) for _ in range(n)
    ]


# The sentences the encoder runs on (the box's first sentence, then accents, Chinese, one letter, emoji), and
# which heads are switched off for the embeddings: none, one, and layer 3 with every third head of each layer.
ATTEND = [DEFAULT_SENTENCE, ODD[2], ODD[3], "a", ODD[4]]
HEADS_OFF = [
    (DEFAULT_SENTENCE, []),
    (DEFAULT_SENTENCE, [[0, 2]]),
    (ODD[2], [[2, j] for j in range(12)] + [[i, j] for i in range(6) for j in range(0, 12, 3)]),
]
