"""A memwarden for the dashboard's tests: self-hosted on loopback, seeded with memories in Chinese
and English (held items in review, an expired one for the cleanup report, a config change), and a
key configured — so every call of the page needs it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from memwarden.settings import Settings, load_settings
from tests.conftest import running_warden

BANK = "ops"
FACTS = [
    {"content": "默认模型：deepseek/deepseek-v4-flash"},
    {"content": "项目 memwarden 的路径：/srv/memwarden"},
    {"content": "用户偏好：回答要简洁"},
    {"content": "batch size set to 32"},
    {"content": "The search service listens on port 9200 in the staging cluster.", "tags": ["topic:infra"]},
    {"content": "Alice prefers dark roast coffee in the morning.", "tags": ["user:alice"]},
    {"content": "决定用激活码订阅模式，按年收费。"},
    {"content": "部署区域：cn-north-1", "timestamp": "2020-01-01T00:00:00Z"},  # past its period: cleanup
]
HELD = [  # each conflicts with the memory holding its topic key: held for review
    {"content": "默认模型：gpt-4.1"},
    {"content": "项目 memwarden 的路径：/opt/memwarden"},
    {"content": "用户偏好：回答要详细，多举例子"},
    {"content": "batch size set to 64"},
]
MISSION = "Store durable facts about the ops team."


def ui_settings(data_dir: Path, **plans: Any) -> Settings:
    return load_settings(
        environ={},
        overrides={
            "data_dir": str(data_dir),
            "local": {"embedder": "hashing"},
            "config_guard": {"settle_interval": 0.05, "missions": {"mode": "off"}},
            "retention": {"enabled": False},
            "plans": plans,
        },
    )


@dataclass
class Rig:
    url: str
    token: str  # admin on every bank
    reader: str  # read on the seeded bank only: no admin anywhere
    http: httpx.Client  # with the admin key

    def memories(self, **params: Any) -> list[dict[str, Any]]:
        r = self.http.get(f"/warden/v1/banks/{BANK}/memories", params={"limit": 1000, **params})
        assert r.status_code == 200, r.text
        items: list[dict[str, Any]] = r.json()["items"]
        return items

    def memory(self, memory_id: str) -> dict[str, Any]:
        r = self.http.get(f"/warden/v1/banks/{BANK}/memories/{memory_id}")
        assert r.status_code == 200, r.text
        found: dict[str, Any] = r.json()
        return found

    def by_text(self, text: str) -> dict[str, Any]:
        (found,) = [m for m in self.memories() if m["content"] == text]
        return found

    def audit(self, **params: Any) -> list[dict[str, Any]]:
        r = self.http.get("/warden/v1/audit", params={"bank": BANK, "limit": 1000, **params})
        assert r.status_code == 200, r.text
        events: list[dict[str, Any]] = r.json()["events"]
        return events


def seed(http: httpx.Client) -> None:
    retain = f"/v1/default/banks/{BANK}/memories"
    r = http.post(retain, json={"items": FACTS})
    assert r.status_code == 200, r.text
    assert r.json()["items_count"] == len(FACTS), r.text
    for item in HELD:
        r = http.post(retain, json={"items": [item]})
        assert r.headers["x-warden-decisions"] == '{"review":1}', r.text
    r = http.patch(f"/v1/default/banks/{BANK}/config", json={"updates": {"retain_mission": MISSION}})
    assert r.status_code == 200, r.text
    r = http.post(
        f"/v1/default/banks/{BANK}-notes/memories", json={"items": [{"content": "季度复盘在每季度最后一周。"}]}
    )
    assert r.status_code == 200, r.text


@contextlib.contextmanager
def ui_rig(data_dir: Path, **plans: Any) -> Iterator[Rig]:
    """memwarden seeded, then with two keys made (from then on every request needs one)."""
    with running_warden(ui_settings(data_dir, **plans)) as url, httpx.Client(base_url=url, timeout=60) as http:
        seed(http)
        root = http.post("/warden/v1/keys", json={"name": "dashboard", "admin": ["*"]})
        assert root.status_code == 201, root.text
        token = root.json()["token"]
        http.headers["Authorization"] = f"Bearer {token}"
        reader = http.post("/warden/v1/keys", json={"name": "reader", "read": [BANK]})
        assert reader.status_code == 201, reader.text
        yield Rig(url=url, token=token, reader=reader.json()["token"], http=http)
