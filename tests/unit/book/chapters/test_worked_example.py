"""The worked example's data: shapes, the stated choice for head 2, and the module it loads into."""

import torch

from book.chapters.worked_example import KEY_COLUMNS, VALUE_COLUMNS, worked_example


def test_shapes_and_dtype():
    ex = worked_example()
    assert (ex.h, ex.d_model, ex.d_k) == (2, 8, 4)
    assert ex.x.shape == (4, 8)
    for w in (ex.W_q, ex.W_k, ex.W_v):
        assert w.shape == (2, 8, 4) and w.dtype == torch.float64
    assert ex.W_o.shape == (8, 8)


def test_head_2_keys_and_values_follow_head_1s_rule():
    ex = worked_example()
    for i in range(ex.h):
        assert torch.equal(ex.W_k[i], ex.W_q[i][:, list(KEY_COLUMNS)]), i
        assert torch.equal(ex.W_v[i], ex.W_q[i][:, list(VALUE_COLUMNS)]), i


def test_returns_fresh_tensors():
    ex = worked_example()
    ex.x.zero_()
    assert worked_example().x[0, 0] == 1


def test_module_holds_the_per_head_matrices():
    ex = worked_example()
    attn = ex.module()
    assert not attn.training and attn.W_q.bias is None
    x = ex.x
    q = attn.W_q(x).view(4, ex.h, ex.d_k).transpose(0, 1)  # (h, n, d_k)
    k = attn.W_k(x).view(4, ex.h, ex.d_k).transpose(0, 1)
    v = attn.W_v(x).view(4, ex.h, ex.d_k).transpose(0, 1)
    torch.testing.assert_close(q, x @ ex.W_q, atol=1e-12, rtol=0)
    torch.testing.assert_close(k, x @ ex.W_k, atol=1e-12, rtol=0)
    torch.testing.assert_close(v, x @ ex.W_v, atol=1e-12, rtol=0)
    torch.testing.assert_close(attn.W_o(x), x @ ex.W_o, atol=1e-12, rtol=0)


def test_first_query_row_by_hand_and_the_tutorials_printed_tables_differ():
    ex = worked_example()
    q1_row = ex.x[0] @ ex.W_q[0]  # sum_j j * (j + c) / 10 for c = 0..3, by hand: 20.4, 24.0, 27.6, 31.2
    torch.testing.assert_close(q1_row, torch.tensor([20.4, 24.0, 27.6, 31.2], dtype=torch.float64))
    assert ex.printed["Q1"][0].tolist() == [22.0, 25.2, 28.4, 31.6]  # the tutorial's first row
    ours = {"Q1": ex.x @ ex.W_q[0], "K1": ex.x @ ex.W_k[0], "V1": ex.x @ ex.W_v[0]}
    for name, printed in ex.printed.items():
        assert printed.shape == (4, 4)
        assert not torch.isclose(printed, ours[name]).all(), name


def test_module_matches_hand_computation_and_torch():
    ex = worked_example()
    heads = []
    for i in range(ex.h):
        q, k, v = ex.x @ ex.W_q[i], ex.x @ ex.W_k[i], ex.x @ ex.W_v[i]
        heads.append(torch.softmax(q @ k.T / ex.d_k**0.5, dim=-1) @ v)
    expected = torch.cat(heads, dim=-1) @ ex.W_o  # (n, d_model)
    out, _ = ex.module()(ex.x[None])
    torch.testing.assert_close(out[0], expected, atol=1e-10, rtol=1e-12)


def test_the_small_example_is_well_scaled_and_its_heads_differ():
    from book.chapters.worked_example import small_example
    from book.compute import attention_stages

    ex = small_example()
    assert ex.tokens == ("the", "cat", "the", "dog")
    assert set(
        torch.cat([ex.x.flatten(), ex.W_q.flatten(), ex.W_k.flatten(), ex.W_v.flatten()]).tolist()
    ) <= {
        -1.0,
        0.0,
        1.0,
    }
    stages = attention_stages(ex.module(), ex.x)
    assert stages["scores"].abs().max() == 1  # unit-scale scores: no saturated softmax
    weights = stages["weights"]  # (h, n, n)
    assert weights.max() < 0.5  # far from one-hot
    previous = weights[0].argmax(-1).tolist()  # head 1: the position before (round the circle)
    assert previous == [3, 0, 1, 2]
    same_word = weights[1]  # head 2: "the" attends to both "the"s equally, more than to other words
    assert same_word[0, 0] == same_word[0, 2] > same_word[0, 1]
    assert not torch.allclose(weights[0], weights[1])
