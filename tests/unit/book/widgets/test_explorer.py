"""book.widgets.explorer, driven like a reader: change a setting, then look at what the page is sent."""

import numpy as np
import pytest
import torch

import mha
from _ext.figure_roots import figure_roots
from book.compute.explorer import (
    D_MODELS,
    MASKS,
    MAX_TOKENS,
    build_mask,
    embed_tokens,
    explorer_weights,
    head_choices,
    split_tokens,
)
from book.widgets.explorer import HeadExplorer
from book.widgets.spec import explorer_spec


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
    """h follows d_model, and the explorer says so (as the page does: tests/unit/book/widgets/test_spec.py);
    the next change that needs no such step clears the note."""
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
    assert explorer.tokens == explorer.drawn["tokens"] == split_tokens(sentence)  # not escaped, not typeset
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
        ("", "at least one token"),
        ("   ", "at least one token"),
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
