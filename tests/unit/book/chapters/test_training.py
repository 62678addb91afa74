"""book.chapters.training: the tiny model, training loop, evaluation, head ablation and the shipped runs."""

import dataclasses

import pytest
import torch

import mha
from book.chapters.tasks import IGNORE, TASKS
from book.chapters.training import (
    GRID_H,
    GRID_SEEDS,
    GRID_TASKS,
    TrainConfig,
    attention_by_offset,
    attention_to_markers,
    build_model,
    evaluate,
    head_ablation,
    load_models,
    load_results,
    loss_and_accuracy,
    train,
)
from mha.compute import ablate_heads

TINY = {"steps": 80, "batch_size": 64, "lr": 1e-2, "warmup": 5, "eval_every": 40, "eval_size": 128}


def test_a_tiny_run_learns():
    _, curve = train(TrainConfig("copy-1", h=2, **TINY))
    assert curve["step"] == [0, 40, 80]
    assert curve["loss"][-1] < 0.5 * curve["loss"][0]
    assert curve["accuracy"][-1] > curve["accuracy"][0]


def test_training_is_deterministic():
    config = TrainConfig("recall-3", h=4, seed=3, **TINY)
    a, curve_a = train(config)
    b, curve_b = train(config)
    assert curve_a == curve_b
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name


def test_seeds_give_different_models_and_leave_the_global_rng_alone():
    state = torch.get_rng_state()
    a = build_model(TrainConfig("copy-3", h=1, seed=0))
    b = build_model(TrainConfig("copy-3", h=1, seed=1))
    assert torch.equal(state, torch.get_rng_state())
    assert not torch.equal(a.attn.W_q.weight, b.attn.W_q.weight)


@pytest.mark.parametrize("task", GRID_TASKS)
def test_parameter_count_does_not_depend_on_h(task):
    counts = {h: sum(p.numel() for p in build_model(TrainConfig(task, h)).parameters()) for h in GRID_H}
    assert len(set(counts.values())) == 1, counts


@pytest.mark.parametrize("h", [1, 4])
def test_forward_shapes_and_causal_weights(h):
    model = build_model(TrainConfig("copy-3", h))
    task = model.task
    tokens, _ = task.sample(5, seed=0)
    logits, weights = model(tokens)
    assert logits.shape == (5, task.seq_len, task.n_lookups, task.n_symbols)
    assert weights.shape == (5, h, task.seq_len, task.seq_len)
    torch.testing.assert_close(weights.sum(-1), torch.ones(5, h, task.seq_len))
    assert (weights.triu(diagonal=1) == 0).all()
    assert model.embed(tokens).shape == (5, task.seq_len, 16)


def test_loss_and_accuracy_skip_ignored_targets():
    targets = torch.tensor([[[1, IGNORE], [0, 2]]])  # (B=1, n=2, k=2)
    logits = torch.full((1, 2, 2, 3), -10.0)  # (B, n, k, S)
    logits[0, 0, 0, 1] = logits[0, 1, 0, 0] = 10.0  # slot 0 right twice
    logits[0, 0, 1, 0] = logits[0, 1, 1, 1] = 10.0  # slot 1 wrong where scored
    loss, slot_accuracy = loss_and_accuracy(logits, targets)
    assert slot_accuracy.tolist() == [1.0, 0.0]
    assert loss.item() == pytest.approx(20.0 / 3, rel=1e-4)  # two near-0 losses and one of about 20


def per_head_by_hand(attn, x, mask, heads_off):
    """The attention output recomputed from the module's public weights, with some heads zeroed."""
    B, n, d_model = x.shape
    q = attn.W_q(x).view(B, n, attn.h, attn.d_k).transpose(1, 2)  # (B, h, n, d_k)
    k = attn.W_k(x).view(B, n, attn.h, attn.d_k).transpose(1, 2)  # (B, h, n, d_k)
    v = attn.W_v(x).view(B, n, attn.h, attn.d_k).transpose(1, 2)  # (B, h, n, d_k)
    heads, _ = mha.scaled_dot_product_attention(q, k, v, mask)  # (B, h, n, d_k)
    heads[:, list(heads_off)] = 0.0
    return attn.W_o(heads.transpose(1, 2).reshape(B, n, d_model))  # (B, n, d_model)


@pytest.mark.parametrize(("h", "heads_off"), [(4, [1]), (4, [0, 3]), (8, [7]), (2, [])])
def test_ablate_heads_matches_a_by_hand_computation(h, heads_off):
    attn = mha.MultiHeadAttention(16, h).double()
    x = torch.randn(3, 6, 16, dtype=torch.float64)
    mask = mha.causal_mask(6)
    with torch.no_grad(), ablate_heads(attn, heads_off):
        out, _ = attn(x, mask=mask)
        fused, _ = attn(x, mask=mask, need_weights=False)
        expected = per_head_by_hand(attn, x, mask, heads_off)
    torch.testing.assert_close(out, expected, atol=1e-12, rtol=0)
    torch.testing.assert_close(fused, expected, atol=1e-12, rtol=0)


def test_ablating_every_head_leaves_the_bias_and_the_hook_is_removed():
    attn = mha.MultiHeadAttention(8, 2).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    before, _ = attn(x)
    with ablate_heads(attn, range(2)):
        out, _ = attn(x)
    torch.testing.assert_close(out, attn.W_o.bias.expand(2, 5, 8))
    after, _ = attn(x)
    assert torch.equal(before, after) and not attn.W_o._forward_pre_hooks


@pytest.mark.parametrize("heads", [[2], [-1], [True]])
def test_ablate_bad_heads_raises(heads):
    attn = mha.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="heads"), ablate_heads(attn, heads):
        pass


def test_head_ablation_rows():
    model, _ = train(TrainConfig("copy-1", h=4, **TINY))
    full = evaluate(model, size=256)["accuracy"]
    rows = head_ablation(model, size=256)
    assert [row["head"] for row in rows] == [0, 1, 2, 3]
    for row in rows:
        ablated = evaluate(model, size=256, heads_off=[row["head"]])["accuracy"]
        assert row["accuracy"] == ablated and row["drop"] == pytest.approx(full - ablated)


# --- the shipped artefacts ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    results = load_results()
    return results, load_models(results)


def test_shipped_runs_cover_the_grid_with_default_configs(shipped):
    results, models = shipped
    expected = {TrainConfig(t, h, s).key for t in GRID_TASKS for h in GRID_H for s in GRID_SEEDS}
    assert set(results["runs"]) == set(models) == expected
    for key, record in results["runs"].items():
        config = TrainConfig(**record["config"])
        assert config.key == key
        assert config == dataclasses.replace(TrainConfig(config.task, config.h, config.seed))
        assert record["curve"]["step"][-1] == config.steps
        # The curve ends with the float32 model, "final" is the shipped float16 copy: nearly the same.
        assert abs(record["curve"]["accuracy"][-1] - record["final"]["accuracy"]) < 1e-3


def test_embed_names_is_embed_by_name():
    model = build_model(TrainConfig("recall-3", h=2))
    names = ["3", "A5", "0", "C1", "?"]
    ids = torch.tensor([[3, 8 + 5, 0, 24 + 1, 32]])
    torch.testing.assert_close(model.embed_names(names), model.embed(ids)[0])
    with pytest.raises(KeyError, match="Z9"):
        model.embed_names(["3", "Z9"])
    with pytest.raises(ValueError, match="1 to 16"):
        model.embed_names(["3"] * 17)


def test_attention_by_offset_finds_a_fixed_offset():
    n, h = 6, 2
    weights = torch.zeros(3, h, n, n)
    for i in range(n):
        weights[:, 0, i, max(i - 2, 0)] = 1.0  # head 0 looks 2 back (or at the start)
        weights[:, 1, i, : i + 1] = 1.0 / (i + 1)  # head 1 spreads evenly
    profile = attention_by_offset(weights, start=2)
    assert profile.shape == (h, n)
    assert profile[0].tolist() == [0, 0, 1, 0, 0, 0]
    expected_o0 = sum(1 / (i + 1) for i in range(2, n)) / (n - 2)
    assert profile[1, 0].item() == pytest.approx(expected_o0)
    assert profile[1, 5].item() == pytest.approx(1 / 6)  # only query 5 has a key 5 back
    with pytest.raises(ValueError, match="start"):
        attention_by_offset(weights, start=n)


def test_attention_to_markers_rows_sum_to_one_and_find_the_marker():
    task = TASKS["recall-3"]
    tokens, _ = task.sample(4, seed=0)
    n = task.seq_len
    weights = torch.zeros(4, 2, n, n)
    weights[:, 0, -1] = (tokens // task.n_symbols == 2).float()  # head 0: all on marker B
    weights[:, 1, -1, -1] = 1.0  # head 1: on the query itself
    shares = attention_to_markers(weights, tokens, task)
    torch.testing.assert_close(shares, torch.tensor([[0.0, 1, 0, 0, 0], [0, 0, 0, 0, 1]]))
    with pytest.raises(ValueError, match="recall"):
        attention_to_markers(weights, tokens, TASKS["copy-3"])


def test_split_embedding_adds_a_marker_vector_and_a_symbol_vector():
    model = build_model(TrainConfig("recall-3-split", h=2))
    assert model.embedding.num_embeddings == 8 and model.marker.num_embeddings == 5
    x = model.embed_names(["A5", "B5", "A3", "?"])  # (n, d_model), positions 0..3
    p = model.position.weight[:4]  # (4, d_model)
    symbol, marker = model.embedding.weight, model.marker.weight
    torch.testing.assert_close(x[0] - p[0], symbol[5] + marker[1])
    torch.testing.assert_close(x[1] - p[1], symbol[5] + marker[2])
    torch.testing.assert_close(x[2] - p[2], symbol[3] + marker[1])
    torch.testing.assert_close(x[3] - p[3], symbol[0] + marker[4])  # the query token
    assert build_model(TrainConfig("recall-3", h=2)).marker is None
