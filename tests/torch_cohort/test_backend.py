"""torch.distributed's operations through the "cohort" backend, with 2 and 4 ranks
(one pool of ranks per size runs every check; see rank_pool.py)."""
import pytest

CHECKS = ["all_reduce", "all_reduce_coalesced", "reduce", "reduce_scatter", "all_gather",
          "broadcast", "gather_scatter", "all_to_all", "send_recv", "barrier", "async_work",
          "async_before_peers",
          "refused_calls", "cohort_error", "timeout", "subgroups", "zero_size", "device_memory",
          "fork_keeps_memory_private", "data_loader_workers"]


@pytest.mark.parametrize("check", CHECKS)
def test_check(pool, check):
    pool.run(check)


def test_import_registers_backend():
    import torch.distributed as dist
    import torch_cohort  # noqa: F401
    assert "COHORT" in dist.Backend._plugins
