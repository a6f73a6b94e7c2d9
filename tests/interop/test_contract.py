"""The contract table (``tests/hindsight_cases.py``) against every backend memwarden serves: each
backend answers every bad request as the real Hindsight 1.1.0 does, and so does memwarden in front
of it with governance enforcing, but for the blank item governance judges on purpose.

A new backend is one module plus its row in ``BACKENDS``: how to reach it bare (its own
Hindsight-compatible API, no governance) and how to start memwarden in front of it.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import make_settings, running_warden
from tests.hindsight_cases import MEM0_GAPS, only_gaps, only_the_blank_item_differs, run_cases


def _self_hosted(tmp_path: Path, governance: str) -> Any:
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path),
            "local": {"embedder": "hashing"},
            "governance": {"mode": governance},
            "config_guard": {"settle_interval": 0.05, "missions": {"mode": "off"}},
            "retention": {"enabled": False},
        },
    )
    return running_warden(settings)


@contextlib.contextmanager
def self_hosted_bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with _self_hosted(tmp_path, "off") as url:  # the store itself, as a client of a bare Hindsight sees it
        yield url


@contextlib.contextmanager
def self_hosted_governed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with _self_hosted(tmp_path, "enforce") as url:
        yield url


@contextlib.contextmanager
def mem0_governed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """memwarden in front of Mem0's real engine (its REST server's routes, ``testing/mem0.py``)."""
    from tests import mem0_rig

    mem0_url, _ = request.getfixturevalue("mem0_server")
    with running_warden(mem0_rig.mem0_settings(mem0_url, tmp_path)) as url:
        yield url


@contextlib.contextmanager
def hindsight_bare(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield request.getfixturevalue("hindsight_url")


@contextlib.contextmanager
def hindsight_governed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with running_warden(make_settings(request.getfixturevalue("hindsight_url"), data_dir=tmp_path)) as url:
        yield url


Opener = Callable[[pytest.FixtureRequest, Path], contextlib.AbstractContextManager[str]]

# name → (bare, with memwarden in front); the real Hindsight's rows are interop tests. Mem0 has no
# bare row: it speaks its own API, not Hindsight's; in front of it, the cases Mem0 cannot serve are
# declared (MEM0_GAPS) with the 501 a client gets.
BACKENDS: dict[str, tuple[Opener | None, Opener]] = {
    "self-hosted": (self_hosted_bare, self_hosted_governed),
    "hindsight": (hindsight_bare, hindsight_governed),
    "mem0": (None, mem0_governed),
}
INTEROP = {"hindsight"}
GAPS = {"mem0": MEM0_GAPS}


def rows(*, bare: bool = False) -> list[Any]:
    """One parameter a backend (``bare``: those that speak Hindsight's API themselves); every row
    starts servers (slow), the real Hindsight's are interop."""
    return [
        pytest.param(name, marks=[pytest.mark.slow, *([pytest.mark.interop] if name in INTEROP else [])], id=name)
        for name, (alone, _) in BACKENDS.items()
        if alone is not None or not bare
    ]


@pytest.mark.parametrize("backend", rows(bare=True))
def test_the_backend_answers_every_case_as_hindsight(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    bare, _ = BACKENDS[backend]
    assert bare is not None
    with bare(request, tmp_path) as url, httpx.Client(base_url=url, timeout=120) as http:
        assert run_cases(http, f"bad-{uuid.uuid4().hex[:8]}") == []


@pytest.mark.parametrize("backend", rows())
def test_memwarden_in_front_answers_every_case_as_hindsight(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    _, governed = BACKENDS[backend]
    bank = f"bad-{uuid.uuid4().hex[:8]}"
    with governed(request, tmp_path) as url, httpx.Client(base_url=url, timeout=120) as http:
        problems = run_cases(http, bank)
        if backend in GAPS:  # what the backend cannot do: a declared 501, everything else as Hindsight
            assert only_gaps(problems, GAPS[backend], backend) == []
        else:
            assert only_the_blank_item_differs(problems), problems
        r = http.post(f"/v1/default/banks/{bank}/memories?warden=verbose", json={"items": [{"content": " "}]})
        assert [d["rule"] for d in r.json()["warden"]["decisions"]] == ["content.empty"]
