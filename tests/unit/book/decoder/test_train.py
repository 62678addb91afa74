"""Training the book's decoder (book.decoder.train): its data, its schedule, its determinism, its log.

Nothing here trains the shipped model; the slow test runs a few steps of a small run twice and checks they
give the same weights and curves. The shipped log is checked against what the chapter will read from it.
"""

import dataclasses
import hashlib
import platform

import pytest
import torch

from book.decoder import induction
from book.decoder import train as train_decoder
from book.decoder.model import DECODER, ORDINARY, VOCABULARY, DecoderConfig, load_state
from book.decoder.train import TrainConfig


def test_the_corpus_is_the_documentation_that_ships_with_python():
    text = train_decoder.corpus_text()
    assert 'The "assert" statement' in text and len(text) > 100_000
    train, held_out = train_decoder.corpus_ids(text)
    assert len(train) + len(held_out) == len(text)
    assert len(held_out) == pytest.approx(train_decoder.HELD_OUT * len(text), abs=1)


def test_batches_are_fixed_by_seed_and_step():
    train, _ = train_decoder.corpus_ids()
    config = TrainConfig(batch_size=8)
    first = train_decoder.batch(config, 5, train, DECODER.context)
    assert first.shape == (8, DECODER.context + 1)
    assert torch.equal(first, train_decoder.batch(config, 5, train, DECODER.context))
    assert not torch.equal(first, train_decoder.batch(config, 6, train, DECODER.context))
    other_seed = dataclasses.replace(config, seed=1)
    assert not torch.equal(first, train_decoder.batch(other_seed, 5, train, DECODER.context))


def test_the_first_steps_see_repeated_rows_only_then_a_share():
    train, _ = train_decoder.corpus_ids()
    config = TrainConfig(batch_size=8, repeat_share=0.25, repeat_first=10)
    ordinary = torch.tensor([VOCABULARY.index(c) for c in ORDINARY])

    def repeated(row):  # a row that is a string of ordinary characters written again and again
        for m in range(config.repeat_lengths[0], config.repeat_lengths[1] + 1):
            if torch.equal(row[m:], row[:-m]) and torch.isin(row, ordinary).all():
                return True
        return False

    early = train_decoder.batch(config, 9, train, DECODER.context)
    assert all(repeated(row) for row in early)
    late = train_decoder.batch(config, 10, train, DECODER.context)
    assert [repeated(row) for row in late] == [True] * 2 + [False] * 6


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    config = TrainConfig(steps=1000, warmup=100, lr=1e-3)
    assert train_decoder.lr_at(config, 0) == pytest.approx(1e-5)
    assert train_decoder.lr_at(config, 99) == pytest.approx(1e-3)
    assert train_decoder.lr_at(config, 100) == pytest.approx(1e-3)
    assert train_decoder.lr_at(config, 1000) == pytest.approx(1e-4)
    rates = [train_decoder.lr_at(config, s) for s in range(100, 1001)]
    assert rates == sorted(rates, reverse=True)


@pytest.mark.slow
def test_a_few_training_steps_are_deterministic():
    config = TrainConfig(steps=4, batch_size=4, eval_every=2, repeat_first=2, warmup=2)
    small = DecoderConfig(d_model=16, h=2)
    text = train_decoder.corpus_text()[:20_000]
    model, curves = train_decoder.train(config, small, text=text)
    again, curves_again = train_decoder.train(config, small, text=text)
    assert curves == curves_again
    assert curves["step"] == [0, 2, 4]
    assert curves["train_loss"][0] is None and curves["train_loss"][1] > 0
    for name, t in model.state_dict().items():
        assert torch.equal(t, again.state_dict()[name]), name
    fresh = train_decoder.train(dataclasses.replace(config, steps=0), small, text=text)[0]
    assert not torch.equal(fresh.embed.weight, model.embed.weight)  # the steps did train


def test_the_shipped_log_describes_the_shipped_weights():
    log = induction.load_log()
    assert log["command"] == "python -m book.decoder.train"
    assert log["model"] == dataclasses.asdict(DECODER)
    assert log["train"] == {
        k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(TrainConfig()).items()
    }
    assert log["parameters"] == sum(t.numel() for t in load_state().values())
    corpus = log["corpus"]
    assert corpus["module"] == train_decoder.CORPUS and corpus["license"] == train_decoder.CORPUS_LICENSE
    text = train_decoder.corpus_text()
    if corpus["python"] == platform.python_version():  # the corpus is this Python's documentation
        assert corpus["sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert log["wall_seconds"] > 0 and log["cpu_seconds"] > 0
    curves = log["curves"]
    assert len({len(v) for v in curves.values()}) == 1  # one value per evaluation step in every series
    assert curves["step"][-1] == log["train"]["steps"]
