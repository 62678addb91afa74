"""mha.costs.report: the report's numbers, and the calculator page's port of them against Python."""

import json

import pytest
import torch

from book.widgets.calculator import cost_calculator
from book.widgets.frontend import calculator_config
from mha.costs.configs import MODEL_CONFIGS
from mha.costs.counts import kv_cache_bytes, model_costs, uncounted_layers
from mha.costs.layers import Layer
from mha.costs.report import (
    DTYPES,
    calculator_data,
    cost_report,
    cost_rows,
    format_bytes,
    format_count,
    format_ratio,
)


def test_report_shows_the_costs_of_the_model():
    c = MODEL_CONFIGS["Llama 2 70B"]
    costs = model_costs(c, 4096, batch=8, dtype=torch.bfloat16)
    text = cost_report("Llama 2 70B", 4096, batch=8)
    assert f"{costs.params:,}" in text
    assert f"{costs.kv_cache_bytes:,} bytes" in text and "10.00 GiB" in text
    assert "80.00 GiB (8.0x)" in text  # the same cache with 64 key/value heads instead of 8: one decimal
    assert "4,096 tokens x 8 sequences" in text and "1 token x 1 sequence" in cost_report("Llama 2 70B", 1)
    per_token = costs.macs_per_token
    assert f"{format_count(per_token)} = {format_count(2 * per_token)}FLOP" in text


def test_mha_models_have_no_comparison_row_and_long_contexts_get_a_note():
    labels = [label for label, _ in cost_rows("GPT-2 small", 4096)]
    assert not any("every head" in label for label in labels)
    assert "note" in labels  # GPT-2 was trained on 1024 tokens: its trained_context
    assert (
        dict(cost_rows("GPT-2 small", 4096))["note"]
        == "4,096 tokens is longer than the 1,024 the model was trained on"
    )
    assert "note" not in dict(cost_rows("Qwen3-8B", 32768)) and "note" in dict(cost_rows("Qwen3-8B", 32769))
    assert "note" not in [label for label, _ in cost_rows("GPT-2 small", 1024)]


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_dtype_sets_the_cache_size(dtype):
    c = MODEL_CONFIGS["Mistral 7B"]
    expected = kv_cache_bytes(c.n_layers, c.n_kv_heads, c.d_k, 100, dtype=DTYPES[dtype])
    assert f"{expected:,} bytes, {dtype}" in cost_report("Mistral 7B", 100, dtype=dtype)


def test_html_report_is_a_table_of_the_same_rows():
    rows = cost_rows("Falcon-7B", 2048)
    page = cost_report("Falcon-7B", 2048, fmt="html")
    assert page.startswith("<table") and page.count("<tr>") == len(rows)  # the context row is one of them


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: cost_rows("GPT-5", 10), KeyError),
        (lambda: cost_rows("BERT-base", 10), ValueError),
        (lambda: cost_rows("Mistral 7B", 10, dtype="int3"), ValueError),
        (lambda: cost_report("Mistral 7B", 10, fmt="pdf"), ValueError),
        (lambda: cost_calculator("T5-base"), ValueError),
    ],
)
def test_bad_arguments(call, error):
    with pytest.raises(error):
        call()


def test_rows_of_models_with_windows_and_latents():
    rows = dict(cost_rows("Gemma 3 27B", 131072))
    assert rows["layers"] == "52 local (window 1024) + 10 global: a local layer caches the last 1024 tokens"
    assert rows["KV cache"] == "10.41 GiB (11,173,625,856 bytes, bfloat16)"
    # 66,571,993,088 / 11,173,625,856 = 5.96: one decimal, not the floor ("5x") the page used to print
    assert rows["KV cache if every layer were global"] == "62.00 GiB (6.0x)"
    deepseek = dict(cost_rows("DeepSeek-V3", 131072))
    assert deepseek["model"].startswith("DeepSeek-V3 (MLA: d_model=7168, h=128, d_k=128, latent 512 + 64")
    assert "layers" not in deepseek and "KV cache if every layer were global" not in deepseek
    assert (
        deepseek["KV cache if every layer were full MHA (K, V per head)"] == "610.00 GiB (71.1x)"
    )  # 40960 / 576: its heads' keys, 128 + 64 wide, and values (ModelConfig.mha_cache_width)
    mistral = dict(cost_rows("Mistral 7B", 8192))
    assert mistral["KV cache"].startswith("512.00 MiB") and mistral[
        "KV cache if every layer were global"
    ] == ("1.00 GiB (2.0x)")


def test_calculator_data_adds_up_to_model_costs():
    # what the page computes from calculator_data, written out in Python, for every decoder
    for data in calculator_data():
        c = MODEL_CONFIGS[data["name"]]
        for n, batch in ((1, 1), (1000, 3), (2**20, 2)):
            keys = sum(count * (n if w is None else min(n, w)) for count, w in data["windows"])
            costs = model_costs(c, n, batch=batch, dtype=torch.float16)
            if data["params"] is None:  # linear, compressed, indexed layers or two shapes: not counted
                assert data["uncounted"] == uncounted_layers(c) != ""
                assert (costs.params, costs.macs_per_token, costs.macs_per_sequence) == (None, None, None)
            else:
                assert int(data["params"]) == costs.params
                assert int(data["token_macs"]) + int(data["key_macs"]) * keys == costs.macs_per_token
                assert batch * (int(data["sequence_macs"]) * n + int(data["pair_macs"]) * n * n) == (
                    costs.macs_per_sequence
                )
            layers = [
                Layer(**{k: v for k, v in g.items() if k not in ("count", "label")}) for g in data["groups"]
            ]
            assert sum(g["count"] for g in data["groups"]) == c.n_layers
            cached = sum(
                g["count"] * layer.cache_elements(n) for g, layer in zip(data["groups"], layers, strict=True)
            )
            assert batch * 2 * cached == costs.kv_cache_bytes
        assert data["trained_context"] == c.trained_context
    assert [d["name"] for d in calculator_data()] == [
        c.name for c in MODEL_CONFIGS.values() if c.kind == "decoder"
    ]


# -- ports/costs.js: the calculator's sums and rows (mha.costs) ----------------------------------------------


RATIOS = [(16, 3), (8, 1), (32, 3), (5, 4), (7, 4), (1, 4), (3, 4), (9, 4), (1, 20), (7, 20),
          (2**70 + 1, 2**69), (66_571_993_088, 11_173_625_856), (10**30 + 7, 3 * 10**28),
          (123456789, 1000), (1, 41), (0, 5), (1, 20_000), (3, 64), (1, 200), (768, 32_000)]  # fmt: skip


def test_the_page_rounds_ratios_as_python(ports):
    """formatRatio (the port) = format_ratio: one decimal, ties (1.25, 0.75) to even, BigInts past 2**53."""
    for a, b in RATIOS:
        assert ports.js.eval(f"mhaFrontEnd.formatRatio({a}n, {b}n)") == format_ratio(a, b), (a, b)


@pytest.mark.parametrize("model", ["Gemma 3 27B", "Llama 2 70B", "DeepSeek-V3", "Mistral 7B", "gpt-oss-20b"])
@pytest.mark.parametrize(
    ("context", "batch", "dtype"),
    [(4096, 1, "bfloat16"), (131072, 3, "float32"), (7, 2, "float16"), (1, 1, "bfloat16")],
)
def test_the_page_prints_the_reports_rows(ports, model, context, batch, dtype):
    """The port's rows (costs() in ports/costs.js) equal cost_report's, the ratios and the note included."""
    config = calculator_config({"model": model, "context": context, "batch": batch, "dtype": dtype})
    data = json.dumps({"spec": config["spec"], "configs": config["configs"]})
    call = f"mhaFrontEnd.costs(m, {context}, {batch}, {json.dumps(dtype)}, d.spec).rows"
    rows = ports.js.eval(
        f"(() => {{ const d = {data}; const m = d.configs.find((c) => c.name === {json.dumps(model)}); "
        f"return JSON.stringify({call}); }})()"
    )
    got = json.loads(rows)
    assert any("(" in v and v.endswith("x)") for _, v in got)  # a ratio row is among them
    width = max(len(k) for k, _ in got)
    assert "\n".join(f"{k.ljust(width)}  {v}" for k, v in got) == cost_report(
        model, context, batch=batch, dtype=dtype
    )


def _calculator_cases() -> list[dict]:
    from mha.costs.configs import MODEL_CONFIGS

    decoders = [c for c in MODEL_CONFIGS.values() if c.kind == "decoder"]
    return [
        *[
            {"model": c.name, "context": context, "batch": batch, "dtype": dtype}
            for i, c in enumerate(decoders)
            for context, batch, dtype in [
                (4096, 1, "bfloat16"),
                (1 + 997 * i, 3, "float32"),
                (2**20, 2**12, "float8_e4m3fn"),
            ]
        ],
        *[
            {"model": c.name, "context": c.trained_context or 4096, "batch": 2, "dtype": "bfloat16"}
            for c in decoders
        ],
    ]


def test_costs_equal_mha_costs_for_every_decoder(ports):
    from book.widgets.frontend import calculator_config
    from mha.costs.configs import MODEL_CONFIGS
    from mha.costs.counts import kv_cache_bytes, model_costs, model_kv_cache_bytes, uncounted_layers
    from mha.costs.report import DTYPES, cost_report

    config = calculator_config({})
    cases = _calculator_cases()
    got = ports.run(
        """(cases, config) => cases.map(s => mhaFrontEnd.costs(config.configs.find(c => c.name === s.model),
                                                                s.context, s.batch, s.dtype, config.spec))""",
        cases,
        config,
    )
    for s, result in zip(cases, got, strict=True):
        model, dtype = MODEL_CONFIGS[s["model"]], DTYPES[s["dtype"]]
        costs = model_costs(model, s["context"], batch=s["batch"], dtype=dtype)
        for name in ("params", "macs_per_token", "macs_per_sequence"):  # None where not counted
            value = result[name]
            assert (None if value is None else int(value)) == getattr(costs, name), (s, name)
        assert int(result["kv_cache_bytes"]) == costs.kv_cache_bytes, s
        as_mha = dtype.itemsize * s["batch"] * model.mha_cache_width * model.n_layers * s["context"]
        if model.kv_latent is None:  # plain MHA's cache; latent heads' keys add the rotary part
            assert as_mha == kv_cache_bytes(
                model.n_layers, model.h, model.d_k, s["context"], batch=s["batch"], dtype=dtype
            )
        assert int(result["kv_cache_bytes_as_mha"]) == as_mha == costs.kv_cache_bytes_as_mha, s
        every = (
            dtype.itemsize * s["batch"] * sum(layer.global_elements(s["context"]) for layer in model.layers)
        )
        if not uncounted_layers(model):  # one kind of layer: the same model with every layer global
            assert (
                model_kv_cache_bytes(model.every_layer_global(), s["context"], batch=s["batch"], dtype=dtype)
                == every
            )
        assert int(result["kv_cache_bytes_all_global"]) == every, s
        assert (costs.kv_cache_bytes_as_mha, costs.kv_cache_bytes_all_global) == (as_mha, every), s
        width = max(len(k) for k, _ in result["rows"])
        lines = "\n".join(f"{k.ljust(width)}  {v}" for k, v in result["rows"])
        assert lines == cost_report(s["model"], s["context"], batch=s["batch"], dtype=s["dtype"]), s


def test_costs_format_as_python_rounds(ports):
    """Python's f"{x:,.2f}" rounds ties (exact in binary) to even, toFixed up: the port does as Python, with
    the units of the spec (up to YiB and Y) and digits grouped beyond them."""
    from book.widgets.frontend import calculator_config
    from mha.costs.report import format_count

    sizes = [
        0,
        1023,
        1024,
        1536,
        1024 * 1024 * 5 // 8 * 1 + 5,
        2**30 + 2**20 * 5,
        2**40 * 3 + 1,
        10**12 + 5 * 10**9,
        589824 * 2**40,  # once "589824.00 TiB"
        2**60 * 3 // 2,
        2**80 - 1,
        2**90,
        2**100 + 2**93,
    ]
    counts = [0, 999, 1000, 1005, 1015, 1_234_567, 10**9 + 5 * 10**6, 2**53 + 1, 10**15]
    counts += [
        2_724_067_590_852_840 * 10**9,  # once "2724067590852.84 T"
        10**21 * 7,
        10**24 - 1,
        10**27 * 123_456 + 5 * 10**24,
    ]
    units = calculator_config({})["spec"]["units"]
    got = ports.run(
        """(sizes, counts, units) => [sizes.map(n => mhaFrontEnd.formatBytes(BigInt(n), units.bytes)),
                                      counts.map(n => mhaFrontEnd.formatCount(BigInt(n), units.counts))]""",
        [str(n) for n in sizes],
        [str(n) for n in counts],
        units,
    )
    assert got == [[format_bytes(n) for n in sizes], [format_count(n) for n in counts]]
    assert got[0][8] == "576.00 PiB" and got[0][-1] == "1,056,768.00 YiB" and got[1][9] == "2.72 Y"
    assert got[1][-1] == "123,456,005.00 Y"
