"""What both lanes run the MiniLM box on, in its unit and browser tests.

tests/unit/book/minilm/test_page.py and tests/browser/test_minilm_box.py: the head labels of a census, and two
sentences with their tokens, for stored weights a test makes up (the box tokenizes nothing it has stored, so
no model is needed for them).
"""

from __future__ import annotations

from mha.pretrained import MINILM

LABELS = [["cls"] * 6 + ["broad"] * 3 + ["previous", "mixed", "sep"] for _ in range(MINILM.n_layers)]
STORED_TOKENS = {
    "The cat sat on the mat.": ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"],
    "Birds sing.": ["[CLS]", "birds", "sing", ".", "[SEP]"],
}
