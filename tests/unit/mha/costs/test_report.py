"""mha.costs.report: the report's numbers, and the calculator page's port of them against Python."""

import json

import pytest
import torch

from book.widgets.calculator import cost_calculator
from book.widgets.frontend import PORTS, calculator_config, static_file
from mha.costs.configs import MODEL_CONFIGS
from mha.costs.counts import kv_cache_bytes, model_costs, uncounted_layers
from mha.costs.layers import Layer
from mha.costs.report import DTYPES, calculator_data, cost_report, cost_rows, format_count, format_ratio


def test_report_shows_the_costs_of_the_model():
    c = MODEL_CONFIGS["Llama 2 70B"]
    costs = model_costs(c, 4096, batch=8, dtype=torch.bfloat16)
    text = cost_report("Llama 2 70B", 4096, batch=8)
    assert f"{costs.params:,}" in text
    assert f"{costs.kv_cache_bytes:,} bytes" in text and "10.00 GiB" in text
    assert "80.00 GiB (8.0x)" in text  # the same cache with 64 key/value heads instead of 8: one decimal
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


# -- the page's port (calculator.js) against Python, in an embedded JavaScript engine ---------------------


@pytest.fixture(scope="module")
def js():
    """The page's ports (book/widgets/static/ports/) loaded in V8 (mini-racer: no browser, no DOM)."""
    mini_racer = pytest.importorskip("py_mini_racer")
    ctx = mini_racer.MiniRacer()
    for name in PORTS:
        ctx.eval(static_file(name))
    yield ctx
    ctx.close()


RATIOS = [(16, 3), (8, 1), (32, 3), (5, 4), (7, 4), (1, 4), (3, 4), (9, 4), (1, 20), (7, 20),
          (2**70 + 1, 2**69), (66_571_993_088, 11_173_625_856), (10**30 + 7, 3 * 10**28),
          (123456789, 1000)]  # fmt: skip


def test_the_page_rounds_ratios_as_python(js):
    """formatRatio (the port) = format_ratio: one decimal, ties (1.25, 0.75) to even, BigInts past 2**53."""
    for a, b in RATIOS:
        assert js.eval(f"mhaFrontEnd.formatRatio({a}n, {b}n)") == format_ratio(a, b), (a, b)


@pytest.mark.parametrize("model", ["Gemma 3 27B", "Llama 2 70B", "DeepSeek-V3", "Mistral 7B", "gpt-oss-20b"])
@pytest.mark.parametrize(
    ("context", "batch", "dtype"), [(4096, 1, "bfloat16"), (131072, 3, "float32"), (7, 2, "float16")]
)
def test_the_page_prints_the_reports_rows(js, model, context, batch, dtype):
    """The port's rows (costs() in calculator.js) equal cost_report's, the ratios and the note included."""
    config = calculator_config({"model": model, "context": context, "batch": batch, "dtype": dtype})
    data = json.dumps({"spec": config["spec"], "configs": config["configs"]})
    call = f"mhaFrontEnd.costs(m, {context}, {batch}, {json.dumps(dtype)}, d.spec).rows"
    rows = js.eval(
        f"(() => {{ const d = {data}; const m = d.configs.find((c) => c.name === {json.dumps(model)}); "
        f"return JSON.stringify({call}); }})()"
    )
    got = json.loads(rows)
    assert any("(" in v and v.endswith("x)") for _, v in got)  # a ratio row is among them
    width = max(len(k) for k, _ in got)
    assert "\n".join(f"{k.ljust(width)}  {v}" for k, v in got) == cost_report(
        model, context, batch=batch, dtype=dtype
    )
