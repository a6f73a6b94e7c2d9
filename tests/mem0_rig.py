"""memwarden's Mem0 front as the official ``mem0ai`` client meets it: settings for either
backend, the client's environment (no telemetry, a scratch config folder), and what the ledger
and the audit hold, read through memwarden's own API."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

# Before mem0 is imported: it reads these at import and at every client's construction.
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-dir-"))

from memwarden.settings import Settings, load_settings
from tests.conftest import make_settings, running_warden

BANK = "mem0"


def local_settings(data_dir: Path, *, governance: dict[str, Any] | None = None, **mem0: Any) -> Settings:
    """Self-hosted: the store with the fast hashing embedder, the rules alone judging."""
    return load_settings(
        environ={},
        overrides={
            "data_dir": str(data_dir),
            "local": {"embedder": "hashing"},
            "retention": {"enabled": False},
            "labels": {"learned": "off"},
            "config_guard": {"missions": {"mode": "off"}},
            "governance": governance or {},
            "mem0": mem0,
        },
    )


def hindsight_settings(url: str, data_dir: Path, bank: str) -> Settings:
    settings = make_settings(url, data_dir=data_dir)
    return settings.model_copy(update={"mem0": settings.mem0.model_copy(update={"bank": bank})})


def mem0_settings(
    url: str, data_dir: Path, *, api_key: str = "mem0-rig-key", outbox: dict[str, Any] | None = None, **backend: Any
) -> Settings:
    """In front of Mem0's REST server at ``url`` (the rig over the real engine, ``testing/mem0.py``)."""
    settings = make_settings("http://unused.invalid", data_dir=data_dir, outbox=outbox)
    update = {"url": url, "api_key": api_key, **backend}
    return settings.model_copy(
        update={
            "backend": "mem0",
            "backends": settings.backends.model_copy(
                update={
                    "mem0": settings.backends.mem0.model_validate({**settings.backends.mem0.model_dump(), **update})
                }
            ),
        }
    )


@contextlib.contextmanager
def platform_chain(mem0_url: str, data_dir: Path, **backend: Any) -> Iterator[tuple[str, str]]:
    """memwarden in front of Mem0's platform API, played by a second memwarden's Mem0 front (the
    hosted platform is not reachable from here) in front of Mem0's REST server at ``mem0_url``:
    the front memwarden's URL, and the bank the second one keeps everything in."""
    inner = mem0_settings(mem0_url, data_dir / "platform")
    with running_warden(inner) as platform:
        outer = mem0_settings(
            f"{platform}/mem0", data_dir / "front", api_key="platform-key", dialect="platform", **backend
        )
        with running_warden(outer) as url:
            yield url, inner.mem0.bank


def ledger(url: str, bank: str = BANK, **params: str) -> list[dict[str, Any]]:
    """The ledger's memories of the bank (every status unless ``status`` is given)."""
    r = httpx.get(f"{url}/warden/v1/banks/{bank}/memories", params={"limit": "500", **params}, timeout=30)
    r.raise_for_status()
    items: list[dict[str, Any]] = r.json()["items"]
    return items


def audit(url: str, bank: str = BANK) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": "1000"}, timeout=30)
    r.raise_for_status()
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def event(url: str, event_id: str, **headers: str) -> dict[str, Any]:
    r = httpx.get(f"{url}/mem0/v1/event/{event_id}/", headers=headers, timeout=30)
    r.raise_for_status()
    answer: dict[str, Any] = r.json()
    return answer
