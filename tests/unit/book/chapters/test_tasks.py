"""book.chapters.tasks: the tasks are deterministic for a seed and their targets mean what they say."""

import pytest
import torch

from book.chapters.tasks import IGNORE, TASKS, Task


@pytest.mark.parametrize("name", sorted(TASKS))
def test_same_seed_same_batch_other_seed_other_batch(name):
    task = TASKS[name]
    tokens, targets = task.sample(32, seed=7)
    again_tokens, again_targets = task.sample(32, seed=7)
    assert torch.equal(tokens, again_tokens) and torch.equal(targets, again_targets)
    other_tokens, _ = task.sample(32, seed=8)
    assert not torch.equal(tokens, other_tokens)


def test_sampling_leaves_the_global_rng_alone():
    state = torch.get_rng_state()
    TASKS["recall-3"].sample(4, seed=0)
    assert torch.equal(state, torch.get_rng_state())


@pytest.mark.parametrize("name", sorted(TASKS))
def test_shapes_and_ranges(name):
    task = TASKS[name]
    tokens, targets = task.sample(16, seed=0)
    assert tokens.shape == (16, task.seq_len) and tokens.dtype == torch.long
    assert targets.shape == (16, task.seq_len, task.n_lookups)
    assert tokens.min() >= 0 and tokens.max() < task.vocab_size
    scored = targets[targets != IGNORE]
    assert scored.numel() > 0 and scored.min() >= 0 and scored.max() < task.n_symbols
    assert len(task.token_names()) == task.vocab_size


@pytest.mark.parametrize("name", ["copy-1", "copy-3"])
def test_copy_targets_are_the_tokens_offsets_back(name):
    task = TASKS[name]
    tokens, targets = task.sample(8, seed=1)
    start = max(task.offsets)
    assert (targets[:, :start] == IGNORE).all()
    for i in range(start, task.seq_len):
        for j, offset in enumerate(task.offsets):
            assert torch.equal(targets[:, i, j], tokens[:, i - offset])


@pytest.mark.parametrize("name", ["recall-1", "recall-3", "recall-3-split"])
def test_recall_targets_are_the_symbols_of_the_marked_tokens(name):
    task = TASKS[name]
    S = task.n_symbols
    tokens, targets = task.sample(64, seed=2)
    assert (tokens[:, -1] == task.query_token).all()
    assert (targets[:, :-1] == IGNORE).all()
    for b in range(64):
        body = tokens[b, :-1]
        for marker in range(task.n_markers):
            (place,) = torch.nonzero(body // S == marker + 1)[:, 0].tolist()  # exactly one token per marker
            if marker in task.lookups:
                assert targets[b, -1, task.lookups.index(marker)] == body[place] % S
    names = task.token_names()
    assert names[S + 5] == "A5" and names[task.query_token] == "?"


def test_markers_land_everywhere():
    # Markers must not sit at fixed places, or a head could find them by position instead of content.
    task = TASKS["recall-3"]
    tokens, _ = task.sample(512, seed=3)
    places = torch.nonzero(tokens[:, :-1] // task.n_symbols == 1)[:, 1]  # positions of the A tokens
    assert set(places.tolist()) == set(range(task.seq_len - 1))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"family": "copy", "offsets": (0,)}, "offsets"),
        ({"family": "copy", "offsets": (16,)}, "offsets"),
        ({"family": "recall", "n_markers": 0, "lookups": (0,)}, "n_markers"),
        ({"family": "recall", "n_markers": 2, "lookups": (2,)}, "lookups"),
        ({"family": "sort"}, "family"),
        ({"family": "copy", "offsets": (1,), "split_embedding": True}, "split_embedding"),
    ],
)
def test_bad_tasks_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Task("bad", description="", **kwargs)


def test_bad_batch_size_raises():
    with pytest.raises(ValueError, match="batch_size"):
        TASKS["copy-1"].sample(0, seed=0)


def test_split_task_has_the_same_data_as_its_twin():
    split, twin = TASKS["recall-3-split"], TASKS["recall-3"]
    assert split.split_embedding and not twin.split_embedding
    for x, y in zip(split.sample(8, seed=4), twin.sample(8, seed=4), strict=True):
        assert torch.equal(x, y)


def test_a_token_carries_a_symbol_never_a_value():
    # "values" are what W_v makes in attention; the tasks' descriptions must not reuse the word.
    for task in TASKS.values():
        assert "value" not in task.description, task.name
    assert not hasattr(TASKS["copy-1"], "n_values")
