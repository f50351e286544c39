"""A Megatron-style tensor-parallel transformer block over the "cohort" backend.

Each rank holds a slice of every weight: the attention's QKV projection and the
MLP's first linear are column-parallel (each rank computes its heads / its slice
of the hidden units, no communication), the attention's output projection and the
MLP's second linear are row-parallel (each rank's partial product is summed with
one all_reduce). The block's output is checked against the whole block run in one
process.

    torchrun --nproc_per_node 4 examples/torch_tp_block.py
(Debian's torch 1.13 under Python 3.11: python3 -m torch.distributed.run -r 1 -t 1 ...)
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import torch_cohort  # noqa: F401  (registers "cohort")

HIDDEN, HEADS, FFN, SEQ, BATCH = 64, 8, 256, 16, 3


class Block(nn.Module):
    """The whole block (what one process runs)."""

    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.fc1 = nn.Linear(HIDDEN, FFN)
        self.fc2 = nn.Linear(FFN, HIDDEN)

    def forward(self, x):
        x = x + attention(self.qkv(self.ln1(x)), HEADS, self.proj)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def attention(qkv, heads, proj):
    b, s, _ = qkv.shape
    q, k, v = (t.reshape(b, s, heads, -1).transpose(1, 2) for t in qkv.chunk(3, dim=-1))
    scores = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
    ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, -1)
    return proj(ctx)


class ColumnParallelLinear(nn.Module):
    """Rows `part` of a Linear's weight (its output features): no communication."""

    def __init__(self, full, parts):
        super().__init__()
        self.weight = nn.Parameter(torch.cat([full.weight[p] for p in parts]))
        self.bias = nn.Parameter(torch.cat([full.bias[p] for p in parts]))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class RowParallelLinear(nn.Module):
    """Columns `part` of a Linear's weight (its input features): partial sums,
    added up by one all_reduce; the bias is added once, after it."""

    def __init__(self, full, part):
        super().__init__()
        self.weight = nn.Parameter(full.weight[:, part].contiguous())
        self.bias = nn.Parameter(full.bias.clone())

    def forward(self, x):
        y = F.linear(x, self.weight)
        dist.all_reduce(y)
        return y + self.bias


class ParallelBlock(nn.Module):
    def __init__(self, full, rank, world):
        super().__init__()
        assert HEADS % world == 0 and FFN % world == 0
        self.ln1, self.ln2 = full.ln1, full.ln2
        self.heads = HEADS // world
        width = HIDDEN // world
        cols = slice(rank * width, (rank + 1) * width)
        # This rank's heads in each of Q, K and V.
        self.qkv = ColumnParallelLinear(
            full.qkv, [slice(i * HIDDEN + cols.start, i * HIDDEN + cols.stop) for i in range(3)])
        self.proj = RowParallelLinear(full.proj, cols)
        ffn = slice(rank * FFN // world, (rank + 1) * FFN // world)
        self.fc1 = ColumnParallelLinear(full.fc1, [ffn])
        self.fc2 = RowParallelLinear(full.fc2, ffn)

    def forward(self, x):
        x = x + attention(self.qkv(self.ln1(x)), self.heads, self.proj)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def main():
    dist.init_process_group("cohort")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # every rank builds the same full block and input
    full = Block()
    x = torch.randn(BATCH, SEQ, HIDDEN)
    with torch.no_grad():
        want = full(x)
        got = ParallelBlock(full, rank, world)(x)
    diff = (got - want).abs().max().item()
    ok = torch.allclose(got, want, rtol=1e-5, atol=1e-5)
    verdict = torch.tensor([1 if ok else 0], dtype=torch.int32)
    dist.all_reduce(verdict, op=dist.ReduceOp.MIN)
    if rank == 0:
        if verdict.item():
            print(f"tensor-parallel block on {world} ranks matches the one-process run "
                  f"(max abs difference {diff:.2e})")
        else:
            print(f"MISMATCH: tensor-parallel block on {world} ranks differs from the "
                  f"one-process run (max abs difference {diff:.2e})")
    dist.destroy_process_group()
    raise SystemExit(0 if verdict.item() else 1)


if __name__ == "__main__":
    main()
