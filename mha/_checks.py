"""Input checks shared by the public functions.

Each check raises a ``TypeError`` (wrong kind of object or dtype) or a ``ValueError`` (wrong shape or
value) whose message names the offending argument and what was expected, so a reader never has to decode
a traceback from deep inside PyTorch.
"""

from __future__ import annotations

import torch

from mha.cache import KVCache


def check_float_tensor(name: str, x: object) -> torch.Tensor:
    """Return ``x`` if it is a floating-point tensor, else raise ``TypeError`` naming ``name``."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    return x


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int of at least 1.

    Raises:
        TypeError: ``value`` is not an int (``bool`` excluded).
        ValueError: ``value`` is less than 1.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a positive int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def check_positive_number(name: str, value: object) -> float:
    """Return ``value`` if it is a number above 0; ``TypeError`` for a non-number, else ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__} {value!r}")
    if not value > 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def check_probability(name: str, value: float) -> float:
    """Return ``value`` if it lies in ``[0, 1)`` (a dropout probability), else raise ``ValueError``."""
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must lie in [0, 1), got {value}")
    return value


def check_heads(
    d_model: object, h: object, n_kv_heads: object = None, *, head_dim: object = None
) -> tuple[int, int, int]:
    """Check the head arithmetic of an attention layer and return ``(h, h_kv, d_k)``.

    Args:
        d_model: model width; ``h`` must divide it unless ``head_dim`` is given.
        h: number of query heads.
        n_kv_heads: number of key/value heads, which must divide ``h``; ``None`` means ``h``.
        head_dim: the head width ``d_k`` when a model sets it apart from ``d_model / h``; ``None`` means
            ``d_model / h``.

    Raises:
        TypeError: an argument that is not an int.
        ValueError: a non-positive argument, or a width that does not divide.
    """
    d_model, h = check_positive_int("d_model", d_model), check_positive_int("h", h)
    n_kv_heads = h if n_kv_heads is None else check_positive_int("n_kv_heads", n_kv_heads)
    if head_dim is None and d_model % h:
        raise ValueError(
            f"d_model={d_model} must be divisible by the number of heads h={h}, or give head_dim"
        )
    if h % n_kv_heads:
        raise ValueError(f"h={h} must be divisible by n_kv_heads={n_kv_heads}")
    return h, n_kv_heads, d_model // h if head_dim is None else check_positive_int("head_dim", head_dim)


def check_same_dtype_device(**tensors: torch.Tensor) -> None:
    """Raise ``TypeError`` unless all named tensors share one dtype and one device."""
    (first_name, first), *rest = tensors.items()
    for name, x in rest:
        if x.dtype != first.dtype:
            raise TypeError(
                f"{name} has dtype {x.dtype} but {first_name} has dtype {first.dtype}; "
                "convert them to one dtype"
            )
        if x.device != first.device:
            raise TypeError(
                f"{name} is on device {x.device} but {first_name} is on {first.device}; "
                "move them to one device"
            )


def check_mask(mask: object, target: tuple[int, ...], target_legend: str) -> torch.Tensor:
    """Check that ``mask`` is a boolean tensor that broadcasts to ``target``.

    Args:
        mask: the candidate mask.
        target: the shape it must broadcast to, e.g. ``(B, h, n_q, n_k)``.
        target_legend: the same shape in symbols, for the error message.
    """
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"mask must be a boolean torch.Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "for a 0/1 mask use mask.bool()"
        )
    shape = tuple(target)
    ok = mask.dim() <= len(shape)
    if ok:
        try:
            ok = torch.broadcast_shapes(mask.shape, shape) == torch.Size(shape)
        except RuntimeError:
            ok = False
    if not ok:
        raise ValueError(f"mask of shape {tuple(mask.shape)} cannot broadcast to {target_legend} = {shape}")
    return mask


def check_layer_inputs(
    query: object, key: object, value: object, *, d_model: int, weight: torch.Tensor
) -> None:
    """Check an attention layer's inputs ``(B, n_q, d_model)``, ``(B, n_k, d_model)`` (twice) against each
    other and against the layer's parameters (``weight``: one of them, for its dtype and device)."""
    for name, x in (("query", query), ("key", key), ("value", value)):
        check_float_tensor(name, x)
        if x.dim() != 3 or x.size(-1) != d_model:
            n = "n_q" if name == "query" else "n_k"
            raise ValueError(f"{name} must have shape (B, {n}, d_model={d_model}), got {tuple(x.shape)}")
    if not query.size(0) == key.size(0) == value.size(0):
        raise ValueError(
            "query, key and value must have the same batch size B, got "
            f"{query.size(0)}, {key.size(0)}, {value.size(0)}"
        )
    if key.size(1) != value.size(1):
        raise ValueError(
            f"key and value must have the same length n_k, got {key.size(1)} and {value.size(1)}"
        )
    check_same_dtype_device(query=query, key=key, value=value)
    if query.dtype != weight.dtype or query.device != weight.device:
        raise TypeError(
            f"query has dtype {query.dtype} on {query.device} but the module's parameters have "
            f"dtype {weight.dtype} on {weight.device}; use module.to(query) or convert the input"
        )


def check_cache(
    cache: object, kind: type, x: torch.Tensor, shapes: dict[str, tuple[str, tuple[int | None, ...] | None]]
) -> int:
    """Check a decode cache against its layer and the new tokens ``x``; return its length ``n_past``.

    Args:
        cache: the candidate, which must be a ``kind`` (the named tuple the layer's ``decode`` returns).
        kind: :class:`mha.KVCache` or :class:`mha.LatentCache`.
        x: the new tokens, for the batch size, dtype and device.
        shapes: for each field, its shape in symbols and in numbers, ``None`` standing for ``n_past`` (the
            length of the first field, on its axis -2); or, for a field that must be ``None``, what the
            message says instead and ``None``.
    """
    if not isinstance(cache, kind):
        raise TypeError(
            f"cache must be the {kind.__name__} that decode returned, or None, got {type(cache).__name__}"
        )
    n_past = cache[0].size(-2) if cache[0].dim() >= 2 else -1
    for name, (legend, shape) in shapes.items():
        t = getattr(cache, name)
        expected = None if shape is None else tuple(n_past if s is None else s for s in shape)
        got = None if t is None else tuple(t.shape)
        if got != expected:
            must = legend if shape is None else f"have shape {legend} = {expected}"
            raise ValueError(f"cache.{name} must {must} for this module and x, got {got}")
    tensors = {
        f"cache_{name}": getattr(cache, name) for name, (_, shape) in shapes.items() if shape is not None
    }
    check_same_dtype_device(x=x, **tensors)
    return n_past


def check_fraction(fraction: object) -> float:
    """Return ``fraction``, the share of a head that rotary positions turn, if ``0 < fraction <= 1``."""
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
        raise ValueError(
            f"fraction must be a number in (0, 1], the share of a head that turns, got {fraction!r}"
        )
    return float(fraction)


def check_rotary_width(d_k: int, fraction: object) -> int:
    """Return the rotary width ``r = fraction d_k``: an even integer, with ``0 < fraction <= 1``."""
    r = check_fraction(fraction) * d_k
    if r == int(r) and int(r) % 2 == 0:
        return int(r)
    if fraction == 1:
        raise ValueError(f"rotary positions need an even head width d_k, got d_k={d_k}")
    raise ValueError(
        f"fraction={fraction} turns {r:g} of the d_k={d_k} coordinates of a head; rotary positions "
        "turn pairs, so that must be an even number"
    )


def check_choice(name: str, value: object, choices: tuple) -> object:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError`` naming ``name`` and them."""
    if not any(value is c or (type(value) is type(c) and value == c) for c in choices):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_numbers(name: str, value: object, legend: str) -> tuple[float, ...]:
    """Return ``value``, a tuple of positive numbers shaped as ``legend`` says (``"(a, b)"``), else raise."""
    names = legend.strip("()").split(", ")
    if not isinstance(value, (tuple, list)) or len(value) != len(names):
        raise TypeError(f"{name} must be a tuple {legend} of positive numbers, got {value!r}")
    return tuple(check_positive_number(f"{name}'s {n}", v) for n, v in zip(names, value, strict=True))


def check_part(name: str, part: object, **shape: int) -> torch.nn.Module:
    """Return ``part`` if it is an ``nn.Module`` that fits a layer of ``shape`` (``h``, ``d_k``, ``d_model``).

    A part with a ``check(**shape)`` method checks itself; a norm (``normalized_shape``, as ``nn.RMSNorm``)
    must normalise one head, ``(d_k,)``.
    """
    if not isinstance(part, torch.nn.Module):
        raise TypeError(f"{name} must be an nn.Module (a part of the layer), got {type(part).__name__}")
    if hasattr(part, "check"):
        part.check(**shape)
    normalized = getattr(part, "normalized_shape", None)
    if normalized is not None and tuple(normalized) != (shape["d_k"],):
        raise ValueError(
            f"{name} normalises {tuple(normalized)}, but a head has d_k={shape['d_k']}: ({shape['d_k']},)"
        )
    return part


def check_attention_inputs(
    layer: torch.nn.Module,
    query: object,
    key: object,
    value: object,
    mask: object,
    cache: object,
    record: object,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Check a call of :meth:`mha.MultiHeadAttention.forward` against its ``layer``; return ``key`` and
    ``value`` (``query`` and ``key`` where ``None``) and the position of the first new token (``0``, or where
    the cache ends)."""
    key = query if key is None else key
    value = key if value is None else value
    check_layer_inputs(query, key, value, d_model=layer.d_model, weight=layer.W_q.weight)
    n_k = key.size(1) + check_kv_cache(cache, query, h_kv=layer.n_kv_heads, d_k=layer.d_k)
    if mask is not None:
        check_mask(mask, (query.size(0), layer.h, query.size(1), n_k), "(B, h, n_q, n_k)")
    if record is not None and not isinstance(record, dict):
        raise TypeError(
            f"record must be a dict (it receives the intermediates) or None, got {type(record).__name__}"
        )
    return key, value, 0 if cache is None else cache.end


def check_kv_cache(cache: object, x: object, *, h_kv: int, d_k: int) -> int:
    """Check the :class:`mha.KVCache` (or ``None``) of a layer with ``h_kv`` heads of ``d_k`` against the new
    tokens ``x`` ``(B, n, d_model)``; return how many tokens it holds."""
    if check_float_tensor("x", x).dim() != 3:
        raise ValueError(f"x must have shape (B, n, d_model), got {tuple(x.shape)}")
    if cache is None:
        return 0
    shape = ("(B, h_kv, n_past, d_k)", (x.size(0), h_kv, None, d_k))
    return check_cache(cache, KVCache, x, {"k": shape, "v": shape})
