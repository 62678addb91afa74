"""The Chinese site that the book and browser lanes read (built inside the English one: scripts/zh_book.py).

Where it is, the pages the tests sample (one per kind of interactive figure), and what counts as Chinese text.
Its files: tests/book/test_site_zh.py; its pages in Chromium: tests/browser/test_site_zh.py.
"""

from __future__ import annotations

import re

from tests.built_site import SITE

ZH = SITE / "zh"
FIGURE_PAGES = {  # one page per kind of interactive figure, by its root class
    "mha-minilm": "chapters/why_multiple_heads",
    "mha-explorer": "chapters/the_math",
    "mha-stepper": "chapters/step_by_step",
    "mha-calculator": "chapters/typical_configs",
    "mha-windows": "chapters/attention_since_2017",
    "mha-sparse": "chapters/attention_2025_2026",
    "mha-decoder": "chapters/induction_heads",
    "mha-smollm2": "chapters/trained_heads",
}
SAMPLE = ["intro", "glossary", "search", *FIGURE_PAGES.values()]
CHINESE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")  # Chinese characters and punctuation
