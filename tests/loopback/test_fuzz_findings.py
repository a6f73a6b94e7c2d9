"""What the schemathesis run (``python -m testing.fuzz``) found, each kept as a regression test: a
precise 4xx (nothing written) where memwarden answered 500, and a deadlock that left requests on
one bank hanging forever."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.proxy.app import create_app
from memwarden.settings import load_settings
from testing.standin import Fault, running_standin
from tests.conftest import make_settings, running_warden


def test_a_bank_profile_change_and_a_config_change_racing_on_one_bank_both_finish(tmp_path: Path) -> None:
    """A config PATCH that waited for the bank's lock behind a bank profile change got it when the
    profile change answered, then waited for that change's gate — which only the profile change's
    verification ends, and the verification waited for the lock: both hung for good, and every
    later config change or deletion of the bank with them. The verification now keeps the lock."""
    with running_standin(tmp_path / "backend") as backend:
        backend.faults.append(Fault("PUT", r"/banks/b$", status=None, delay=0.5, times=1))  # a slow profile change
        settings = make_settings(backend.url, data_dir=tmp_path / "data", config_guard={"settle_interval": 0.05})
        with running_warden(settings) as url:
            answers: dict[str, Any] = {}

            def call(name: str, method: str, path: str, body: dict[str, Any]) -> None:
                try:
                    answers[name] = httpx.request(method, f"{url}{path}", json=body, timeout=15).status_code
                except httpx.TimeoutException:
                    answers[name] = "timed out"

            profile = threading.Thread(
                target=call, args=("profile", "PUT", "/v1/default/banks/b", {"retain_mission": "Keep decisions."})
            )
            profile.start()
            while not backend.seen("PUT", r"/banks/b$") and not backend.faults[0].matched:
                threading.Event().wait(0.01)  # the profile change holds the bank's lock now
            threading.Event().wait(0.1)
            config = threading.Thread(
                target=call,
                args=(
                    "config",
                    "PATCH",
                    "/v1/default/banks/b/config",
                    {"updates": {"retain_custom_instructions": "x"}},
                ),
            )
            config.start()
            profile.join()
            config.join()
            assert answers == {"profile": 200, "config": 200}
            retained = httpx.post(
                f"{url}/v1/default/banks/b/memories",
                json={"items": [{"content": "The staging cluster has 3 nodes with 16 GB RAM each."}]},
                timeout=15,
            )
            assert retained.status_code == 200, retained.text  # the bank's gate is open again


@contextlib.asynccontextmanager
async def self_hosted(data_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    settings = load_settings(
        environ={},
        overrides={"data_dir": str(data_dir), "local": {"embedder": "hashing"}, "retention": {"enabled": False}},
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


@pytest.mark.anyio
@pytest.mark.parametrize("op", [{}, [], ["archive"]])
async def test_a_plan_operation_that_is_not_a_string_is_422_and_makes_no_plan(tmp_path: Path, op: Any) -> None:
    """``{"op": {}}`` was looked up in the table of operations as it came: ``TypeError: unhashable
    type`` and a 500."""
    async with self_hosted(tmp_path) as client:
        made = await client.post("/warden/v1/banks/b/plans", json={"operations": [{"op": op, "memory_id": "m"}]})
        assert made.status_code == 422, made.text
        [error] = made.json()["detail"]  # the request model's answer, as every body model's: where and what
        assert (error["loc"], error["msg"]) == (
            ["body", "operations", 0, "op"],
            "Input should be 'archive', 'restore', 'approve' or 'reject'",
        )
        assert (await client.get("/warden/v1/banks/b/plans")).json()["items"] == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        # Hindsight's Allow: the method of the first of its routes the path matches (one a method)
        ("PUT", "/v1/default/banks/b/tags", "GET"),
        ("POST", "/v1/default/banks/b", "PUT"),
        ("PUT", "/v1/default/banks", "GET"),
        ("PUT", "/v1/default/banks/b/memories/recall", "GET"),  # …/memories/{memory_id} comes first
    ],
)
async def test_a_path_the_store_serves_asked_with_another_method_is_405(
    tmp_path: Path, method: str, path: str, allow: str
) -> None:
    """Self-hosted, the store's catch-all for the routes it does not build answered these ``501``
    ("not available in self-hosted mode"); Hindsight answers ``405``."""
    async with self_hosted(tmp_path) as client:
        r = await client.request(method, path, json={})
        assert r.status_code == 405, r.text
        assert r.json() == {"detail": "Method Not Allowed"}
        assert r.headers["allow"] == allow
        assert (await client.post("/v1/default/banks/b/reflect", json={"query": "q"})).status_code == 501  # not built
