"""book/smollm2/static/ports/smollm2_model.js, the page's SmolLM2-135M-Instruct, equal to
mha.pretrained.smollm2 in mini-racer: the tokenizer id for id on hard texts, the dequantisation of the file's
blocks bit for bit on sampled blocks, and one layer within 1e-5; and book.smollm2.weights's weights scripts.

The tests ask for the ``smollm2`` fixture (they read the file, so they are ``pretrained``) and share its xdist
group. The port runs in its own V8 context, alone, as the page's worker runs its text.
"""

from __future__ import annotations

import base64
import json

import gguf
import numpy as np
import pytest
import torch

from book.smollm2 import weights as page
from book.widgets.frontend import static_file
from mha.pretrained.smollm2 import decode, heads_off, read_gguf, tokenize
from tests.smollm2_cases import HARD_TEXTS

pytestmark = pytest.mark.xdist_group("smollm2")


class Port:
    """The port alone in a V8 context (as the worker holds it): ``run(js, *args)`` calls ``(S, ...args) =>``
    with ``S = smolLM2()``."""

    def __init__(self) -> None:
        from py_mini_racer import MiniRacer

        self.js = MiniRacer()
        self.js.eval(static_file("ports/smollm2_model.js"))
        self.js.eval("globalThis.S = globalThis.mhaFrontEnd.smolLM2();")

    def run(self, body: str, *args: object) -> object:
        self.js.eval(
            f"globalThis.__t = (...a) => JSON.stringify(({body})(S, ...a), "
            "(k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v);"
        )
        return json.loads(self.js.call("__t", *args))


@pytest.fixture(scope="module")
def port() -> Port:
    return Port()


@pytest.fixture(scope="module")
def manifest(smollm2) -> dict:
    return page.weights_manifest()


def test_tokenizer_equals_python_id_for_id_on_hard_texts(port, manifest, smollm2):
    got = port.run(
        "(S, meta, texts) => { const t = S.tokenizer(meta); globalThis.T = t;"
        " return texts.map((x) => t.encode(x)); }",
        manifest["tokenizer"],
        HARD_TEXTS,
    )
    for text, ids in zip(HARD_TEXTS, got, strict=True):
        assert ids == tokenize(text), text
    # every token's text, as predict's `tokens`, and the whole text back
    ids = sorted({i for row in got for i in row})
    assert port.run("(S, ids) => ids.map((i) => T.decode([i]))", ids) == [decode([i]) for i in ids]
    assert port.run("(S, rows) => rows.map((r) => T.decode(r))", got) == [decode(r) for r in got]


def test_dequantisation_is_bit_for_bit_on_sampled_blocks(port, smollm2):
    reader, rng = read_gguf(), np.random.default_rng(0)
    names = ["token_embd.weight", "blk.0.attn_q.weight", "blk.7.ffn_down.weight", "blk.29.attn_v.weight"]
    tensors = {t.name: t for t in reader.tensors}
    for name in names:
        t = tensors[name]
        rows = sorted(rng.choice(t.data.shape[0], size=6, replace=False).tolist())
        raw = np.ascontiguousarray(t.data[rows])  # (6, bytes per row)
        want = gguf.quants.dequantize(raw, t.tensor_type)  # (6, cols) float32
        got = port.run(
            "(S, type, b64, rows, cols) => S.dequantize(type, S.base64Bytes(b64), rows, cols)",
            t.tensor_type.name,
            base64.b64encode(raw.tobytes()).decode("ascii"),
            len(rows),
            int(t.shape[0]),
        )
        got = np.asarray(got, dtype=np.float32).reshape(want.shape)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), name


def _one_layer_manifest(manifest: dict, layer: int, words: int) -> tuple[dict, bytes]:
    """A manifest of one layer (and ``words`` rows of the embedding) and its bytes, for the port's model."""
    reader, data = read_gguf(), {}
    for t in reader.tensors:
        data[t.name] = t.data
    names = [n for n in manifest["tensors"] if n.startswith(f"blk.{layer}.")]
    tensors, chunks, offset = {}, [], 0
    for name in [*names, "token_embd.weight", "output_norm.weight"]:
        entry = dict(manifest["tensors"][name])
        raw = data[name][:words] if name == "token_embd.weight" else data[name]
        blob = np.ascontiguousarray(raw).tobytes()
        if name == "token_embd.weight":
            entry["shape"] = [entry["shape"][0], words]
        tensors[name.replace(f"blk.{layer}.", "blk.0.")] = {**entry, "offset": offset, "bytes": len(blob)}
        chunks.append(blob)
        offset += len(blob)
    config = {**manifest["config"], "n_layers": 1}
    return {"config": config, "tensors": tensors}, b"".join(chunks)


@pytest.mark.parametrize("layer", [0, 17])
def test_one_layer_equals_python_within_1e_5(port, manifest, smollm2, layer):
    ids = tokenize("The cat sat on the mat. The cat sat on")
    words = max(ids) + 1
    small, blob = _one_layer_manifest(manifest, layer, words)
    x = torch.randn(1, len(ids), 576, generator=torch.Generator().manual_seed(layer)) * 0.5
    x = x + smollm2.embed(torch.tensor([ids]))
    off = [[layer, 4]]
    got = port.run(
        "(S, m, b64, x, n, off) => { const M = S.model(m, S.base64Bytes(b64)); const w = [];"
        " const y = M.layer(0, Float32Array.from(x), n, M.newCache(n), new Set(off.map(([l, h]) => h)), w);"
        " return {y, w}; }",
        small,
        base64.b64encode(blob).decode("ascii"),
        x.flatten().tolist(),
        len(ids),
        off,
    )
    with torch.no_grad(), heads_off(smollm2, [(layer, 4)]):
        want, weights, _ = smollm2.layers[layer](x, _mask(len(ids)), None, need_weights=True)
    y = torch.tensor(got["y"]).reshape(want.shape)
    # within 1e-5 of the output's scale: its largest entries are in the hundreds, where float32's own step is
    # 3e-5, so an absolute 1e-5 would ask more than Python's float32 itself holds
    print(f"layer {layer}: largest difference {(y - want).abs().max().item():.3g} of {want.abs().max():.3g}")
    assert (y - want).abs().max().item() < 1e-5 * max(1.0, want.abs().max().item())
    w = torch.tensor(got["w"]).reshape(weights.shape)
    assert (w - weights).abs().max().item() < 1e-5


def _mask(n: int) -> torch.Tensor:
    from mha.masks import causal_mask

    return causal_mask(n, n)


def test_the_section_continues_a_text_by_at_least_20_tokens_within_the_page_s_limit():
    run = page.run_spec()
    assert 20 <= run["new_tokens"] < run["max_tokens"]


def test_the_weights_fit_the_page_s_budget_and_are_the_file_s_blocks(manifest, smollm2):
    assert manifest["bytes"] == sum(t["bytes"] for t in manifest["tensors"].values())
    types = {t["type"] for t in manifest["tensors"].values()}
    assert types == {"Q4_1", "Q8_0", "F32"}
    assert manifest["tensors"]["token_embd.weight"]["type"] == "Q8_0"
    assert page.weights_size() <= page.BUDGET_BYTES


def test_write_weights_script_writes_what_weights_size_counts(tmp_path, smollm2):
    # The default cache, which `make book` has filled before the tests: this copies it (a cold cache builds).
    target = page.write_weights_script(tmp_path / "site" / page.WEIGHTS_FILE)
    parts = sorted((target.parent / page.PARTS_DIR).iterdir())
    total = target.stat().st_size + sum(p.stat().st_size for p in parts)
    assert total == page.weights_size()
    first = parts[0].read_text().split('"')[1]
    assert base64.b64decode(first) == page.tensor_bytes()[: page.PART_BYTES]


def test_the_size_the_figure_states_is_what_the_page_loads(smollm2):
    assert page.weights_size() == page.WEIGHTS_BYTES
