"""A pool of spawned ranks that run many checks each, so that a test costs one
collective call and not one process start (importing torch takes seconds here).

Each rank joins a "cohort" default group and a "gloo" group of the same ranks,
then runs the functions of checks.py it is sent, one at a time, and answers with
"ok" or the traceback."""
import datetime
import os
import queue
import traceback

import torch.multiprocessing as mp

RESULT_TIMEOUT_S = 120


class Context:
    """What a check gets: this rank, the world size and a "gloo" group of the same
    ranks (the "cohort" group is the default one)."""

    def __init__(self, rank, world, gloo):
        self.rank = rank
        self.world = world
        self.gloo = gloo


def _rank_main(rank, world, ports, inbox, outbox):
    os.environ.update(MASTER_ADDR="127.0.0.1", RANK=str(rank), LOCAL_RANK=str(rank),
                      WORLD_SIZE=str(world))
    import torch.distributed as dist
    import torch_cohort  # noqa: F401  (registers "cohort")
    import checks

    # Rank 0's store listens on a port the kernel picks, and tells the others: a
    # port found free before the ranks start (importing torch takes seconds) may
    # be taken by then by another test's outgoing connection.
    timeout = datetime.timedelta(seconds=60)
    if rank == 0:
        # Not waiting for the others here: they learn the port below.
        store = dist.TCPStore("127.0.0.1", 0, world, True, timeout=timeout,
                              wait_for_workers=False)
        for _ in range(world - 1):
            ports.put(store.port)
    else:
        port = ports.get(timeout=RESULT_TIMEOUT_S)
        store = dist.TCPStore("127.0.0.1", port, world, False, timeout=timeout)
    os.environ["MASTER_PORT"] = str(store.port)
    dist.init_process_group("cohort", store=store, rank=rank, world_size=world, timeout=timeout)
    ctx = Context(rank, world, dist.new_group(backend="gloo"))
    outbox.put((rank, True, "ready"))
    while True:
        item = inbox.get()
        if item is None:
            break
        name, kwargs = item
        try:
            getattr(checks, name)(ctx, **kwargs)
            outbox.put((rank, True, "ok"))
        except BaseException:  # the check's failure goes back to the test
            outbox.put((rank, False, traceback.format_exc()))
    dist.destroy_process_group()


class RankPool:
    def __init__(self, world):
        self.world = world
        spawn = mp.get_context("spawn")
        self.outbox = spawn.Queue()
        self.inboxes = [spawn.Queue() for _ in range(world)]
        ports = spawn.Queue()  # rank 0's store port, once for each other rank
        # Not daemonic, so that a check may start a DataLoader's workers; close()
        # (the fixture's teardown, also after a failure) ends them.
        self.procs = [spawn.Process(target=_rank_main,
                                    args=(r, world, ports, self.inboxes[r], self.outbox),
                                    daemon=False) for r in range(world)]
        for p in self.procs:
            p.start()
        self._collect("start")

    def _collect(self, name):
        results = {}
        while len(results) < self.world:
            try:
                rank, ok, text = self.outbox.get(timeout=RESULT_TIMEOUT_S)
            except queue.Empty:
                dead = [r for r, p in enumerate(self.procs) if not p.is_alive()]
                raise AssertionError(f"{name}: no answer from ranks "
                                     f"{sorted(set(range(self.world)) - set(results))} "
                                     f"within {RESULT_TIMEOUT_S} s (dead: {dead})")
            results[rank] = (ok, text)
        failed = {r: t for r, (ok, t) in results.items() if not ok}
        if failed:
            raise AssertionError(f"{name} failed on ranks {sorted(failed)}:\n" +
                                 "\n".join(f"--- rank {r}:\n{t}" for r, t in failed.items()))

    def run(self, name, **kwargs):
        """Runs checks.<name>(ctx, **kwargs) on every rank; raises with the failures."""
        for q in self.inboxes:
            q.put((name, kwargs))
        self._collect(name)

    def close(self):
        for q in self.inboxes:
            q.put(None)
        for p in self.procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
