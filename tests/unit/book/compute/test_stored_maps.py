import base64
import zlib

import numpy as np
import pytest
import torch

from book.compute.stored_maps import ENCODING, SCALE, pack, quantise, unpack


def test_maps_read_back_within_half_a_step_in_their_texts_order():
    gen = torch.Generator().manual_seed(0)
    maps = [torch.softmax(torch.randn(2, 3, n, n, generator=gen), -1) for n in (4, 7)]
    stored = {
        "layers": 2,
        "heads": 3,
        "scale": SCALE,
        "encoding": ENCODING,
        "data": pack([quantise(m) for m in maps]),
    }
    stored["items"] = [{"tokens": ["t"] * 4}, {"tokens": ["t"] * 7}]
    for got, expected in zip(unpack(stored, "items"), maps, strict=True):
        assert got.shape == tuple(expected.shape)
        assert abs(torch.from_numpy(got) - expected.double()).max() <= 0.5 / SCALE + 1e-12


def test_quantise_and_unpack_refuse_what_they_cannot_read():
    assert quantise(torch.tensor([0.0, 0.5, 1.0])) == bytes([0, 128, 255])
    with pytest.raises(TypeError, match="weights must be a floating-point tensor"):
        quantise(torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"weights must lie in \[0, 1\]"):
        quantise(torch.tensor([1.5]))
    stored = {"layers": 1, "heads": 1, "scale": SCALE, "encoding": ENCODING, "data": pack([bytes(4)])}
    with pytest.raises(ValueError, match="encoding"):
        unpack({**stored, "encoding": "float16"}, "items")
    with pytest.raises(ValueError, match="its items need 9"):
        unpack({**stored, "items": [{"tokens": "abc"}]}, "items")


# -- ports/stored_maps.js: unpackMaps, the page's unpack (core.js's storedMaps inflates, then calls it) -----


def test_the_port_reads_what_unpack_reads(ports):
    """The port gives Python's q / scale rounded to float32, exactly, entry by entry; wrong lengths raise."""
    gen = torch.Generator().manual_seed(1)
    maps = [torch.softmax(torch.randn(2, 3, n, n, generator=gen), -1) for n in (3, 5)]
    items = [{"tokens": [f"t{i}" for i in range(3)]}, {"tokens": [f"u{i}" for i in range(5)]}]
    stored = {"layers": 2, "heads": 3, "scale": SCALE, "encoding": ENCODING, "items": items}
    stored["data"] = pack([quantise(m) for m in maps])
    raw = base64.b64encode(zlib.decompress(base64.b64decode(stored["data"]))).decode("ascii")
    read = """(raw, scale, items, L, H) => globalThis.mhaFrontEnd.unpackMaps(
        globalThis.mhaFrontEnd.base64Bytes(raw), scale, items, L, H).map((get) => get())"""
    got = ports.run(read, raw, SCALE, items, 2, 3)
    for entry, expected, item in zip(got, unpack(stored, "items"), items, strict=True):
        assert entry["tokens"] == item["tokens"]
        assert np.array_equal(np.array(entry["attention"], dtype=np.float32), expected.astype(np.float32))
    short = """(raw, scale, items, L, H) => { try { globalThis.mhaFrontEnd.unpackMaps(
        globalThis.mhaFrontEnd.base64Bytes(raw), scale, items, L, H); return null; }
        catch (e) { return [e.name, e.message]; } }"""
    assert ports.run(short, raw, SCALE, items[:1], 2, 3) == [
        "RangeError",
        f"the stored data holds {2 * 3 * (9 + 25)} weights, not {2 * 3 * 9}",
    ]
