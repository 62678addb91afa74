"""Tests for the head explorer, driven like a reader: set a control's value, then look at what is drawn."""

import base64
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import mha
from mha.compute.explorer import (
    D_MODELS,
    MASKS,
    MAX_TOKENS,
    build_mask,
    embed_tokens,
    fresh_attention,
    head_choices,
    token_vectors,
)
from mha.widgets.explorer import HeadExplorer

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def masked_cells(explorer: HeadExplorer) -> np.ndarray:
    """Which cells of each panel are drawn hatched, read from the overlays, shape (h, n, n)."""
    plot = explorer.plot
    alphas = []
    for overlay in plot.overlays[: plot.h]:
        texture = overlay.get_array()  # (n s, n s, 4)
        s = texture.shape[0] // plot.n_q
        alphas.append(overlay.get_visible() and texture[::s, ::s, 3] > 0)
    return np.array([np.broadcast_to(a, (plot.n_q, plot.n_k)) for a in alphas])


def check_drawn(explorer: HeadExplorer) -> None:
    """What every valid state must satisfy: weights, panels, hatching and shapes agree with the controls."""
    c = explorer.controls
    n, h = len(explorer.tokens), c.h.value
    assert explorer.status.value == ""
    assert explorer.layout == (c.d_model.value, h)
    assert c.d_model.value % h == 0 and h in c.h.options
    assert explorer.weights.shape == (h, n, n)
    assert len(explorer.plot.axes) == h  # one panel per head
    mask = build_mask(c.mask.value, n, c.valid_length.value)
    allowed = np.ones((n, n), bool) if mask is None else np.broadcast_to(mask.numpy(), (1, 1, n, n))[0, 0]
    np.testing.assert_array_equal(masked_cells(explorer), np.broadcast_to(~allowed, (h, n, n)))
    rows = explorer.weights.sum(-1)  # (h, n): 1 for a query with any allowed key
    torch.testing.assert_close(rows, torch.ones_like(rows))
    assert bytes(explorer.image.value).startswith(PNG_MAGIC)
    assert f"{c.d_model.value} / {h} = {c.d_model.value // h}" in explorer.shapes_html.value


def test_default_state_draws_one_panel_per_head_and_lists_shapes():
    explorer = HeadExplorer(d_model=32, h=8)
    check_drawn(explorer)
    shapes = explorer.shapes()
    assert shapes["d_k"] == 4
    assert shapes["Q_i"] == (10, 4) and shapes["weights"] == (8, 10, 10) and shapes["concat"] == (10, 32)
    assert shapes["parameters"]["total"] == 4 * 32 * 32 + 4 * 32  # W_q, W_k, W_v, W_o with biases
    text = explorer.shapes_html.value
    assert "<code>(10, 4)</code>" in text and "<b>4,224</b>" in text


def test_shapes_update_live_when_h_changes():
    explorer = HeadExplorer(d_model=64, h=4)
    explorer.controls.h.value = 16
    assert explorer.shapes()["Q_i"] == (10, 4)
    assert "64 / 16 = 4" in explorer.shapes_html.value
    assert len(explorer.plot.axes) == 16
    # The parameter count does not depend on h: heads split d_model.
    explorer.controls.h.value = 1
    assert explorer.shapes()["parameters"]["total"] == 4 * 64 * 64 + 4 * 64


def test_every_combination_of_d_model_h_and_mask_draws_without_error():
    explorer = HeadExplorer()
    c = explorer.controls
    seen = 0
    for d_model in D_MODELS:
        c.d_model.value = d_model
        assert list(c.h.options) == head_choices(d_model)  # an invalid pair cannot be chosen
        for h in head_choices(d_model):
            c.h.value = h
            for mask in MASKS:
                c.mask.value = mask
                check_drawn(explorer)
                seen += 1
    assert seen == 4 * sum(len(head_choices(d)) for d in D_MODELS)


@pytest.mark.parametrize("mask", ["padding", "causal + padding"])
def test_padding_hides_the_keys_after_the_valid_length(mask):
    explorer = HeadExplorer(d_model=16, h=2, mask=mask)
    assert not explorer.controls.valid_length.disabled
    for length in range(1, len(explorer.tokens) + 1):
        explorer.controls.valid_length.value = length
        check_drawn(explorer)
        hidden = masked_cells(explorer)[0]
        assert hidden[:, length:].all()
    explorer.controls.mask.value = "causal"
    assert explorer.controls.valid_length.disabled  # meaningless without padding


def test_d_model_change_keeps_h_valid():
    explorer = HeadExplorer(d_model=32, h=8)
    explorer.controls.d_model.value = 12
    assert explorer.controls.h.value == 6  # the largest divisor of 12 not above 8
    assert list(explorer.controls.h.options) == [1, 2, 3, 4, 6, 12]
    check_drawn(explorer)


def test_sentence_change_relabels_and_shortens_long_tokens():
    explorer = HeadExplorer(d_model=16, h=2)
    explorer.controls.sentence.value = "attention is all you need"
    check_drawn(explorer)
    assert explorer.tokens == ["attention", "is", "all", "you", "need"]
    assert [t.get_text() for t in explorer.plot.axes[0].texts][:5] == explorer.tokens
    explorer.controls.sentence.value = "a supercalifragilistic word"
    labels = [t.get_text() for t in explorer.plot.axes[0].texts][:3]
    assert labels == ["a", "supercali…", "word"]  # long tokens are shortened on the picture only


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
    before = (bytes(explorer.image.value), explorer.weights.clone())
    explorer.controls.sentence.value = sentence
    assert message in explorer.status.value
    assert bytes(explorer.image.value) == before[0] and torch.equal(explorer.weights, before[1])
    for control, value in ((explorer.controls.h, 4), (explorer.controls.mask, "padding")):
        control.value = value  # other controls keep working, still with the message
        assert message in explorer.status.value
    explorer.controls.sentence.value = " ".join(["word"] * MAX_TOKENS)  # the longest allowed
    check_drawn(explorer)
    assert explorer.controls.h.value == 4 and len(explorer.tokens) == MAX_TOKENS


def test_same_seed_same_picture_other_seed_other_weights_and_global_rng_untouched():
    state = torch.get_rng_state()
    a, b = HeadExplorer(seed=3), HeadExplorer(seed=3)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a.weights, b.weights) and bytes(a.image.value) == bytes(b.image.value)
    b.controls.seed.value = 4
    assert not torch.allclose(a.weights, b.weights)
    b.controls.seed.value = 3
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
    # Not Python's hash(), which is salted per process: another process gets the same vector.
    code = "from mha.compute.explorer import token_vectors; print(token_vectors(['the'], 4).tolist())"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert json.loads(other.stdout) == token_vectors(["the"], 4).tolist()


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
        return table[[vocab[t] for t in tokens]] + mha.sinusoidal_positions(len(tokens), 24)  # (n, d_model)

    explorer = HeadExplorer(model, embed, sentence="the cat sat on the mat", mask="causal")
    c = explorer.controls
    assert c.source.value == "trained" and not c.source.disabled
    assert (c.d_model.value, c.h.value) == (24, 3)
    assert c.d_model.disabled and c.h.disabled and c.seed.disabled
    assert "fixed by its weights" in explorer.note.value
    check_drawn(explorer)
    x = embed(explorer.tokens)[None]  # (1, n, d_model)
    with torch.no_grad():
        expected = model(x, mask=mha.causal_mask(6))[1][0]  # (h, n, n)
    torch.testing.assert_close(explorer.weights, expected)
    assert explorer.layout == (model.d_model, model.h)

    c.sentence.value = "the unicorn sat"  # not in the vocabulary: a message, not a KeyError
    assert "cannot embed" in explorer.status.value and "unicorn" in explorer.status.value
    c.sentence.value = "the dog sat"
    check_drawn(explorer)

    c.source.value = "fresh"  # compare with a fresh layer of the same size
    assert not (c.d_model.disabled or c.h.disabled or c.seed.disabled)
    assert explorer.layout == (24, 3)
    c.h.value = 8
    check_drawn(explorer)
    c.source.value = "trained"
    assert (c.h.value, explorer.layout) == (3, (24, 3))


def test_without_a_trained_model_the_source_is_fixed_to_fresh():
    explorer = HeadExplorer()
    assert explorer.controls.source.value == "fresh" and explorer.controls.source.disabled


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
        explorer.controls.mask.value = "causal"  # what a notebook cell (or nbval) would do
    assert isinstance(explorer.last_error, RuntimeError)
    assert "Something went wrong" in explorer.status.value


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
        ({"d_model": 12, "h": 5}, ValueError, r"h must be one of \[1, 2, 3, 4, 6, 12\]"),
        ({"mask": "future"}, ValueError, "mask must be one of"),
        ({"seed": -1}, ValueError, "seed must be an int"),
        ({"sentence": None}, TypeError, "sentence must be a str"),
        ({"valid_length": 11}, ValueError, r"valid_length must be an int in 1\.\.10"),
    ],
)
def test_constructor_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        HeadExplorer(**kwargs)


def test_display_bundle_has_the_widget_and_a_static_picture_with_a_note(capsys):
    explorer = HeadExplorer(d_model=16, h=4, mask="causal")
    assert capsys.readouterr() == ("", "")  # no prints, no display at construction
    bundle = explorer._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.widget.model_id
    assert base64.b64decode(bundle["image/png"]) == bytes(explorer.image.value)
    page = bundle["text/html"]  # the browser front end, with the picture for readers without scripts
    assert page.startswith('<div class="mha-explorer"><script type="application/json">')
    config = json.loads(page.split('"application/json">')[1].split("</script>")[0])
    assert config["settings"] == {
        "d_model": 16,
        "h": 4,
        "mask": "causal",
        "valid_length": 8,
        "sentence": explorer.controls.sentence.value,
        "seed": 0,
        "source": "fresh",
    }
    assert config["model"] is None
    assert '<noscript><div class="mha-head-explorer-static">' in page
    assert "live kernel" not in page  # the page is interactive: no note about a kernel
    assert f"data:image/png;base64,{bundle['image/png']}" in page
    assert "16 / 4 = 4" in page  # the shapes, too
    assert bundle["text/plain"] == "HeadExplorer(d_model=16, h=4, mask='causal', tokens=10, source='fresh')"


def test_a_failing_control_change_fails_nbval_and_a_valid_one_passes(tmp_path):
    """nbval fails on a notebook whose control change raises, and passes on the same one without the bug."""
    nbformat = pytest.importorskip("nbformat")

    def notebook(embed_source: str) -> dict:
        cells = [
            nbformat.v4.new_code_cell(embed_source),
            nbformat.v4.new_code_cell(
                "# nbval-ignore-output: the widget's model id differs on every run\n"
                "explorer = HeadExplorer(model, embed)\nexplorer",
                metadata={"tags": ["nbval-ignore-output"]},
            ),
            nbformat.v4.new_code_cell(
                'explorer.controls.mask.value = "causal"\nprint(explorer.weights.shape)',
                outputs=[nbformat.v4.new_output("stream", name="stdout", text="torch.Size([3, 10, 10])\n")],
            ),
        ]
        for count, cell in enumerate(cells, start=1):
            cell.execution_count = count  # nbval compares the outputs of cells that were run
        return nbformat.v4.new_notebook(cells=cells)

    setup = (
        "import torch, mha\nfrom mha.compute import embed_tokens\nfrom mha.widgets import HeadExplorer\n"
        "torch.manual_seed(0)\nmodel = mha.MultiHeadAttention(24, 3)\n"
    )
    good = setup + "def embed(tokens):\n    return embed_tokens(tokens, 24)\n"
    bad = setup + textwrap.dedent(
        """
        calls = []
        def embed(tokens):
            calls.append(tokens)
            if len(calls) > 1:
                raise RuntimeError("bug in a callback")
            return embed_tokens(tokens, 24)
        """
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    results = {}
    for name, source in (("good", good), ("bad", bad)):
        path = tmp_path / f"{name}.ipynb"
        nbformat.write(notebook(source), path)
        results[name] = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
             "-c", str(tmp_path / "pytest.ini"), str(path)],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip
    assert results["good"].returncode == 0, results["good"].stdout
    assert results["bad"].returncode != 0
    assert "bug in a callback" in results["bad"].stdout
