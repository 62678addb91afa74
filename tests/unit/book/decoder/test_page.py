"""The decoder's page weights (book.decoder.page): what the port reads.

The build writes _static/decoder-weights.js from the shipped safetensors; the port
(book/decoder/static/ports/decoder.js, tested in tests/unit/book/decoder/test_model.py) decodes it. Here: the
script holds exactly the values Python computes with, and everything else the port reads, and the extension
writes it.
"""

import dataclasses

import pytest
import torch

import book.decoder.model as decoder
from book.decoder import page as decoder_page
from book.decoder.model import DECODER, TOP_K, UNKNOWN, load_state, vocabulary


def test_the_script_holds_the_values_python_computes_with():
    payload = decoder_page.weights_payload()
    model = decoder.shipped_decoder()
    assert list(payload["tensors"]) == sorted(model.state_dict())
    for name, t in model.state_dict().items():
        entry = payload["tensors"][name]
        assert entry["shape"] == list(t.shape)
        assert torch.equal(torch.from_numpy(decoder_page.decode_tensor(entry)), t), name


def test_the_page_weights_script_carries_everything_the_port_reads():
    payload = decoder_page.weights_payload()
    assert payload["format"] == decoder_page.FORMAT
    assert payload["config"] == dataclasses.asdict(DECODER)
    assert payload["vocab"] == vocabulary() and payload["vocab"][payload["unknown"]] == UNKNOWN
    assert payload["messages"] == decoder.MESSAGES and payload["top_k"] == TOP_K
    script = decoder_page.weights_script()
    assert script.startswith(f"globalThis.{decoder_page.CALLBACK}(") and script.isascii()
    assert len(script) <= 4 * 2**20
    with pytest.raises(ValueError, match="float16"):
        decoder_page.weights_payload({k: v.float() for k, v in load_state().items()})


def test_write_weights_script(tmp_path):
    target = decoder_page.write_weights_script(tmp_path / "_static" / decoder_page.WEIGHTS_SCRIPT)
    assert "decoder" in target.name and target.suffix == ".js"
    assert target.read_text(encoding="ascii") == decoder_page.weights_script()


def test_the_script_is_the_same_from_the_same_weights():
    assert decoder_page.weights_script() == decoder_page.weights_script()
