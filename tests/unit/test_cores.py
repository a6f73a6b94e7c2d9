"""The cores the embedder and the vector index's graph build count: the process's, not the machine's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memwarden.store.cores import available_cores


def test_the_cores_counted_are_the_ones_the_process_may_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned to one CPU (taskset, a container's cpuset) or given a CPU quota (a container's
    --cpus), the encoder must not spread work over cores it does not have: a lone query on two
    threads ran twice as slow pinned to one."""
    cpu_max = tmp_path / "cpu.max"
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3}, raising=False)
    assert available_cores(tmp_path / "absent") == 4
    cpu_max.write_text("max 100000\n")
    assert available_cores(cpu_max) == 4
    cpu_max.write_text("150000 100000\n")
    assert available_cores(cpu_max) == 2
    cpu_max.write_text("50000 100000\n")
    assert available_cores(cpu_max) == 1
    cpu_max.write_text("5 0\n")
    assert available_cores(cpu_max) == 4
    cpu_max.write_text("garbage\n")
    assert available_cores(cpu_max) == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {3}, raising=False)
    assert available_cores(tmp_path / "absent") == 1
