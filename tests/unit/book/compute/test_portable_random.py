"""book.compute.portable_random: its numbers, the same in Python and on the page (ports/random.js)."""

from __future__ import annotations

import torch

from book.compute import portable_random
from book.compute.explorer import token_vectors
from tests.port_cases import UTF8_TEXTS

# -- ports/random.js: book.compute.portable_random -----------------------------------------------------------


def test_random_equals_python_exactly(ports):
    keys = [0, 1, 0x243F6A88, 2**32 - 1, portable_random.stream_key(7, 3)]
    got = ports.run(
        """(keys, words) => ({
            uniform: keys.map(k => mhaFrontEnd.uniform(k, 40)),
            stream: [mhaFrontEnd.streamKey(), mhaFrontEnd.streamKey(0), mhaFrontEnd.streamKey(12345, 7),
                     mhaFrontEnd.streamKey(4294967295, 0, 2147483647)],
            words: words.map(mhaFrontEnd.textWord),
            vectors: mhaFrontEnd.tokenVectors(["the", "$x^2$", "多头注意力"], 12),
        })""",
        keys,
        UTF8_TEXTS,
    )
    assert got["uniform"] == [portable_random.uniform(k, 40).tolist() for k in keys]
    ps = portable_random.stream_key
    assert got["stream"] == [ps(), ps(0), ps(12345, 7), ps(2**32 - 1, 0, 2**31 - 1)]
    assert got["words"] == [portable_random.text_word(w) for w in UTF8_TEXTS]
    expected = token_vectors(["the", "$x^2$", "多头注意力"], 12, dtype=torch.float64)
    assert got["vectors"] == expected.tolist()
