"""Heads across devices: Megatron-LM's tensor-parallel attention (Shoeybi et al. 2019), run for real.

With ``world_size`` devices, device ``r`` holds a contiguous share of the heads: the rows of ``W_q`` that
make its ``h / world_size`` query heads and the rows of ``W_k`` and ``W_v`` that make its
``h_kv / world_size`` key/value heads (a split of the output features, "by columns" of ``x W^T``), and the
matching columns of ``W_o`` (a split of its input features, "by rows" of ``W_o^T``). Each device runs an
ordinary :class:`mha.MultiHeadAttention` on its heads and produces a partial sum of the output; one
all-reduce (a sum over devices) gives the full output. ``W_o``'s bias is added on device 0 only, so it
is counted once. Grouped-query heads stay with their key/value head, which is why both ``h`` and ``h_kv``
must be divisible by the number of devices.

:func:`tensor_parallel_forward` runs it with ``torch.distributed`` on the CPU: ``world_size`` processes,
the gloo backend, a rendezvous through a file in a fresh temporary folder (no TCP port to pick: a port found
free and then released can be taken by another process before the group binds it). The worker lives in this
module so that the spawned processes can import it.

Shape legend:
    B        batch size
    n        number of tokens
    d_model  model width
    h        number of query heads; h_kv of key/value heads
    d_k      width of each head
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from mha._checks import check_positive_int
from mha.gates import OutputGate
from mha.multihead import PARTS, MultiHeadAttention
from mha.scores import Sinks


def check_divisible(attn: MultiHeadAttention, world_size: int) -> None:
    """Raise ``ValueError`` unless ``world_size`` divides both ``h`` and ``h_kv`` of ``attn``."""
    if not isinstance(attn, MultiHeadAttention):
        raise TypeError(f"attn must be a mha.MultiHeadAttention, got {type(attn).__name__}")
    check_positive_int("world_size", world_size)
    for name, heads in (("h", attn.h), ("h_kv (n_kv_heads)", attn.n_kv_heads)):
        if heads % world_size:
            raise ValueError(
                f"world_size={world_size} must divide {name}={heads}: each device takes whole heads "
                f"(and a key/value head stays with its query heads)"
            )


def shard_heads(attn: MultiHeadAttention, rank: int, world_size: int) -> MultiHeadAttention:
    """Device ``rank``'s share of ``attn``: a :class:`MultiHeadAttention` with ``h / world_size`` heads.

    Its ``W_q``, ``W_k``, ``W_v`` are row slices (its heads' output features), its ``W_o`` a column slice
    (its heads' input features), with ``W_o``'s bias on rank 0 and zeros elsewhere; QK-norm weights are
    copied with the other parts, sinks and the output gate's rows sliced. The sum over ranks of the shards'
    outputs is ``attn``'s output.

    Args:
        attn: the whole layer.
        rank: this device, ``0 .. world_size - 1``.
        world_size: number of devices; must divide ``h`` and ``h_kv``.
    """
    check_divisible(attn, world_size)
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < world_size:
        raise ValueError(f"rank must be an int in 0..{world_size - 1}, got {rank!r}")
    h, h_kv, d_k = attn.h // world_size, attn.n_kv_heads // world_size, attn.d_k
    bias = attn.W_q.bias is not None
    heads = slice(rank * h, (rank + 1) * h)  # this rank's query heads
    parts = {
        name: copy.deepcopy(getattr(attn, name)) for name in PARTS
    }  # a norm, positions, a band: as they are
    if isinstance(attn.softmax, Sinks):  # one sink per head: its heads' sinks
        parts["softmax"] = Sinks(h)
    if isinstance(attn.gate, OutputGate):  # one gate per head coordinate: its heads' rows
        parts["gate"] = OutputGate(attn.d_model, h * d_k, bias=attn.gate.W_g.bias is not None)
    options = {
        "n_kv_heads": h_kv,
        "head_dim": d_k,
        "bias": bias,
        "dropout": attn.dropout,
        "scale": attn.scale,
    }
    shard = type(attn)(attn.d_model, h, **options, **parts).to(
        attn.W_q.weight
    )  # the layer's dtype and device
    q_rows = slice(rank * h * d_k, (rank + 1) * h * d_k)  # this rank's query heads: h d_k output features
    kv_rows = slice(rank * h_kv * d_k, (rank + 1) * h_kv * d_k)  # its key/value heads
    with torch.no_grad():
        for name, rows in (("W_q", q_rows), ("W_k", kv_rows), ("W_v", kv_rows)):
            theirs, ours = getattr(attn, name), getattr(shard, name)
            ours.weight.copy_(theirs.weight[rows])  # (h d_k or h_kv d_k, d_model)
            if bias:
                ours.bias.copy_(theirs.bias[rows])
        shard.W_o.weight.copy_(attn.W_o.weight[:, q_rows])  # (d_model, h d_k): its heads' columns
        if bias:
            shard.W_o.bias.copy_(attn.W_o.bias if rank == 0 else torch.zeros_like(attn.W_o.bias))
        if isinstance(attn.softmax, Sinks):
            shard.softmax.sinks.copy_(attn.softmax.sinks[heads])  # (h / world_size,)
        if isinstance(attn.gate, OutputGate):
            shard.gate.W_g.load_state_dict({k: t[q_rows] for k, t in attn.gate.W_g.state_dict().items()})
    return shard.train(attn.training)


def _worker(
    rank: int,
    world_size: int,
    rendezvous: str,
    attn: MultiHeadAttention,
    x: torch.Tensor,
    mask: torch.Tensor | None,
    out: torch.Tensor,
    calls: torch.Tensor,
) -> None:
    """One process: join the group, run its shard, all-reduce the partial outputs; rank 0 writes ``out``."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=rendezvous, rank=rank, world_size=world_size)
    try:
        shard = shard_heads(attn, rank, world_size)
        with torch.no_grad():
            partial, _ = shard(x, mask=mask, need_weights=False)  # (B, n, d_model): this rank's heads only
            dist.all_reduce(partial, op=dist.ReduceOp.SUM)  # (B, n, d_model): the sum over ranks
        calls[rank] += 1  # all-reduces this rank took part in
        if rank == 0:
            out.copy_(partial)
    finally:
        dist.destroy_process_group()


def tensor_parallel_forward(
    attn: MultiHeadAttention, x: torch.Tensor, *, world_size: int = 2, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, list[int]]:
    """Run ``attn(x, mask)`` split by heads over ``world_size`` CPU processes (gloo), one all-reduce.

    Args:
        attn: the whole layer; ``world_size`` must divide its ``h`` and ``h_kv``.
        x: the input, shape ``(B, n, d_model)``.
        world_size: number of processes.
        mask: optional boolean mask, as for :meth:`MultiHeadAttention.forward`.

    Returns:
        ``(out, all_reduces)``: the output ``(B, n, d_model)``, as one process computes it (up to the order
        of additions), and per rank the number of all-reduces it took part in.
    """
    check_divisible(attn, world_size)
    if not isinstance(x, torch.Tensor) or x.dim() != 3 or x.size(-1) != attn.d_model:
        got = getattr(x, "shape", type(x).__name__)
        raise ValueError(f"x must be a tensor of shape (B, n, d_model={attn.d_model}), got {got}")
    out = torch.zeros(x.shape, dtype=x.dtype).share_memory_()  # (B, n, d_model), written by rank 0
    calls = torch.zeros(world_size, dtype=torch.int64).share_memory_()  # (world_size,)
    with tempfile.TemporaryDirectory(prefix="mha-tp-") as folder:
        rendezvous = (Path(folder) / "rendezvous").as_uri()  # file:///...: the ranks find each other here
        args = (world_size, rendezvous, attn, x.detach(), mask, out, calls)
        mp.start_processes(_worker, args=args, nprocs=world_size, join=True, start_method="spawn")
    return out, calls.tolist()
