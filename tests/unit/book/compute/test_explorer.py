"""book.compute.explorer: the head explorer's computations: fresh layers and the tokens' vectors; and the
page's port, ports/explorer.js, equal to explorer_weights in mini-racer."""

import pytest
import torch

import mha
from book.compute.explorer import (
    build_mask,
    embed_tokens,
    explorer_weights,
    fresh_attention,
    head_weights,
    split_tokens,
    token_vectors,
)
from book.widgets.frontend import model_payload
from book.widgets.spec import explorer_spec
from tests.port_cases import (
    ODD,
    SHIPPED_SENTENCES,
    SPLIT_CASES,
    TRAINED_SENTENCES,
    explorer_sweep,
    site_explorer_sweep,
    trained_like_model,
    unicode_sample,
)


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
    # these numbers (book.compute.portable_random), pinned here.
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


@pytest.mark.parametrize(("sentence", "tokens"), SPLIT_CASES)
def test_split_tokens_splits_at_spaces_and_cjk_by_character(sentence, tokens):
    assert split_tokens(sentence) == tokens


# -- ports/explorer.js: book.compute.explorer ----------------------------------------------------------------


def test_split_tokens_equal_python(ports):
    """The page's tokens are Python's: the figures' cases, the hard inputs and a sample of many scripts."""
    sentences = [s for s, _ in SPLIT_CASES] + ODD + unicode_sample(300, seed=1)
    got = ports.run("(all) => all.map(s => mhaFrontEnd.splitTokens(s))", sentences)
    assert got == [split_tokens(s) for s in sentences]


@pytest.mark.parametrize("sweep", [explorer_sweep, site_explorer_sweep])
def test_explorer_weights_equal_python(ports, sweep):
    cases = sweep()
    got = ports.run(
        "(cases, spec) => cases.map(s => mhaFrontEnd.explorerWeights(s, null, spec))", cases, explorer_spec()
    )
    for settings, weights in zip(cases, got, strict=True):
        expected = explorer_weights(**settings)
        weights = torch.tensor(weights, dtype=torch.float32)
        assert weights.shape == expected.shape, settings
        torch.testing.assert_close(
            weights, expected, atol=1e-5, rtol=0, msg=lambda m, s=settings: f"{s}: {m}"
        )


WEIGHTS_OF = "(p, spec, mask, all) => all.map(s => mhaFrontEnd.explorerWeights({sentence: s, mask}, p, spec))"


def test_explorer_runs_a_trained_model_s_payload(ports):
    """The payload of model_payload, read back (base64 float32 tensors, strictly by name) and run."""
    from book.chapters.training import load_models

    payload, expected = trained_like_model()
    spec = explorer_spec(trained=True)
    got = ports.run(WEIGHTS_OF, payload, spec, "causal", TRAINED_SENTENCES)
    for sentence, weights in zip(TRAINED_SENTENCES, got, strict=True):
        weights = torch.tensor(weights, dtype=torch.float32)
        torch.testing.assert_close(weights, expected(sentence.split()), atol=1e-5, rtol=0, msg=sentence)
    model = load_models()["copy-3/h4/seed0"]  # the shipped model of the appendix's explorer
    shipped = model_payload(model.attn, model.task.token_names(), model.embed_names, model.task.seq_len)
    for mask in ("causal", "none"):
        got = ports.run(WEIGHTS_OF, shipped, spec, mask, SHIPPED_SENTENCES)
        for sentence, weights in zip(SHIPPED_SENTENCES, got, strict=True):
            tokens = sentence.split()
            want = head_weights(model.attn, model.embed_names(tokens), build_mask(mask, len(tokens)))
            weights = torch.tensor(weights, dtype=torch.float32)
            torch.testing.assert_close(weights, want, atol=1e-5, rtol=0, msg=f"{sentence} {mask}")
