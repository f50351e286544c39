"""Checks that every rank of a RankPool runs together. Each builds its inputs from
(rank, index), computes the expected result on its own from the closed form over
all ranks, and compares every element; where Gloo has the operation in this torch,
it runs the same inputs through the gloo group and compares with that too."""
import datetime
import os
import time

import torch
import torch.distributed as dist

R = dist.ReduceOp
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
          torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool, torch.complex64,
          torch.complex128]
SIZES = [1, 7, 1023, 40961]
# Gloo in torch 1.13 has no bfloat16, int16 or bool.
GLOO_DTYPES = [d for d in DTYPES if d not in (torch.bfloat16, torch.int16, torch.bool)]


def value(rank, n, dtype):
    """Rank `rank`'s input: small integers (exact in every type, products too)."""
    i = torch.arange(n, dtype=torch.int64)
    if dtype == torch.bool:
        return ((i + rank) % 3 == 0)
    base = (rank + 1) * (i % 3 + 1)
    if dtype.is_complex:
        return torch.complex(base.double(), -(i % 5 + rank).double()).to(dtype)
    return base.to(dtype)


def reduce_ops(dtype):
    if dtype.is_complex:
        return [R.SUM, R.AVG]
    ops = [R.SUM, R.PRODUCT, R.MIN, R.MAX]
    return ops + [R.AVG] if dtype.is_floating_point else ops


def expected_reduce(world, n, dtype, op):
    """The reduction over all ranks, in float64/int64/complex128 and then cast:
    integer products wrap as the narrow types do."""
    if dtype == torch.bool:
        stack = torch.stack([value(r, n, dtype) for r in range(world)])
        return stack.any(0) if op in (R.SUM, R.MAX) else stack.all(0)
    wide = torch.complex128 if dtype.is_complex else (
        torch.float64 if dtype.is_floating_point else torch.int64)
    stack = torch.stack([value(r, n, dtype).to(wide) for r in range(world)])
    if op == R.SUM:
        out = stack.sum(0)
    elif op == R.AVG:
        out = stack.sum(0) / world
    elif op == R.PRODUCT:
        out = stack.prod(0)
    elif op == R.MIN:
        out = stack.min(0).values
    else:
        out = stack.max(0).values
    return out.to(dtype)


def same(got, want, what):
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} vs {tuple(want.shape)}"
    if not torch.equal(got, want):
        bad = (got != want).nonzero()
        j = tuple(bad[0].tolist())
        raise AssertionError(f"{what}: {bad.shape[0]} of {got.numel()} elements differ, first "
                             f"at {j}: {got[j].item()} vs {want[j].item()}")


def op_name(op):
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
        if op == getattr(R, name):
            return name
    return str(op)


# ---- reductions ---------------------------------------------------------------

def all_reduce(ctx, sizes=SIZES):
    for dtype in DTYPES:
        for op in reduce_ops(dtype):
            for n in sizes:
                t = value(ctx.rank, n, dtype)
                dist.all_reduce(t, op=op)
                what = f"all_reduce {dtype} {op_name(op)} n={n}"
                same(t, expected_reduce(ctx.world, n, dtype, op), what)
                gloo_ok = dtype in GLOO_DTYPES and op != R.AVG and (
                    not dtype.is_complex or op == R.SUM)
                if gloo_ok:
                    g = value(ctx.rank, n, dtype)
                    dist.all_reduce(g, op=op, group=ctx.gloo)
                    same(t, g, what + " against gloo")


def all_reduce_coalesced(ctx):
    for dtype in (torch.float32, torch.int32, torch.bfloat16):
        sizes = [3, 1, 17]
        ts = [value(ctx.rank, n, dtype) for n in sizes]
        dist.all_reduce_coalesced(ts, op=R.SUM)
        for t, n in zip(ts, sizes):
            same(t, expected_reduce(ctx.world, n, dtype, R.SUM), f"all_reduce_coalesced {dtype}")
        if dtype != torch.bfloat16:
            gs = [value(ctx.rank, n, dtype) for n in sizes]
            dist.all_reduce_coalesced(gs, op=R.SUM, group=ctx.gloo)
            for t, g in zip(ts, gs):
                same(t, g, f"all_reduce_coalesced {dtype} against gloo")


def reduce(ctx):
    for dtype in DTYPES:
        for op in reduce_ops(dtype):
            if op == R.AVG:
                continue  # not a reduce op of c10d's reduce
            for root in range(ctx.world):
                n = 1023
                t = value(ctx.rank, n, dtype)
                dist.reduce(t, dst=root, op=op)
                if ctx.rank == root:
                    want = expected_reduce(ctx.world, n, dtype, op)
                    same(t, want, f"reduce {dtype} {op_name(op)} root {root}")
                    if dtype in GLOO_DTYPES and not dtype.is_complex:
                        g = value(ctx.rank, n, dtype)
                        dist.reduce(g, dst=root, op=op, group=ctx.gloo)
                        same(t, g, "reduce against gloo")
                elif dtype in GLOO_DTYPES and not dtype.is_complex:
                    dist.reduce(value(ctx.rank, n, dtype), dst=root, op=op, group=ctx.gloo)


def reduce_scatter(ctx):
    for dtype in DTYPES:
        for n in (1, 7, 4097):
            op = R.SUM
            full = expected_reduce(ctx.world, n * ctx.world, dtype, op)
            want = full[ctx.rank * n:(ctx.rank + 1) * n]
            inputs = list(value(ctx.rank, n * ctx.world, dtype).chunk(ctx.world))
            inputs = [x.contiguous() for x in inputs]
            out = torch.empty(n, dtype=dtype)
            dist.reduce_scatter(out, inputs, op=op)
            same(out, want, f"reduce_scatter {dtype} n={n}")
            out2 = torch.empty(n, dtype=dtype)
            dist.reduce_scatter_tensor(out2, value(ctx.rank, n * ctx.world, dtype), op=op)
            same(out2, want, f"reduce_scatter_tensor {dtype} n={n}")
    # Every op through the tensor form.
    for op in reduce_ops(torch.float32):
        n = 5
        out = torch.empty(n)
        dist.reduce_scatter_tensor(out, value(ctx.rank, n * ctx.world, torch.float32), op=op)
        want = expected_reduce(ctx.world, n * ctx.world, torch.float32, op)
        same(out, want[ctx.rank * n:(ctx.rank + 1) * n], f"reduce_scatter_tensor {op_name(op)}")


# ---- data movement ------------------------------------------------------------

def all_gather(ctx):
    for dtype in DTYPES:
        for n in (1, 7, 40961):
            mine = value(ctx.rank, n, dtype)
            out = [torch.empty(n, dtype=dtype) for _ in range(ctx.world)]
            dist.all_gather(out, mine)
            for r in range(ctx.world):
                same(out[r], value(r, n, dtype), f"all_gather {dtype} n={n} from {r}")
            flat = torch.empty(n * ctx.world, dtype=dtype)
            dist.all_gather_into_tensor(flat, mine)
            same(flat, torch.cat([value(r, n, dtype) for r in range(ctx.world)]),
                 f"all_gather_into_tensor {dtype}")
            if dtype in GLOO_DTYPES:
                g = [torch.empty(n, dtype=dtype) for _ in range(ctx.world)]
                dist.all_gather(g, mine, group=ctx.gloo)
                for r in range(ctx.world):
                    same(out[r], g[r], "all_gather against gloo")
    # Shaped tensors and the coalesced form.
    mine = value(ctx.rank, 12, torch.float32).view(3, 4)
    out = [torch.empty(3, 4) for _ in range(ctx.world)]
    dist.all_gather(out, mine)
    for r in range(ctx.world):
        same(out[r], value(r, 12, torch.float32).view(3, 4), "all_gather 3x4")
    ins = [value(ctx.rank, 3, torch.int64), value(ctx.rank, 5, torch.int64)]
    outs = [[torch.empty(3, dtype=torch.int64), torch.empty(5, dtype=torch.int64)]
            for _ in range(ctx.world)]
    dist.all_gather_coalesced(outs, ins)
    for r in range(ctx.world):
        same(outs[r][0], value(r, 3, torch.int64), "all_gather_coalesced 0")
        same(outs[r][1], value(r, 5, torch.int64), "all_gather_coalesced 1")


def broadcast(ctx):
    for dtype in DTYPES:
        for root in range(ctx.world):
            for n in (1, 1023, 40961):
                t = value(ctx.rank, n, dtype)
                dist.broadcast(t, src=root)
                same(t, value(root, n, dtype), f"broadcast {dtype} root {root} n={n}")
                if dtype in GLOO_DTYPES and not dtype.is_complex and n == 1023:
                    g = value(ctx.rank, n, dtype)
                    dist.broadcast(g, src=root, group=ctx.gloo)
                    same(t, g, "broadcast against gloo")


def gather_scatter(ctx):
    for dtype in (torch.float32, torch.int8, torch.bool, torch.complex64, torch.bfloat16):
        for root in range(ctx.world):
            n = 37
            mine = value(ctx.rank, n, dtype)
            out = [torch.empty(n, dtype=dtype) for _ in range(ctx.world)] \
                if ctx.rank == root else None
            dist.gather(mine, gather_list=out, dst=root)
            if ctx.rank == root:
                for r in range(ctx.world):
                    same(out[r], value(r, n, dtype), f"gather {dtype} root {root} from {r}")
            got = torch.empty(n, dtype=dtype)
            parts = [value(root * 10 + r, n, dtype) for r in range(ctx.world)] \
                if ctx.rank == root else None
            dist.scatter(got, scatter_list=parts, src=root)
            same(got, value(root * 10 + ctx.rank, n, dtype), f"scatter {dtype} root {root}")
            if dtype in GLOO_DTYPES:
                g = torch.empty(n, dtype=dtype)
                dist.scatter(g, scatter_list=parts, src=root, group=ctx.gloo)
                same(got, g, "scatter against gloo")


def all_to_all(ctx):
    w, me = ctx.world, ctx.rank
    for dtype in (torch.float32, torch.int64, torch.float16, torch.bool, torch.complex128,
                  torch.bfloat16):
        # Equal split: block j of rank r is value(r * w + j).
        n = 9
        inp = torch.cat([value(me * w + j, n, dtype) for j in range(w)])
        out = torch.empty_like(inp)
        dist.all_to_all_single(out, inp)
        same(out, torch.cat([value(r * w + me, n, dtype) for r in range(w)]),
             f"all_to_all_single {dtype}")
        if dtype in GLOO_DTYPES and not dtype.is_complex:
            g = torch.empty_like(inp)
            dist.all_to_all_single(g, inp, group=ctx.gloo)
            same(out, g, "all_to_all_single against gloo")
        # Split sizes: rank r sends (r + j + 1) rows of 3 to rank j.
        rows = lambda r, j: r + j + 1  # noqa: E731
        inp = torch.cat([value(me * w + j, rows(me, j) * 3, dtype).view(-1, 3) for j in range(w)])
        in_splits = [rows(me, j) for j in range(w)]
        out_splits = [rows(r, me) for r in range(w)]
        out = torch.empty(sum(out_splits), 3, dtype=dtype)
        dist.all_to_all_single(out, inp, out_splits, in_splits)
        want = torch.cat([value(r * w + me, rows(r, me) * 3, dtype).view(-1, 3) for r in range(w)])
        same(out, want, f"all_to_all_single split sizes {dtype}")
        if dtype in GLOO_DTYPES and not dtype.is_complex:
            g = torch.empty_like(out)
            dist.all_to_all_single(g, inp, out_splits, in_splits, group=ctx.gloo)
            same(out, g, "all_to_all_single split sizes against gloo")
        # Lists of tensors of different sizes.
        ins = [value(me * w + j, rows(me, j), dtype) for j in range(w)]
        outs = [torch.empty(rows(r, me), dtype=dtype) for r in range(w)]
        dist.all_to_all(outs, ins)
        for r in range(w):
            same(outs[r], value(r * w + me, rows(r, me), dtype), f"all_to_all {dtype} from {r}")


def send_recv(ctx):
    w, me = ctx.world, ctx.rank
    for dtype in (torch.float32, torch.int16, torch.bool, torch.complex64):
        for n in (1, 1000, 300001):
            # Pairs (0,1), (2,3): even ranks send first.
            peer = me ^ 1
            if peer < w:
                t = torch.empty(n, dtype=dtype)
                if me % 2 == 0:
                    dist.send(value(me, n, dtype), dst=peer)
                    dist.recv(t, src=peer)
                else:
                    dist.recv(t, src=peer)
                    dist.send(value(me, n, dtype), dst=peer)
                same(t, value(peer, n, dtype), f"send/recv {dtype} n={n}")
            # A ring through batch_isend_irecv (every rank sends before it receives).
            nxt, prv = (me + 1) % w, (me - 1) % w
            t = torch.empty(n, dtype=dtype)
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, value(me, n, dtype), nxt),
                                           dist.P2POp(dist.irecv, t, prv)])
            for q in reqs:
                q.wait()
            same(t, value(prv, n, dtype), f"batch_isend_irecv ring {dtype} n={n}")


def barrier(ctx):
    # Nobody leaves the barrier before the last rank arrives.
    arrive = torch.zeros(1, dtype=torch.float64)
    if ctx.rank == ctx.world - 1:
        time.sleep(0.3)
    start = time.time()
    dist.barrier()
    waited = time.time() - start
    if ctx.rank == 0:
        assert waited > 0.2, f"barrier returned after {waited:.3f} s, before the late rank came"
    dist.all_reduce(arrive)
    # The monitored barrier (torch 1.13's Python allows it on gloo only; the
    # group's own method is what a newer torch calls).
    pg = dist.distributed_c10d._get_default_group()
    pg.monitored_barrier(datetime.timedelta(seconds=10), False)


# ---- Work semantics -----------------------------------------------------------

def async_work(ctx):
    n = 1 << 16
    ts = [value(ctx.rank, n, torch.float32) + k for k in range(6)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        assert w.wait() is True
        assert w.is_completed()
        assert w.is_success()
    for k, t in enumerate(ts):
        want = expected_reduce(ctx.world, n, torch.float32, R.SUM) + k * ctx.world
        same(t, want, f"async all_reduce {k}")
    # is_completed() turns true without wait().
    t = value(ctx.rank, 1000, torch.float64)
    w = dist.all_reduce(t, async_op=True)
    deadline = time.time() + 10
    while not w.is_completed():
        assert time.time() < deadline, "is_completed() never became true"
        time.sleep(0.001)
    same(t, expected_reduce(ctx.world, 1000, torch.float64, R.SUM), "polled all_reduce")
    # Futures (what DDP's comm hooks use) complete by themselves.
    t = value(ctx.rank, 4096, torch.float32)
    fut = dist.all_reduce(t, async_op=True).get_future()
    res = fut.wait()
    same(res[0], expected_reduce(ctx.world, 4096, torch.float32, R.SUM), "future value")
    # The list form's results are copied out by the time wait() returns.
    out = [torch.empty(5) for _ in range(ctx.world)]
    w = dist.all_gather(out, value(ctx.rank, 5, torch.float32), async_op=True)
    w.wait()
    for r in range(ctx.world):
        same(out[r], value(r, 5, torch.float32), "async all_gather")
    # Gloo's Works behave the same way for the same calls.
    g = value(ctx.rank, 1000, torch.float64)
    gw = dist.all_reduce(g, async_op=True, group=ctx.gloo)
    assert gw.wait() is True and gw.is_completed()


def async_before_peers(ctx):
    """The asynchronous contract: a call with async_op=True returns its Work before
    any peer has called. Rank 0 calls first, then meets the others on the host (the
    gloo group's barrier); they meet first and call after. A call that waited for a
    peer would never return: faulthandler then prints where it hangs and ends the
    rank within seconds."""
    import faulthandler
    world, me = ctx.world, ctx.rank
    nxt, prev = (me + 1) % world, (me - 1) % world
    for n in (2, 256, 16384, 262144):
        x = value(me, n, torch.float32)
        calls = {
            "all_reduce": lambda: [dist.all_reduce(x.clone(), async_op=True)],
            "all_gather_into_tensor": lambda: [dist.all_gather_into_tensor(
                torch.empty(n * world), x, async_op=True)],
            "reduce_scatter_tensor": lambda: [dist.reduce_scatter_tensor(
                torch.empty(n), torch.cat([x] * world), async_op=True)],
            "broadcast": lambda: [dist.broadcast(x.clone(), world - 1, async_op=True)],
            "reduce": lambda: [dist.reduce(x.clone(), world - 1, async_op=True)],
            "all_to_all_single": lambda: [dist.all_to_all_single(
                torch.empty(n * world), torch.cat([x] * world), async_op=True)],
            # Even ranks send first, odd ranks receive first: one stream runs them in order.
            "isend/irecv": lambda: ([dist.isend(x, nxt), dist.irecv(torch.empty(n), prev)]
                                    if me % 2 == 0 else
                                    [dist.irecv(torch.empty(n), prev), dist.isend(x, nxt)]),
            "batch_isend_irecv": lambda: dist.batch_isend_irecv(
                [dist.P2POp(dist.isend, x, nxt), dist.P2POp(dist.irecv, torch.empty(n), prev)]),
        }
        for name, call in calls.items():
            works = None
            if me == 0:
                faulthandler.dump_traceback_later(10, exit=True)
                works = call()
                faulthandler.cancel_dump_traceback_later()
            dist.barrier(group=ctx.gloo)
            if me != 0:
                works = call()
            for w in works:
                assert w.wait() is True, f"{name} of {n}"
    # The results themselves, once more with a meeting in between: rank 0's call
    # returned before the others called, and the output is still right.
    n = 4097
    t = value(me, n, torch.float32)
    if me == 0:
        w = dist.all_reduce(t, async_op=True)
    dist.barrier(group=ctx.gloo)
    if me != 0:
        w = dist.all_reduce(t, async_op=True)
    w.wait()
    same(t, expected_reduce(world, n, torch.float32, R.SUM), "all_reduce called before the peers")


# ---- errors -------------------------------------------------------------------

def _raises(fn, *needles):
    try:
        fn()
    except RuntimeError as e:
        text = str(e)
        for needle in needles:
            assert needle in text, f"message lacks {needle!r}: {text}"
        return text
    raise AssertionError(f"no RuntimeError (wanted one naming {needles})")


def refused_calls(ctx):
    """Bad calls raise on the calling rank before anything is sent: only rank 0
    makes them, and the group is still in step afterwards."""
    if ctx.rank == 0:
        nc = torch.zeros(4, 4).t()
        _raises(lambda: dist.all_reduce(nc), "not contiguous")
        _raises(lambda: dist.broadcast(torch.zeros(4, 4)[:, 1], src=0), "not contiguous")
        out = [torch.empty(3) for _ in range(ctx.world)]
        out[-1] = torch.empty(3, dtype=torch.int32)
        _raises(lambda: dist.all_gather(out, torch.zeros(3)), "dtype")
        out = [torch.empty(4) for _ in range(ctx.world)]
        _raises(lambda: dist.all_gather(out, torch.zeros(3)), "elements")
        _raises(lambda: dist.all_gather_into_tensor(torch.empty(5), torch.zeros(3)), "elements")
        _raises(lambda: dist.reduce_scatter_tensor(torch.empty(2), torch.zeros(3)), "elements")
        _raises(lambda: dist.all_reduce(torch.zeros(3, dtype=torch.int32), op=R.AVG), "AVG")
        _raises(lambda: dist.all_reduce(torch.zeros(3, dtype=torch.int32), op=R.BAND), "BAND")
        _raises(lambda: dist.all_reduce(torch.zeros(3, dtype=torch.complex64), op=R.MAX),
                "complex")
        _raises(lambda: dist.all_to_all_single(torch.empty(5), torch.zeros(5), [1] * ctx.world,
                                               [5] + [0] * (ctx.world - 1)), "split sizes")
    t = value(ctx.rank, 10, torch.float32)
    dist.all_reduce(t)
    same(t, expected_reduce(ctx.world, 10, torch.float32, R.SUM), "all_reduce after refusals")


def cohort_error(ctx):
    """An error Cohort finds (mismatched counts) reaches every rank as a
    RuntimeError with Cohort's message; the group is lost, the others are not."""
    g = dist.new_group(backend="cohort", timeout=datetime.timedelta(seconds=20))
    n = 8 + ctx.rank  # every rank a different count
    text = _raises(lambda: dist.all_reduce(torch.ones(n), group=g), "cohort all_reduce",
                   "rank")
    assert "count" in text or "mismatch" in text.lower(), text
    t = value(ctx.rank, 6, torch.int32)
    dist.all_reduce(t)  # the default group still works
    same(t, expected_reduce(ctx.world, 6, torch.int32, R.SUM), "default group after an error")
    dist.destroy_process_group(g)


def timeout(ctx):
    """The group's timeout is Cohort's exec timeout: rank 0 calls, the others do
    not, and rank 0's call fails after about that long, naming the timeout."""
    g = dist.new_group(backend="cohort", timeout=datetime.timedelta(seconds=2))
    if ctx.rank == 0:
        start = time.time()
        text = _raises(lambda: dist.all_reduce(torch.ones(1000), group=g), "cohort all_reduce")
        took = time.time() - start
        assert "tim" in text.lower(), text
        assert 1.0 < took < 10, f"failed after {took:.1f} s, the timeout is 2 s: {text}"
    dist.barrier(group=ctx.gloo)
    t = torch.ones(3)
    dist.all_reduce(t)
    same(t, torch.full((3,), float(ctx.world)), "default group after a timeout")


# ---- groups -------------------------------------------------------------------

def subgroups(ctx):
    w, me = ctx.world, ctx.rank
    # Halves of the world (a 2-rank world: each rank alone).
    half = max(1, w // 2)
    lows, highs = list(range(half)), list(range(half, w))
    g_low = dist.new_group(lows, backend="cohort")
    g_high = dist.new_group(highs, backend="cohort")
    mine, members = (g_low, lows) if me in lows else (g_high, highs)
    other = g_high if mine is g_low else g_low
    assert other == dist.GroupMember.NON_GROUP_MEMBER
    t = value(me, 33, torch.int64)
    dist.all_reduce(t, group=mine)
    want = sum(value(r, 33, torch.int64) for r in members)
    same(t, want, f"subgroup {members} all_reduce")
    gr = dist.get_rank(mine)
    assert gr == members.index(me)
    src = members[-1]
    b = value(me, 5, torch.float32)
    dist.broadcast(b, src=src, group=mine)
    same(b, value(src, 5, torch.float32), "subgroup broadcast (global src rank)")
    # A group of all ranks in reverse order of arrival, and Gloo alongside.
    g_all = dist.new_group(list(range(w)), backend="cohort")
    for k in range(3):
        a, c = value(me, 100, torch.float32), value(me, 100, torch.float32)
        dist.all_reduce(a, group=g_all)
        dist.all_reduce(c, group=ctx.gloo)
        same(a, c, f"cohort and gloo side by side {k}")
        x = value(me, 7, torch.float64)
        dist.all_reduce(x)  # the default cohort group, between the two
        same(x, expected_reduce(w, 7, torch.float64, R.SUM), "default group between")
    assert dist.get_backend(g_all) == "cohort" or dist.get_backend(g_all).lower() == "cohort"
    for g in (g_all, mine):
        dist.destroy_process_group(g)


def zero_size(ctx):
    t = torch.empty(0)
    dist.all_reduce(t)
    dist.broadcast(t, src=0)
    out = [torch.empty(0) for _ in range(ctx.world)]
    dist.all_gather(out, t)


def device_memory(ctx):
    """Tensors in Cohort device memory (torch_cohort.empty) work like any CPU
    tensor, with the peers reading them in place."""
    import torch_cohort
    for dtype in (torch.float32, torch.bfloat16, torch.int64, torch.complex64):
        n = 70001
        t = torch_cohort.empty(n, dtype=dtype)
        t.copy_(value(ctx.rank, n, dtype))
        dist.all_reduce(t)
        same(t, expected_reduce(ctx.world, n, dtype, R.SUM), f"device-memory all_reduce {dtype}")
        out = torch_cohort.empty(ctx.world, n, dtype=dtype)
        dist.all_gather_into_tensor(out, value(ctx.rank, n, dtype))
        same(out, torch.stack([value(r, n, dtype) for r in range(ctx.world)]),
             f"device-memory all_gather_into_tensor {dtype}")
    shaped = torch_cohort.empty((2, 3), dtype=torch.float64)
    assert shaped.shape == (2, 3) and shaped.dtype == torch.float64
    # The allocator: on by default from the first "cohort" group, so large CPU tensors
    # are device memory (small ones are not) and collectives on them are right;
    # turning it off restores torch's allocator for new tensors (and collectives on
    # those copy through Cohort's scratch) while the old ones stay valid.
    big = torch.zeros(40961, dtype=torch.float32)
    small = torch.zeros(100, dtype=torch.float32)
    assert torch_cohort.is_device_memory(big.data_ptr()), "a large tensor is not device memory"
    assert not torch_cohort.is_device_memory(small.data_ptr()), "a small one is"
    big.copy_(value(ctx.rank, 40961, torch.float32))
    dist.all_reduce(big)
    same(big, expected_reduce(ctx.world, 40961, torch.float32, R.SUM),
         "all_reduce of an allocator tensor")
    before = torch_cohort.use_device_memory(None)
    try:
        after = torch.zeros(40961, dtype=torch.float32)
        assert not torch_cohort.is_device_memory(after.data_ptr()), "turned off, still device memory"
        after.copy_(value(ctx.rank, 40961, torch.float32))
        dist.all_reduce(after)
        same(after, expected_reduce(ctx.world, 40961, torch.float32, R.SUM),
             "all_reduce of an ordinary tensor")
    finally:
        torch_cohort.use_device_memory(before)
    same(big, expected_reduce(ctx.world, 40961, torch.float32, R.SUM), "an allocator tensor later")
    del big


def fork_keeps_memory_private(ctx):
    """A fork()ed child that writes a device-memory tensor it inherited writes its own
    copy: the parent's tensor and the collectives on it are unchanged."""
    import torch_cohort
    n = 40961
    t = torch.full((n,), float(ctx.rank + 1))
    assert torch_cohort.is_device_memory(t.data_ptr()), "the tensor is not device memory"
    pid = os.fork()
    if pid == 0:  # the child: no Python cleanup, no collective
        code = 3
        try:
            torch.set_num_threads(1)
            seen = bool((t == ctx.rank + 1).all())
            t.fill_(-7.0)
            mine = torch.full((n,), 5.0)  # from the child's private copy of the pool
            code = 0 if seen and bool((t == -7.0).all()) and bool((mine == 5.0).all()) else 4
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"the child ended with {status}"
    same(t, torch.full((n,), float(ctx.rank + 1)), "the parent's tensor after its child wrote it")
    dist.all_reduce(t)
    same(t, torch.full((n,), float(ctx.world * (ctx.world + 1) // 2)), "all_reduce after fork")


class _Rows(torch.utils.data.Dataset):
    """Rows of a device-memory tensor, each doubled by the worker (a new tensor the
    worker allocates, large enough for the device-memory allocator)."""

    def __init__(self, data):
        self.data = data

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, i):
        return self.data[i] * 2


def data_loader_workers(ctx):
    """A DataLoader's forked workers read the parent's device-memory tensors and make
    their own; the batches reach the parent whole and reduce right."""
    import torch_cohort
    rows, width = 8, 20000
    data = torch.arange(rows * width, dtype=torch.float32).reshape(rows, width) + ctx.rank
    assert torch_cohort.is_device_memory(data.data_ptr()), "the dataset is not device memory"
    loader = torch.utils.data.DataLoader(_Rows(data), batch_size=4, num_workers=2,
                                         multiprocessing_context="fork")
    got = torch.cat([batch for batch in loader])
    same(got, data * 2, "the batches of the forked workers")
    dist.all_reduce(got)
    base = torch.arange(rows * width, dtype=torch.float64).reshape(rows, width)
    want = (base * ctx.world + sum(range(ctx.world))) * 2
    same(got, want.to(torch.float32), "all_reduce of the batches")
    same(data, torch.arange(rows * width, dtype=torch.float32).reshape(rows, width) + ctx.rank,
         "the dataset after the workers ran")
