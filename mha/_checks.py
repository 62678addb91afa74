"""Input checks shared by the public functions.

Each check raises a ``TypeError`` (wrong kind of object or dtype) or a ``ValueError`` (wrong shape or
value) whose message names the offending argument and what was expected, so a reader never has to decode
a traceback from deep inside PyTorch.
"""

from __future__ import annotations

import torch


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


def check_heads(d_model: object, h: object, n_kv_heads: object = None) -> tuple[int, int, int]:
    """Check the head arithmetic of an attention layer and return ``(h, h_kv, d_k)``.

    Args:
        d_model: model width; ``h`` must divide it.
        h: number of query heads.
        n_kv_heads: number of key/value heads, which must divide ``h``; ``None`` means ``h``.

    Raises:
        TypeError: an argument that is not an int.
        ValueError: a non-positive argument, or a width that does not divide.
    """
    d_model, h = check_positive_int("d_model", d_model), check_positive_int("h", h)
    n_kv_heads = h if n_kv_heads is None else check_positive_int("n_kv_heads", n_kv_heads)
    if d_model % h:
        raise ValueError(f"d_model={d_model} must be divisible by the number of heads h={h}")
    if h % n_kv_heads:
        raise ValueError(f"h={h} must be divisible by n_kv_heads={n_kv_heads}")
    return h, n_kv_heads, d_model // h


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
