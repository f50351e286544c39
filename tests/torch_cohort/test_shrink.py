"""torch_cohort.shrink: three spawned ranks allreduce; rank 2 dies (SIGKILL); ranks 0
and 1 see the failure, agree on rank 2 without being told (failed_ranks), shrink
the default group, and allreduce an odd number of elements of every checked type
over the new group, each element against the expected sum."""
import datetime
import os
import queue
import signal

import torch.multiprocessing as mp

WORLD = 3
VICTIM = 2


def _rank_main(rank, port_box, results):
    os.environ.update(MASTER_ADDR="127.0.0.1", RANK=str(rank), LOCAL_RANK=str(rank),
                      WORLD_SIZE=str(WORLD))
    import torch
    import torch.distributed as dist
    import torch_cohort

    timeout = datetime.timedelta(seconds=20)
    try:
        if rank == 0:
            store = dist.TCPStore("127.0.0.1", 0, WORLD, True, timeout=timeout,
                                  wait_for_workers=False)
            for _ in range(WORLD - 1):
                port_box.put(store.port)
        else:
            store = dist.TCPStore("127.0.0.1", port_box.get(timeout=120), WORLD, False,
                                  timeout=timeout)
        dist.init_process_group("cohort", store=store, rank=rank, world_size=WORLD,
                                timeout=timeout)
        t = torch.ones(1001)
        dist.all_reduce(t)
        assert torch.equal(t, torch.full((1001,), float(WORLD))), t[:4]
        if rank == VICTIM:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            dist.all_reduce(t)
            raise AssertionError("the allreduce with a dead rank succeeded")
        except RuntimeError as e:
            assert "rank 2" in str(e), str(e)
        assert torch_cohort.failed_ranks() == [VICTIM]
        group = torch_cohort.shrink()
        assert group.size() == WORLD - 1 and group.rank() == rank
        assert dist.get_rank(group) == rank and dist.get_world_size(group) == WORLD - 1
        for dtype in (torch.float32, torch.int32, torch.bfloat16, torch.float16):
            # Sums up to 195: exact in every type (bfloat16's integers end at 256).
            x = (torch.arange(1001) % 97 + rank + 1).to(dtype)
            dist.all_reduce(x, group=group)
            want = ((torch.arange(1001) % 97) * 2 + 3).to(dtype)
            assert torch.equal(x, want), (dtype, x[:4], want[:4])
        results.put((rank, "ok"))
    except BaseException as e:  # the failure goes back to the test
        import traceback
        results.put((rank, traceback.format_exc() + repr(e)))


def test_survivors_shrink_past_a_killed_rank():
    ctx = mp.get_context("spawn")
    port_box, results = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=_rank_main, args=(r, port_box, results)) for r in range(WORLD)]
    for p in procs:
        p.start()
    got = {}
    try:
        while len(got) < WORLD - 1:
            rank, answer = results.get(timeout=120)
            got[rank] = answer
    except queue.Empty:
        pass
    for p in procs:
        p.join(timeout=30)
        if p.is_alive():
            p.kill()
    assert got == {0: "ok", 1: "ok"}, got
    assert procs[VICTIM].exitcode == -signal.SIGKILL
