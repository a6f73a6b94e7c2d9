"""Self-hosted memwarden with an LLM, for the reflect tests: the fake OpenAI server in a thread
(``tests/fake_openai.py``) as ``[llm]``, memwarden in process (its governed front, lifespan run)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from memwarden.proxy.app import create_app
from memwarden.settings import Settings, load_settings

KEY = "sk-reflect-test-0123456789abcdef"  # what the fake LLM must see, and nothing else may hold
ITEMS = [
    {"content": "Alice prefers dark roast coffee.", "tags": ["user:alice"]},
    {"content": "Bob is allergic to peanuts.", "tags": ["user:bob"]},
    {"content": "Carol drives a red Tesla to the office."},
]


def reflect_settings(data_dir: Path, llm_url: str | None, *, timeout: float = 10, **extra: Any) -> Settings:
    llm = {} if llm_url is None else {"base_url": llm_url, "model": "fake-llm", "api_key_env": "LLM_KEY"}
    return load_settings(
        environ={"LLM_KEY": KEY},
        overrides={
            "data_dir": str(data_dir),
            "local": {"embedder": "hashing"},
            "retention": {"enabled": False},
            "labels": {"learned": "off"},
            "llm": {**llm, "timeout": timeout},
            **extra,
        },
    )


@contextlib.asynccontextmanager
async def warden(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            yield client


async def seed(client: httpx.AsyncClient, bank: str) -> dict[str, str]:
    """Retain :data:`ITEMS` in ``bank``; their ids by text."""
    r = await client.post(f"/v1/default/banks/{bank}/memories", json={"items": ITEMS})
    assert r.status_code == 200, r.text
    listed = (await client.get(f"/v1/default/banks/{bank}/memories/list")).json()["items"]
    ids = {m["text"]: m["id"] for m in listed}
    assert len(ids) == len(ITEMS), ids
    return ids


def sent_to_llm(seen: list[dict[str, Any]], index: int = -1) -> str:
    """The text of every message of one chat request the fake got."""
    return "\n".join(m["content"] for m in seen[index]["body"]["messages"])
