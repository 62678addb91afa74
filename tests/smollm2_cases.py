"""What both lanes check SmolLM2's tokenizer on: texts that are hard to split.

tests/unit/mha/pretrained/test_smollm2.py checks mha's tokenizer against transformers' on them, and
tests/unit/book/smollm2/test_weights.py the page's port against mha's: one list, so the port is held to
the texts the reference was checked on.
"""

from __future__ import annotations

HARD_TEXTS = [
    "Hello   world\t\ttabs\n\n\nnewlines    ",  # whitespace runs
    "  ",
    " \n \n\n  x",
    " leading space, trailing space ",
    "x = 3.14159 * 2**10; y = 1234567890; 1 22 333 4444 55555",  # digits
    "def f(a, b):\n    return {'k': [a, b]}  # comment\n\tif a != b: pass",  # code
    "naïve façade Ångström résumé Zürich 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",  # accents, combining forms
    "e\u0301 vs é",  # a combining accent and its precomposed form
    "中文分词测试，日本語のテキスト，한국어 문장",  # CJK
    "emoji 🤖🎉👍🏽 and flags 🇫🇷 and 👨‍👩‍👧",  # emoji, modifiers, joiners
    "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n",  # the chat template's special tokens
    "a<|im_end|>b <|im_start|> <|im_start",  # special tokens inside words, and a broken one
    "I'm, you're, it's: don't!",
    "I'm, you're, it's: don't! I'M 'S 'll",
    "\u00a0non-breaking\u2003em space\u200bzero width",
]
