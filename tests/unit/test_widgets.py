"""Tests for the live widgets, driven like a reader: change a setting, then look at what the page is sent."""

import dataclasses
import json

import numpy as np
import pytest
import torch

import mha
from _ext.figure_roots import figure_roots
from mha.chapters.worked_example import worked_example
from mha.compute.explorer import (
    D_MODELS,
    MASKS,
    MAX_TOKENS,
    build_mask,
    embed_tokens,
    explorer_weights,
    fresh_attention,
    head_choices,
    token_vectors,
)
from mha.compute.stages import STAGES, attention_stages
from mha.costs.configs import MODEL_CONFIGS
from mha.costs.counts import model_costs
from mha.costs.report import DTYPES, cost_report, cost_rows
from mha.widgets import CostCalculator, StageStepper, cost_calculator, stage_stepper
from mha.widgets.explorer import HeadExplorer
from mha.widgets.frontend import calculator_config, stepper_config, widget_esm
from mha.widgets.spec import explorer_spec, stepper_spec


def sent(explorer: HeadExplorer) -> tuple[torch.Tensor, np.ndarray | None]:
    """What the page is sent: the weights ``(h, n, n)`` decoded from the float32 bytes, and the mask."""
    drawn = explorer.drawn
    h, n, _ = drawn["shape"]
    weights = torch.from_numpy(np.frombuffer(drawn["weights"], dtype="<f4").reshape(h, n, n).copy())
    mask = None if drawn["mask"] is None else np.frombuffer(drawn["mask"], dtype=np.uint8).reshape(n, n)
    return weights, mask


def check_drawn(explorer: HeadExplorer) -> None:
    """What every valid state must satisfy: weights, settings, payload and shapes agree with each other, and
    the message is no warning (it may say what followed the change: test_d_model_change_keeps_h_valid)."""
    s = explorer.settings
    n, h = len(explorer.tokens), s["h"]
    assert explorer.drawn["message"] == explorer.message and explorer.drawn["level"] == ""
    assert explorer.shown == (s["d_model"], h)
    assert s["d_model"] % h == 0 and h in explorer.choices()["h"]
    assert explorer.weights.shape == (h, n, n) and explorer.weights.dtype == torch.float32
    weights, mask = sent(explorer)
    assert torch.equal(weights, explorer.weights)  # exactly what Python computed, as float32 bytes
    assert explorer.drawn["tokens"] == explorer.tokens and explorer.drawn["shape"] == [h, n, n]
    assert (explorer.drawn["d_model"], explorer.drawn["h"], explorer.drawn["d_k"]) == (
        s["d_model"],
        h,
        s["d_model"] // h,
    )
    expected_mask = build_mask(s["mask"], n, s["valid_length"] if "padding" in s["mask"] else None)
    if expected_mask is None:
        assert mask is None
    else:
        allowed = torch.broadcast_to(expected_mask, (1, 1, n, n))[0, 0].numpy()
        np.testing.assert_array_equal(mask.astype(bool), allowed)
        assert (explorer.weights[:, ~torch.from_numpy(allowed)] == 0).all()  # masked cells get no weight
    if s["source"] == "fresh":
        expected = explorer_weights(
            s["sentence"],
            d_model=s["d_model"],
            h=h,
            mask=s["mask"],
            valid_length=s["valid_length"],
            seed=s["seed"],
        )
        assert torch.equal(explorer.weights, expected)
    rows = explorer.weights.sum(-1)  # (h, n): 1 for a query with any allowed key
    torch.testing.assert_close(rows, torch.ones_like(rows))
    assert explorer.shapes()["weights"] == (h, n, n)
    assert explorer.drawn["parameters"] == explorer.shapes()["parameters"]


def test_default_state_sends_one_panel_per_head_and_lists_shapes():
    explorer = HeadExplorer(d_model=32, h=8)
    check_drawn(explorer)
    shapes = explorer.shapes()
    assert shapes["d_k"] == 4
    assert shapes["Q_i"] == (10, 4) and shapes["weights"] == (8, 10, 10) and shapes["concat"] == (10, 32)
    assert shapes["parameters"]["total"] == 4 * 32 * 32 + 4 * 32  # W_q, W_k, W_v, W_o with biases
    assert explorer.settings == {
        "d_model": 32, "h": 8, "mask": "none", "valid_length": 8,
        "sentence": "the cat sat on the mat because it was tired", "seed": 0, "source": "fresh",
    }  # fmt: skip
    assert explorer.config == {"trained": None, "spec": explorer_spec()}


def test_an_unknown_front_end_is_refused():
    with pytest.raises(ValueError, match="mount must be one of"):
        widget_esm("mountSomething")


def test_shapes_update_live_when_h_changes():
    explorer = HeadExplorer(d_model=64, h=4)
    explorer.update(h=16)
    assert explorer.shapes()["Q_i"] == (10, 4) and explorer.drawn["shape"] == [16, 10, 10]
    check_drawn(explorer)
    # The parameter count does not depend on h: heads split d_model.
    explorer.settings = {**explorer.settings, "h": 1}  # what the page does
    assert explorer.shapes()["parameters"]["total"] == 4 * 64 * 64 + 4 * 64
    check_drawn(explorer)


@pytest.mark.slow  # every d_model, h and mask: about 10 s
def test_every_combination_of_d_model_h_and_mask_agrees_with_explorer_weights():
    explorer = HeadExplorer()
    seen = 0
    for d_model in D_MODELS:
        explorer.update(d_model=d_model)
        assert explorer.choices()["h"] == head_choices(d_model)  # an invalid pair cannot be chosen
        for h in head_choices(d_model):
            explorer.update(h=h)
            for mask in MASKS:
                explorer.update(mask=mask)
                check_drawn(explorer)
                seen += 1
    assert seen == 4 * sum(len(head_choices(d)) for d in D_MODELS)


@pytest.mark.parametrize("mask", ["padding", "causal + padding"])
def test_padding_hides_the_keys_after_the_valid_length(mask):
    explorer = HeadExplorer(d_model=16, h=2, mask=mask)
    for length in range(1, len(explorer.tokens) + 1):
        explorer.update(valid_length=length)
        check_drawn(explorer)
        _, sent_mask = sent(explorer)
        assert not sent_mask[:, length:].any()
    explorer.update(sentence="a b c")
    assert explorer.settings["valid_length"] == 3  # a shorter sentence moves the slider's maximum


def test_d_model_change_keeps_h_valid():
    """h follows d_model, and the explorer says so (as the page does: tests/unit/test_ports.py); the next
    change that needs no such step clears the note."""
    explorer = HeadExplorer(d_model=32, h=8)
    explorer.update(d_model=12)
    assert explorer.settings["h"] == 6  # the largest divisor of 12 not above 8
    assert explorer.choices()["h"] == [1, 2, 3, 4, 6, 12]
    check_drawn(explorer)
    assert explorer.message == "The heads h changed from 8 to 6: 8 does not divide d_model = 12."
    explorer.settings = {**explorer.settings, "d_model": 16}  # from the page: h 6 does not divide 16
    assert explorer.settings["h"] == 4
    check_drawn(explorer)
    assert explorer.message == "The heads h changed from 6 to 4: 6 does not divide d_model = 16."
    explorer.update(seed=3)
    assert explorer.message == ""


def test_the_valid_length_follows_the_sentence_and_says_so():
    """A short sentence typed on the way to a long one lowers the valid length only while it is short; the
    explorer says why, and a sentence the explorer refuses changes nothing for good."""
    explorer = HeadExplorer(mask="padding", valid_length=8)
    explorer.update(sentence="a")
    assert explorer.settings["valid_length"] == 1
    assert explorer.message.startswith(
        "The valid length is 1 while the sentence has 1 token; it goes back to 8 "
    )
    explorer.update(sentence=" ".join(f"w{i}" for i in range(17)))  # too long: refused
    assert explorer.drawn["level"] == "warning" and explorer.settings["valid_length"] == 8
    explorer.update(sentence="a b c d e f g h i j k")
    assert explorer.settings["valid_length"] == 8 and explorer.message == ""
    mask = explorer.mask.broadcast_to(1, 1, 11, 11)[0, 0]
    assert mask[:, :8].all() and not mask[:, 8:].any()  # keys 9 to 11 are padding
    explorer.update(mask="causal", sentence="a")  # no padding mask: nothing to say about the valid length
    assert explorer.message == ""


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"h": 5}, ValueError, r"h must be one of 1, 2, 4, 8, 16 \(divisors of d_model=32\)"),
        ({"d_model": 10}, ValueError, "d_model must be one of"),
        ({"mask": "future"}, ValueError, "mask must be one of"),
        ({"seed": -1}, ValueError, "seed must be an int"),
        ({"valid_length": 11}, ValueError, r"valid_length must be an int in 1\.\.n=10"),
        ({"source": "trained"}, ValueError, "source must be one of"),
        ({"sentence": 3}, TypeError, "sentence must be a str"),
        ({"heads": 3}, KeyError, "unknown settings"),
    ],
)
def test_a_value_no_control_offers_raises_and_changes_nothing(changes, error, match):
    explorer = HeadExplorer(d_model=32, h=4)
    before, weights = dict(explorer.settings), explorer.weights.clone()
    with pytest.raises(error, match=match):
        explorer.update(**changes)
    assert explorer.settings == before and torch.equal(explorer.weights, weights)
    assert explorer.last_error is None  # a wrong call, not a failure inside the explorer


def test_sentence_change_sends_the_tokens():
    explorer = HeadExplorer(d_model=16, h=2)
    explorer.update(sentence="attention is all you need")
    check_drawn(explorer)
    assert explorer.tokens == explorer.drawn["tokens"] == ["attention", "is", "all", "you", "need"]


@pytest.mark.parametrize(
    "sentence",
    ["$x^2$ \\foo <b>x</b> 多头注意力", "<img src=x onerror=alert(1)> $$\\frac{1}{2}$$", "&amp; é"],
)
def test_text_is_sent_literally_never_interpreted(sentence):
    explorer = HeadExplorer(d_model=8, h=2)
    explorer.update(sentence=sentence)
    check_drawn(explorer)
    assert explorer.tokens == explorer.drawn["tokens"] == sentence.split()  # not escaped, not typeset
    page = explorer.static_html()
    (root,) = figure_roots(page)
    config = root.data
    assert config["settings"]["sentence"] == sentence
    # inline JSON in a script element, where markup is inert; "</" escaped, so the text cannot end it
    script = page.split("</script>")[0]
    assert "</" not in script and page.count("</script>") == 1


@pytest.mark.parametrize(
    ("sentence", "message"),
    [
        ("", "at least one word"),
        ("   ", "at least one word"),
        (" ".join(["word"] * (MAX_TOKENS + 1)), "at most 16"),
    ],
)
def test_empty_or_long_sentence_gives_a_message_not_a_traceback(sentence, message):
    explorer = HeadExplorer(d_model=16, h=2)
    before = (explorer.drawn["weights"], explorer.weights.clone())
    explorer.update(sentence=sentence)
    assert message in explorer.message and explorer.message.endswith(
        "(The picture still shows the last valid input.)"
    )
    assert explorer.drawn["message"] == explorer.message and explorer.drawn["level"] == "warning"
    assert explorer.drawn["weights"] == before[0] and torch.equal(explorer.weights, before[1])
    explorer.update(h=4)  # other controls keep working, still with the message
    explorer.update(mask="padding")
    assert message in explorer.message
    explorer.update(sentence=" ".join(["word"] * MAX_TOKENS))  # the longest allowed
    check_drawn(explorer)
    assert explorer.settings["h"] == 4 and len(explorer.tokens) == MAX_TOKENS


def test_same_seed_same_weights_other_seed_other_weights_and_global_rng_untouched():
    state = torch.get_rng_state()
    a, b = HeadExplorer(seed=3), HeadExplorer(seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a.weights, b.weights) and a.drawn["weights"] == b.drawn["weights"]
    b.update(seed=4)
    assert not torch.allclose(a.weights, b.weights)
    b.update(seed=3)
    assert torch.equal(a.weights, b.weights)


def test_fresh_layers_share_their_projections_across_h():
    one, eight = fresh_attention(32, 1, seed=0), fresh_attention(32, 8, seed=0)
    for name in ("W_q", "W_k", "W_v", "W_o"):
        assert torch.equal(getattr(one, name).weight, getattr(eight, name).weight)
    bound = 32**-0.5  # PyTorch's default range for nn.Linear with fan-in 32
    assert one.W_q.weight.abs().max() <= bound and one.W_q.weight.std() > bound / 3


def test_embed_tokens_is_stable_per_token_and_adds_positions():
    x = token_vectors(["the", "cat", "the"], 16)  # (3, 16)
    assert x.shape == (3, 16) and x.dtype == torch.float32
    assert torch.equal(x[0], x[2]) and not torch.equal(x[0], x[1])
    assert x.abs().max() <= 3**0.5 and 0.5 < x.var() < 1.5  # uniform in [-sqrt(3), sqrt(3)): variance 1
    with_positions = embed_tokens(["the", "cat", "the"], 16)
    torch.testing.assert_close(with_positions - x, mha.sinusoidal_positions(3, 16))
    # Not Python's hash(), which is salted per process: every process, machine and the page's port get
    # these numbers (mha.compute.portable_random), pinned here.
    pinned = [[-1.4748064279556274, 0.27348437905311584, 0.3173903822898865, 1.3194605112075806]]
    assert torch.equal(token_vectors(["the"], 4), torch.tensor(pinned, dtype=torch.float32))


@pytest.mark.parametrize(
    ("tokens", "d_model", "error", "match"),
    [
        ("the cat", 8, TypeError, "sequence of strings"),
        (["the", 1], 8, TypeError, "only strings"),
        ([], 8, ValueError, "must not be empty"),
        (["the"], 0, ValueError, "d_model must be a positive int"),
    ],
)
def test_embed_tokens_rejects_bad_input(tokens, d_model, error, match):
    with pytest.raises(error, match=match):
        embed_tokens(tokens, d_model)


def trained_model() -> tuple[mha.MultiHeadAttention, dict[str, int], torch.Tensor]:
    """A small 'trained' layer with an embedding table over a tiny vocabulary, as a chapter would pass."""
    torch.manual_seed(1)
    model = mha.MultiHeadAttention(d_model=24, h=3).eval()
    vocab = {word: i for i, word in enumerate(["the", "cat", "sat", "on", "mat", "dog"])}
    table = torch.randn(len(vocab), 24)  # (vocab, d_model)
    return model, vocab, table


def test_trained_model_fixes_d_model_and_h_and_uses_its_embedding():
    model, vocab, table = trained_model()

    def embed(tokens):
        if any(t not in vocab for t in tokens):
            raise KeyError(f"unknown tokens {[t for t in tokens if t not in vocab]}")
        return table[[vocab[t] for t in tokens]] + mha.sinusoidal_positions(len(tokens), 24)  # (n, d_model)

    explorer = HeadExplorer(model, embed, sentence="the cat sat on the mat", mask="causal")
    s = explorer.settings
    assert s["source"] == "trained" and (s["d_model"], s["h"]) == (24, 3)
    assert explorer.config == {
        "trained": {"name": "", "d_model": 24, "h": 3, "known": None},
        "spec": explorer_spec(trained=True),
    }
    assert explorer.choices()["source"] == ["trained", "fresh"]
    check_drawn(explorer)
    x = embed(explorer.tokens)[None]  # (1, n, d_model)
    with torch.no_grad():
        expected = model(x, mask=mha.causal_mask(6))[1][0]  # (h, n, n)
    torch.testing.assert_close(explorer.weights, expected)
    assert explorer.shown == (model.d_model, model.h)
    with pytest.raises(ValueError, match="the trained model fixes h = 3"):
        explorer.update(h=4)

    explorer.update(sentence="the <b>unicorn</b> sat")  # not in the vocabulary: a message, not a KeyError
    assert explorer.message.startswith("This model cannot embed that sentence: unknown tokens")
    assert "'<b>unicorn</b>'" in explorer.message  # plain text: the page shows it literally
    explorer.update(sentence="the dog sat")
    check_drawn(explorer)

    explorer.update(source="fresh")  # compare with a fresh layer: its own d_model and h come back
    assert (explorer.settings["d_model"], explorer.settings["h"]) == (32, 4)
    check_drawn(explorer)
    explorer.update(h=8)
    check_drawn(explorer)
    explorer.settings = {
        **explorer.settings,
        "source": "trained",
        "d_model": 24,
        "h": 3,
    }  # what the page sends
    assert explorer.shown == (24, 3) and explorer.drawn["shape"] == [3, 3, 3]
    explorer.update(source="fresh")
    assert (explorer.settings["d_model"], explorer.settings["h"]) == (32, 8)


def test_without_a_trained_model_the_source_is_fixed_to_fresh():
    explorer = HeadExplorer()
    assert explorer.settings["source"] == "fresh" and explorer.choices()["source"] == ["fresh"]


def test_an_error_inside_a_callback_is_shown_kept_and_raised():
    calls = []

    def embed(tokens):
        calls.append(tokens)
        if len(calls) > 1:
            raise RuntimeError("a bug in the chapter's embedding")
        return embed_tokens(tokens, 24)

    model, _, _ = trained_model()
    explorer = HeadExplorer(model, embed)
    with pytest.raises(RuntimeError, match="a bug in the chapter's embedding"):
        explorer.update(mask="causal")  # what a notebook cell (or nbval) would do
    assert isinstance(explorer.last_error, RuntimeError)
    assert explorer.message.startswith("Something went wrong inside the explorer: RuntimeError")
    assert explorer.drawn["level"] == "error" and explorer.drawn["message"] == explorer.message
    with pytest.raises(RuntimeError, match="a bug"):
        explorer.settings = {**explorer.settings, "mask": "none"}  # the same from the page


def test_an_embedding_of_the_wrong_shape_is_a_bug_and_raises():
    model, _, _ = trained_model()
    explorer_args = (model, lambda tokens: torch.zeros(len(tokens), 7))
    with pytest.raises(
        ValueError, match=r"embed returned shape \(10, 7\), expected \(n, d_model\) = \(10, 24\)"
    ):
        HeadExplorer(*explorer_args)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"model": torch.nn.MultiheadAttention(8, 2)}, TypeError, "mha.MultiHeadAttention"),
        ({"embed": "table"}, TypeError, "embed must be a callable"),
        ({"d_model": 10}, ValueError, "d_model must be one of"),
        (
            {"d_model": 12, "h": 5},
            ValueError,
            r"h must be one of 1, 2, 3, 4, 6, 12 \(divisors of d_model=12\)",
        ),
        ({"mask": "future"}, ValueError, "mask must be one of"),
        ({"seed": -1}, ValueError, "seed must be an int"),
        ({"sentence": None}, TypeError, "sentence must be a str"),
        ({"valid_length": 11}, ValueError, r"valid_length must be an int in 1\.\.n=10"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        HeadExplorer(**kwargs)


def test_display_bundle_has_the_widget_view_and_the_static_front_end(capsys):
    explorer = HeadExplorer(d_model=16, h=4, mask="causal")
    assert capsys.readouterr() == ("", "")  # no prints, no display at construction
    bundle, _ = explorer._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.model_id
    assert "image/png" not in bundle  # no pictures: the page draws
    page = bundle["text/html"]  # the browser front end, with the shapes for readers without scripts
    assert page.startswith('<div class="mha-explorer"><script type="application/json">')
    (root,) = figure_roots(page)
    config = root.data
    assert config["settings"] == {
        "d_model": 16,
        "h": 4,
        "mask": "causal",
        "valid_length": 8,
        "sentence": explorer.settings["sentence"],
        "seed": 0,
        "source": "fresh",
    }
    assert config["model"] is None
    assert '<noscript><div class="mha-shapes">' in page and "16 / 4 = 4" in page
    assert "live kernel" not in page  # the page is interactive: no note about a kernel
    assert bundle["text/plain"] == "HeadExplorer(d_model=16, h=4, mask='causal', tokens=10, source='fresh')"


def test_a_trained_model_with_its_vocabulary_goes_into_the_static_page():
    model, vocab, table = trained_model()

    def embed(tokens):
        return table[[vocab[t] for t in tokens]] + mha.sinusoidal_positions(len(tokens), 24)  # (n, d_model)

    with_vocabulary = HeadExplorer(model, embed, sentence="the cat", vocabulary=list(vocab), max_tokens=8)
    (root,) = figure_roots(with_vocabulary.static_html())
    config = root.data
    assert config["model"]["vocab"] == list(vocab) and config["settings"]["source"] == "trained"
    without = HeadExplorer(model, embed, sentence="the cat").static_html()
    assert "mha-explorer" not in without and "live kernel" in without and "24 / 3 = 8" in without


# ---------------------------------------------------------------------------------------------------------
# The stage stepper and the cost calculator
# ---------------------------------------------------------------------------------------------------------

KEYS = [stage.key for stage in STAGES]


@pytest.fixture(scope="module")
def stages():
    ex = worked_example()
    return attention_stages(ex.module(), ex.x)


def test_stepper_sends_every_stage_once_and_walks_them(stages):
    stepper = stage_stepper(stages, tokens=["a", "b", "c", "d"])
    assert isinstance(stepper, StageStepper)
    config = stepper_config(stages, ["a", "b", "c", "d"], "out")  # the page draws from these
    assert stepper.config == {k: v for k, v in config.items() if k != "settings"}
    assert stepper.settings == {"stage": "out"}
    assert stepper.caption == "stage 13 of 13: output projection, shape (4, 8) = (n, d_model)"
    stepper.update(stage="x")
    for i, key in enumerate(KEYS):
        assert stepper.stage == key and stepper.index == i
        assert stepper.caption.startswith(f"stage {i + 1} of {len(KEYS)}: ")
        assert f"shape {tuple(stages[key].shape)} = " in stepper.caption
        assert torch.equal(stepper.values, stages[key])
        stepper.next()
    assert stepper.stage == "out"  # next stops at the end, previous at the start
    for _ in range(20):
        stepper.previous()
    assert stepper.stage == "x"
    stepper.settings = {"stage": "weights"}  # what the page sends
    assert stepper.caption.startswith("stage 10 of 13: attention weights")


def test_stepper_display_bundle_has_the_static_front_end(stages):
    stepper = stage_stepper(stages, start="q")
    bundle, _ = stepper._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == stepper.model_id
    page = bundle["text/html"]
    assert page.startswith('<div class="mha-stepper"><script type="application/json">')
    (root,) = figure_roots(page)
    config = root.data
    assert config["settings"] == {"stage": "q"} and [s["key"] for s in config["stages"]] == KEYS
    assert config["spec"] == stepper_spec()
    assert config["stages"][KEYS.index("q")]["values"] == stages["q"].tolist()
    assert bundle["text/plain"] == f"StageStepper({stepper.caption})"


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda s: stage_stepper(s, start="nope"), ValueError, "stage must be one of x, q, k, v, q_heads"),
        (lambda s: stage_stepper({"x": s["x"]}), ValueError, "lacks"),
        (lambda s: stage_stepper(s, tokens=["a"]), ValueError, "tokens must be 4 strings"),
        (lambda s: stage_stepper(s).update(stage="nope"), ValueError, 'got "nope"'),
        (lambda s: stage_stepper(s).update(stage=3), ValueError, "got 3"),
    ],
)
def test_stepper_rejects_bad_arguments(stages, call, error, match):
    with pytest.raises(error, match=match):
        call(stages)


def test_calculator_sends_the_rows_of_cost_report():
    calc = cost_calculator("Llama 3.1 8B", context=4096)
    assert isinstance(calc, CostCalculator)
    assert calc.settings == {"model": "Llama 3.1 8B", "context": 4096, "batch": 1, "dtype": "bfloat16"}
    assert all(MODEL_CONFIGS[c["name"]].kind == "decoder" for c in calc.config["configs"])
    for changes in ({"model": "Llama 2 70B"}, {"batch": 8}, {"dtype": "float32"}, {"context": 2**20}):
        calc.update(**changes)
        s = calc.settings
        text = cost_report(s["model"], s["context"], batch=s["batch"], dtype=s["dtype"])
        width = max(len(k) for k, _ in calc.rows)
        assert "\n".join(f"{k.ljust(width)}  {v}".rstrip() for k, v in calc.rows) == text
        assert calc.drawn["rows"] == [list(row) for row in calc.rows]
        costs = model_costs(
            MODEL_CONFIGS[s["model"]], s["context"], batch=s["batch"], dtype=DTYPES[s["dtype"]]
        )
        assert calc.drawn["numbers"] == {k: str(v) for k, v in dataclasses.asdict(costs).items()}
        assert calc.costs == costs
        assert calc.rows == cost_rows(s["model"], s["context"], batch=s["batch"], dtype=s["dtype"])
    calc.settings = {**calc.settings, "model": "GPT-2 small"}  # what the page sends
    assert calc.rows[0][1].startswith("GPT-2 small") and calc.report() == cost_report(
        "GPT-2 small", 2**20, batch=8, dtype="float32"
    )


def test_calculator_looks_the_model_up_once_per_change(monkeypatch):
    """The model's name becomes a configuration once, in the widget; the costs and rows take the config."""
    import mha.costs.counts
    import mha.costs.report
    import mha.widgets.calculator

    calc, lookups = cost_calculator(), []
    for module in (mha.widgets.calculator, mha.costs.report, mha.costs.counts):
        real = module.get_config

        def counting(model, *args, _real=real, **kwargs):
            if isinstance(model, str):
                lookups.append(model)
            return _real(model, *args, **kwargs)

        monkeypatch.setattr(module, "get_config", counting)
    calc.update(model="Gemma 3 27B")
    calc.update(context=1000)
    assert lookups == ["Gemma 3 27B", "Gemma 3 27B"]


def test_calculator_display_bundle_has_the_static_front_end():
    calc = cost_calculator("Mistral 7B", context=8192)
    bundle, _ = calc._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == calc.model_id
    page = bundle["text/html"]
    assert page.startswith('<div class="mha-calculator"><script type="application/json">')
    (root,) = figure_roots(page)
    config = root.data
    assert config == calculator_config(calc.settings)
    assert (
        bundle["text/plain"] == "CostCalculator(model='Mistral 7B', context=8192, batch=1, dtype='bfloat16')"
    )


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: cost_calculator("T5-base"), ValueError),
        (lambda: cost_calculator("GPT-5"), KeyError),
        (lambda: cost_calculator(context=0), ValueError),
        (lambda: cost_calculator(batch=2**13), ValueError),
        (lambda: cost_calculator().update(dtype="int3"), ValueError),
        (lambda: cost_calculator().update(layers=3), KeyError),
    ],
)
def test_calculator_rejects_bad_arguments(call, error):
    with pytest.raises(error):
        call()


def test_calculator_from_the_page_with_a_bad_value_goes_back():
    calc = cost_calculator()
    before = dict(calc.settings)
    with pytest.raises(ValueError, match="context must be an int"):
        calc.settings = {**before, "context": 0}
    assert calc.settings == before


# -- one spec: constants, rules and messages live in Python only -------------------------------------------


def _all_specs() -> list[dict]:
    from mha.chapters.decoder import MESSAGES as DECODER_MESSAGES
    from mha.chapters.decoder_box import box_spec as decoder_box_spec
    from mha.costs.report import calculator_data
    from mha.widgets.minilm_page import box_spec
    from mha.widgets.spec import calculator_spec, realheads_spec, sparse_spec, windows_spec

    return [
        explorer_spec(),
        explorer_spec(trained=True),
        windows_spec(),
        sparse_spec(),
        calculator_spec([c["name"] for c in calculator_data()]),
        stepper_spec(),
        realheads_spec(layers=6, heads=12, sentences=["a"]),
        box_spec([["cls"] * 12] * 6),
        decoder_box_spec({(0, 1): "previous token", (1, 0): "induction"}),
        {"messages": DECODER_MESSAGES},  # the decoder's, which come with its weights to the port
    ]


def _messages(spec: dict) -> list[str]:
    """A spec's message templates, the labels and templates of the calculator's rows and of the explorer's
    shapes."""
    out = []
    for value in spec["messages"].values():
        out.extend(value.values() if isinstance(value, dict) else [value])
    for label, template in spec.get("rows", {}).values():
        out.extend([label, template])
    for label, template in spec.get("shapes", []):  # the explorer's table of shapes
        out.extend([*(p if isinstance(p, str) else p[1] for p in label), template])
    return out


def test_no_script_declares_a_mask_name_or_a_message_of_python():
    """Every mask name, message template and calculator row (each literal piece between its {fields}) is
    defined in Python only: no script of mha/widgets/static/, ports included, spells one, nor its comments."""
    import re

    from mha.widgets.frontend import SCRIPTS, static_file

    scripts = {name: static_file(name) for name in SCRIPTS}
    figures = {
        "explorer.js",
        "windows.js",
        "sparse.js",
        "calculator.js",
        "realheads.js",
        "minilm.js",
        "decoderbox.js",
    }
    figures |= {"ports/explorer.js", "ports/sparse.js", "ports/decoder.js"}
    assert {"core.js", "controller.js", *figures} <= set(scripts)
    pieces = set()
    for spec in _all_specs():
        for template in _messages(spec):
            pieces.update(p.strip() for p in re.split(r"\{\w+\}", template) if len(p.strip()) >= 12)
    found = []
    for name, text in scripts.items():
        for mask in MASKS:  # as a word, not part of a longer name nor CSS (`padding: 0`, `display: none`)
            if re.search(rf"(?<![\w-])(?<!: ){re.escape(mask)}(?![\w-]|\s*:)", text):
                found.append((name, mask))
        found.extend((name, piece) for piece in pieces if piece in text)
    assert found == []


def test_what_the_spec_says_each_mask_hides_is_what_build_mask_hides():
    """The page draws a mask from the spec's words (no_later: a query sees no later key; cut: no key at or
    after valid_length); they must say what build_mask builds. Every spec is JSON as it is."""
    explorer = _all_specs()[0]
    for m in explorer["masks"]:
        mask = build_mask(m["name"], 5, 3)
        full = (
            torch.ones(5, 5, dtype=torch.bool)
            if mask is None
            else torch.broadcast_to(mask, (1, 1, 5, 5))[0, 0]
        )
        assert bool(m["no_later"]) == (not full[0, 1].item()) and bool(m["cut"]) == (not full[4, 3].item())
    json.dumps(_all_specs())


def test_explorer_and_page_share_one_message_per_case():
    from mha.widgets.spec import STILL

    explorer = HeadExplorer()
    explorer.update(sentence="")
    assert explorer.message == explorer.spec["messages"]["no_tokens"] + STILL


# -- the sparse-attention figure ---------------------------------------------------------------------------


def test_sparse_explorer_checks_its_settings_and_writes_its_root():
    from mha.widgets.frontend import FIGURES
    from mha.widgets.sparse import check_sparse_settings, sparse_explorer
    from mha.widgets.spec import SPARSE_DEFAULTS, sparse_spec

    assert ".mha-sparse" in FIGURES
    figure = sparse_explorer(sentence="a b c", top_k=2)
    assert figure.settings == {**SPARSE_DEFAULTS, "sentence": "a b c", "top_k": 2}
    assert figure.config == {"spec": sparse_spec()}
    page = figure.static_html()
    assert page.startswith('<div class="mha-sparse">') and '"top_k":2' in page and "needs JavaScript" in page
    assert check_sparse_settings({"top_k": None})["top_k"] is None  # every key: dense attention
    with pytest.raises(ValueError, match=r"top_k must be an int in 1\.\.n=3"):
        check_sparse_settings({"sentence": "a b c", "top_k": 4})
    with pytest.raises(ValueError, match="seed must be an int"):
        check_sparse_settings({"seed": -1})
    with pytest.raises(ValueError, match="sentence must have 1 to 16 words"):
        check_sparse_settings({"sentence": " "})
    with pytest.raises(ValueError, match="sentence must have 1 to 16 words"):
        check_sparse_settings({"sentence": " ".join(["w"] * 17), "top_k": 2})
    with pytest.raises(KeyError, match="unknown settings"):
        check_sparse_settings({"k": 2})
    with pytest.raises(TypeError, match="sentence must be a str"):
        check_sparse_settings({"sentence": 3})
