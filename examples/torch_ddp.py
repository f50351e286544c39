"""DistributedDataParallel training over the "cohort" backend, checked against
the same training in one process.

Every rank builds the same model; each trains on its shard of every global batch.
DDP averages the gradients over the ranks, so after each step the gradients and
the weights equal those of one process training on the whole batch.

    torchrun --nproc_per_node 4 examples/torch_ddp.py
(Debian's torch 1.13 under Python 3.11: python3 -m torch.distributed.run -r 1 -t 1 ...)
"""
import copy

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_cohort  # noqa: F401  (registers "cohort")

STEPS, BATCH_PER_RANK, FEATURES = 5, 8, 32


def make_model():
    return nn.Sequential(nn.Linear(FEATURES, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 4))


def main():
    dist.init_process_group("cohort")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    reference = make_model().double()
    model = DDP(copy.deepcopy(reference), bucket_cap_mb=0.01)  # several buckets
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    worst = 0.0
    for step in range(STEPS):
        g = torch.Generator().manual_seed(100 + step)  # the same global batch everywhere
        x = torch.randn(world * BATCH_PER_RANK, FEATURES, generator=g, dtype=torch.float64)
        y = torch.randn(world * BATCH_PER_RANK, 4, generator=g, dtype=torch.float64)
        mine = slice(rank * BATCH_PER_RANK, (rank + 1) * BATCH_PER_RANK)
        opt.zero_grad()
        loss_fn(model(x[mine]), y[mine]).backward()
        ref_opt.zero_grad()
        loss_fn(reference(x), y).backward()  # the one-process run: the whole batch
        for p, q in zip(model.parameters(), reference.parameters()):
            worst = max(worst, (p.grad - q.grad).abs().max().item())
        opt.step()
        ref_opt.step()
    ok = worst < 1e-12
    verdict = torch.tensor([1 if ok else 0], dtype=torch.int32)
    dist.all_reduce(verdict, op=dist.ReduceOp.MIN)
    if rank == 0:
        if verdict.item():
            print(f"DDP on {world} ranks: gradients of {STEPS} steps match the one-process run "
                  f"(max abs difference {worst:.1e})")
        else:
            print(f"MISMATCH: DDP on {world} ranks: gradients differ from the one-process run "
                  f"by up to {worst:.1e}")
    dist.destroy_process_group()
    raise SystemExit(0 if verdict.item() else 1)


if __name__ == "__main__":
    main()
