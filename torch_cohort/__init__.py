"""Cohort as a torch.distributed backend.

    import torch_cohort                      # registers the backend "cohort"
    torch.distributed.init_process_group("cohort")

Tensors are CPU tensors. Bootstrap goes through the store c10d hands the backend
(env://, tcp://, file://); a rank table (COHORT_RANKTABLE or RANK_TABLE_FILE)
makes the default group instead.
"""
import math
import os
import socket

import torch
import torch.distributed as dist

from torch_cohort._C import ProcessGroupCohort, device_bytes, is_device_memory
from torch_cohort._C import use_device_memory as _use_device_memory

__all__ = ["ProcessGroupCohort", "empty", "use_device_memory", "is_device_memory",
           "failed_ranks", "shrink"]

_INTERFACE_VARS = ("COHORT_IF_IP", "HCCL_IF_IP", "COHORT_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME")


def _address_towards(host):
    """The local address this host uses to reach `host` (no packet is sent)."""
    try:  # IPv4 first, as Cohort's own interface choice prefers it
        found = socket.getaddrinfo(host, 9, socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        found = socket.getaddrinfo(host, 9, type=socket.SOCK_DGRAM)
    for family, _, _, _, sockaddr in found:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            try:
                s.connect(sockaddr)
                return s.getsockname()[0]
            except OSError:
                continue
    return None


def _pin_interface():
    # Cohort serves its rendezvous and listens for peers on its first usable
    # interface unless told otherwise; under torchrun the interface that reaches
    # MASTER_ADDR is the one the other nodes reach too. Set before Cohort first
    # reads its configuration (it reads it once per process).
    if any(os.environ.get(v) for v in _INTERFACE_VARS):
        return
    master = os.environ.get("MASTER_ADDR")
    if not master:
        return
    try:
        address = _address_towards(master)
    except OSError:
        address = None
    if address:
        os.environ["COHORT_IF_IP"] = address


def empty(*size, dtype=torch.float32):
    """An uninitialised CPU tensor in this process's Cohort device memory.

    Collectives on ordinary CPU tensors copy them through Cohort's device scratch
    (the peers of a node cannot map ordinary process memory); on these tensors the
    peers read and write the memory directly, so large operations move half the
    bytes. Call after this process created its first "cohort" group."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, torch.Size)):
        size = tuple(size[0])
    item = torch.empty((), dtype=dtype).element_size()
    return device_bytes(math.prod(size) * item).view(dtype).view(size)


_DEFAULT_MIN_BYTES = 64 << 10


def use_device_memory(min_bytes=_DEFAULT_MIN_BYTES):
    """From now on, CPU tensors of at least `min_bytes` are made in this process's
    Cohort device memory (torch's CPU allocator is replaced; smaller tensors, and
    any the device cannot hold, come from torch's own). Collectives on them copy
    nothing, as on torch_cohort.empty's. `min_bytes=None` turns it off. The first
    "cohort" group a process makes turns it on with 64 KiB (COHORT_TORCH_DEVICE_MEMORY:
    0 leaves it off, 1 or a byte threshold sets it); call after that group exists.
    A fork()ed child (a DataLoader's worker) gets a copy-on-write view of the
    memory: its writes stay its own. Returns the threshold it replaces (None: it
    was off), which restores it when passed back."""
    before = _use_device_memory(-1 if min_bytes is None else int(min_bytes))
    return None if before < 0 else before


_default_applied = False


def _device_memory_from_environment():
    global _default_applied
    if _default_applied:  # a later group keeps what the program chose since
        return
    _default_applied = True
    text = os.environ.get("COHORT_TORCH_DEVICE_MEMORY", "").strip()
    if text == "0":
        return
    if text in ("", "1"):
        use_device_memory(_DEFAULT_MIN_BYTES)
    elif text.isdigit():
        use_device_memory(int(text))
    else:
        raise ValueError(f"COHORT_TORCH_DEVICE_MEMORY={text!r}: expected 0 (off), 1 (on from "
                         "64 KiB) or a byte threshold")


def _cohort_backend(group):
    """The ProcessGroupCohort behind `group` (None: the default group)."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if isinstance(pg, ProcessGroupCohort):
        return pg
    backend = getattr(pg, "_get_backend", None)  # torch 2: a ProcessGroup wraps it
    if backend is not None:
        found = backend(torch.device("cpu"))
        if isinstance(found, ProcessGroupCohort):
            return found
    raise ValueError(f"{pg!r} is not a group of the cohort backend")


def failed_ranks(group=None):
    """After a rank of `group` (default: the default group) died, aborted or left: the
    ranks of the group, in its numbering, that its survivors agree failed. Every
    survivor calls it or shrink(); the first of the two agrees with the others."""
    return list(_cohort_backend(group).failed_ranks())


def shrink(group=None):
    """After a rank of `group` (default: the default group) died, aborted or left: a
    new group of the survivors, ranked in their old order, that torch.distributed's
    collectives take (group=...). Every survivor calls it; it returns once all have.
    `group` stays failed. Cohort's store must outlive the failed ranks: it is the
    first rank's process (group rank 0), which must survive."""
    c10d = dist.distributed_c10d
    old = group if group is not None else c10d._get_default_group()
    backend = _cohort_backend(group)
    failed = set(backend.failed_ranks())
    new = backend.shrink()
    group_ranks = getattr(c10d, "_pg_group_ranks", None)
    if group_ranks is None:  # torch 2 keeps its maps elsewhere
        raise NotImplementedError("torch_cohort.shrink registers the new group with the "
                                  "maps of torch 1.x's distributed_c10d; this torch has none")
    ranks = group_ranks[old]  # global rank -> rank in `old`
    survivors = sorted((g for g, r in ranks.items() if r not in failed), key=ranks.get)
    c10d._pg_map[new] = ("cohort", None)
    c10d._pg_names[new] = c10d._pg_names.get(old, "cohort") + "_shrunk"
    group_ranks[new] = {g: i for i, g in enumerate(survivors)}
    return new


def _create(store, rank, world_size, timeout):
    _pin_interface()
    group = ProcessGroupCohort(store, rank, world_size, timeout)
    _device_memory_from_environment()
    return group


if "COHORT" not in dist.Backend._plugins:
    dist.Backend.register_backend("cohort", _create)
