"""What the tests of `from_transformers` share: one forward pass of a transformers model with its layers
recorded, so that each converted layer is checked on the very inputs the model gave it."""

from __future__ import annotations

import torch


def recorded_calls(model, modules, input_ids: torch.Tensor) -> list[tuple]:
    """Run ``model`` once on ``input_ids``; return, for each of ``modules`` in order, ``(module, its input
    hidden states, its output)`` (the output as the module returns it: a tensor or a tuple)."""
    seen = {}

    def record(module, args, kwargs, output):
        x = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        seen[module] = (x.detach().clone(), output)

    handles = [module.register_forward_hook(record, with_kwargs=True) for module in modules]
    try:
        with torch.no_grad():
            model(input_ids=input_ids)
    finally:
        for handle in handles:
            handle.remove()
    return [(module, *seen[module]) for module in modules]


def random_ids(vocab_size: int, n: int, batch: int = 2) -> torch.Tensor:
    """``(batch, n)`` token ids, the same on every run (seed 1)."""
    return torch.randint(0, vocab_size, (batch, n), generator=torch.Generator().manual_seed(1))
