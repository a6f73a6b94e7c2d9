"""How many cores this process may use: what the embedder's sessions and the vector index's graph
build spread their work over (counting the machine's instead oversubscribes a process pinned to
fewer CPUs or given a CPU quota)."""

from __future__ import annotations

import os
from pathlib import Path


def available_cores(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The cores this process may run on: its CPU affinity (``taskset``, a container's cpuset),
    bounded by a cgroup v2 CPU quota (a container's ``--cpus``) where one is set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError, ZeroDivisionError):  # no cgroup v2, or a file not as documented
        pass
    return max(1, cores)
