"""mha._checks: the error policy every public function shares. A wrong kind of object or dtype is a
TypeError, a wrong shape or value a ValueError, and the message names the argument and what it must be."""

import pytest
import torch

from mha import _checks
from mha.cache import KVCache


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: _checks.check_float_tensor("query", [1.0]), TypeError,
         "query must be a torch.Tensor, got list"),
        (lambda: _checks.check_float_tensor("query", torch.ones(2, dtype=torch.int64)), TypeError,
         "query must be a floating-point tensor, got dtype torch.int64"),
        (lambda: _checks.check_positive_int("h", 2.0), TypeError, "h must be a positive int, got float 2.0"),
        (lambda: _checks.check_positive_int("h", True), TypeError, "h must be a positive int, got bool True"),
        (lambda: _checks.check_positive_int("h", 0), ValueError, "h must be a positive int, got 0"),
        (lambda: _checks.check_positive_number("theta", "1"), TypeError, "theta must be a positive number"),
        (lambda: _checks.check_positive_number("theta", float("nan")), ValueError,
         "theta must be a positive number, got nan"),
        (lambda: _checks.check_probability("dropout", 1.0), ValueError,
         r"dropout must lie in \[0, 1\), got 1.0"),
        (lambda: _checks.check_choice("style", "spiral", ("a", "b")), ValueError,
         "style must be one of 'a', 'b', got 'spiral'"),
        (lambda: _checks.check_choice("flag", 1, (True, False)), ValueError,  # 1 == True, but not the same
         "flag must be one of True, False, got 1"),
        (lambda: _checks.check_numbers("temperature", (1.0,), "(a, b)"), TypeError,
         r"temperature must be a tuple \(a, b\) of positive numbers"),
        (lambda: _checks.check_numbers("temperature", (1.0, -2), "(a, b)"), ValueError,
         "temperature's b must be a positive number, got -2"),
        (lambda: _checks.check_mask(torch.ones(2, 3), (2, 3), "(n_q, n_k)"), TypeError,
         "mask must have dtype torch.bool"),
        (lambda: _checks.check_mask(torch.ones(4, 3, dtype=torch.bool), (2, 3), "(n_q, n_k)"), ValueError,
         r"mask of shape \(4, 3\) cannot broadcast to \(n_q, n_k\) = \(2, 3\)"),
        (lambda: _checks.check_same_dtype_device(x=torch.ones(1), y=torch.ones(1, dtype=torch.float64)),
         TypeError, "y has dtype torch.float64 but x has dtype torch.float32"),
        (lambda: _checks.check_part("band", 3, h=2, d_k=4, d_model=8), TypeError,
         "band must be an nn.Module"),
        (lambda: _checks.check_part("q_norm", torch.nn.RMSNorm(5), h=2, d_k=4, d_model=8), ValueError,
         r"q_norm normalises \(5,\), but a head has d_k=4"),
        (lambda: _checks.check_cache((1, 2), KVCache, torch.ones(1, 1, 8), {}), TypeError,
         "cache must be the KVCache that decode returned, or None, got tuple"),
    ],
)  # fmt: skip
def test_a_wrong_type_is_a_type_error_a_wrong_value_a_value_error_each_naming_the_argument(
    call, error, words
):
    with pytest.raises(error, match=words):
        call()


def test_a_check_returns_what_it_accepts():
    x = torch.ones(2)
    assert _checks.check_float_tensor("x", x) is x
    assert _checks.check_positive_int("h", 3) == 3
    assert _checks.check_positive_number("theta", 2) == 2.0 and isinstance(
        _checks.check_positive_number("theta", 2), float
    )
    assert _checks.check_numbers("t", [1, 2.5], "(a, b)") == (1.0, 2.5)
    assert _checks.check_mask(torch.ones(3, dtype=torch.bool), (2, 3), "(n_q, n_k)").shape == (3,)
    assert _checks.check_rotary_width(8, 0.5) == 4
    assert _checks.check_heads(24, 4, 2) == (4, 2, 6)


def test_a_cache_must_have_the_shapes_its_layer_expects():
    x = torch.ones(1, 1, 8)
    cache = KVCache(torch.zeros(1, 2, 5, 4), torch.zeros(1, 2, 5, 4))
    shapes = {
        "k": ("(B, h_kv, n_past, d_k)", (1, 2, None, 4)),
        "v": ("(B, h_kv, n_past, d_k)", (1, 2, None, 4)),
    }
    assert _checks.check_cache(cache, KVCache, x, shapes) == 5  # n_past
    shapes["v"] = ("(B, h_kv, n_past, d_v)", (1, 2, None, 3))
    with pytest.raises(
        ValueError, match=r"cache.v must have shape \(B, h_kv, n_past, d_v\) = \(1, 2, 5, 3\)"
    ):
        _checks.check_cache(cache, KVCache, x, shapes)
