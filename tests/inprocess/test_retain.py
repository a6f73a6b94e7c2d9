"""The governed retain route in front of the stand-in upstream: what reaches the backend, what the
client is told, what the ledger and the audit log keep."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.policies.labels import STAGES, TOPICS
from tests.conftest import asgi_warden, database_url, ledger_db, make_settings
from tests.upstream import UpstreamProbe, create_upstream

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]
RETAIN = "/v1/default/banks/b1/memories"


class Warden:
    def __init__(self, client: httpx.AsyncClient, probe: UpstreamProbe, data_dir: Path) -> None:
        self.client, self.probe, self.data_dir = client, probe, data_dir

    async def retain(self, *items: Any, path: str = RETAIN, **kw: Any) -> httpx.Response:
        body = {"items": [i if isinstance(i, dict) else {"content": i} for i in items], **kw}
        return await self.client.post(path, json=body)

    def forwarded(self) -> list[dict[str, Any]]:
        """Items the backend received, over all retain calls."""
        out = []
        for seen in self.probe.requests:
            if seen["path"].endswith("/memories") and seen["method"] == "POST" and seen["body"]:
                out.extend(json.loads(seen["body"])["items"])
        return out

    def rows(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        db = ledger_db(self.data_dir)
        db.row_factory = sqlite3.Row
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def events(self) -> list[sqlite3.Row]:
        return self.rows("SELECT * FROM audit_events ORDER BY seq")


async def make_warden(probe: UpstreamProbe, data_dir: Path, **governance: Any) -> AsyncIterator[Warden]:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    settings = make_settings("http://upstream.test", data_dir=data_dir, governance=governance)
    async with backend, asgi_warden(settings, backend) as client:
        yield Warden(client, probe, data_dir)


@pytest.fixture
async def warden(probe: UpstreamProbe, tmp_path: Path) -> AsyncIterator[Warden]:
    async for w in make_warden(probe, tmp_path):
        yield w


async def test_noise_is_stopped_and_facts_go_through_labelled(warden: Warden) -> None:
    r = await warden.retain(
        "这个功能有没有必要？",
        "决定用激活码订阅模式",
        "still broken",
        {"content": "Docker 容器 restart policy 统一设为 unless-stopped", "tags": ["user=ops"]},
    )
    assert r.status_code == 200
    assert r.json()["items_count"] == 2
    assert json.loads(r.headers["x-warden-decisions"]) == {"reject": 2, "store": 2}
    sent = warden.forwarded()
    assert [i["content"] for i in sent] == [
        "决定用激活码订阅模式",
        "Docker 容器 restart policy 统一设为 unless-stopped",
    ]
    assert sent[0]["tags"] == ["topic:business", "stage:decision"]
    assert sent[1]["tags"] == ["topic:infra", "stage:decision", "user:ops"]
    assert all(i["document_id"].startswith("mw-") for i in sent)
    assert {row["status"] for row in warden.rows("SELECT status FROM memories")} == {"active"}
    assert [e["action"] for e in warden.events()] == ["reject", "add", "reject", "add"]


async def test_verbose_lists_every_decision(warden: Warden) -> None:
    r = await warden.client.post(
        RETAIN + "?warden=verbose", json={"items": [{"content": "ok"}, {"content": "项目使用 Python 3.11。"}]}
    )
    decisions = r.json()["warden"]["decisions"]
    assert [(d["verdict"], d["rule"]) for d in decisions] == [("reject", "chatter"), ("store", "keep.default")]
    assert decisions[1]["topic"] == "code"
    assert decisions[1]["memory_id"]
    r = await warden.client.post(RETAIN, json={"items": [{"content": "ok"}]}, headers={"x-warden-verbose": "1"})
    assert r.json()["warden"]["decisions"][0]["reason"]


async def test_duplicates_are_counted_not_forwarded(warden: Warden) -> None:
    await warden.retain("用户偏好：输出简洁准确")
    r = await warden.retain(" 用户偏好：输出简洁准确 ", "用户偏好：输出简洁准确。")
    assert r.json()["items_count"] == 2
    assert json.loads(r.headers["x-warden-decisions"]) == {"duplicate": 2}
    assert len(warden.forwarded()) == 1
    (row,) = warden.rows("SELECT hit_count FROM memories")
    assert row["hit_count"] == 2


async def test_duplicates_inside_one_request(warden: Warden) -> None:
    r = await warden.retain("项目测试使用 pytest。", "项目测试使用 pytest")
    assert json.loads(r.headers["x-warden-decisions"]) == {"store": 1, "duplicate": 1}
    assert len(warden.forwarded()) == 1


async def test_topic_key_conflict_is_held_for_review(warden: Warden) -> None:
    await warden.retain("默认模型：deepseek/deepseek-v4-flash")
    r = await warden.retain("默认模型：gpt-4.1")
    assert json.loads(r.headers["x-warden-decisions"]) == {"review": 1}
    assert r.json()["items_count"] == 0
    assert [i["content"] for i in warden.forwarded()] == ["默认模型：deepseek/deepseek-v4-flash"]
    held = warden.rows("SELECT status, conflict_with, topic_key FROM memories WHERE content = ?", "默认模型：gpt-4.1")
    assert held[0]["status"] == "review"
    assert held[0]["conflict_with"]
    assert held[0]["topic_key"] == "config.default_model"


async def test_active_context_supersedes_in_place(warden: Warden) -> None:
    await warden.retain("active_context: 正在推进 P1 改造")
    r = await warden.retain("active_context: 正在推进 P2 插件改造")
    assert json.loads(r.headers["x-warden-decisions"]) == {"store": 1}
    statuses = {row["content"]: row["status"] for row in warden.rows("SELECT content, status FROM memories")}
    assert statuses == {
        "active_context: 正在推进 P1 改造": "superseded",
        "active_context: 正在推进 P2 插件改造": "active",
    }
    assert "supersede" in [e["action"] for e in warden.events()]


async def test_items_of_one_request_resolve_against_each_other(warden: Warden) -> None:
    """An active_context replaced, a duplicate and a conflict within one request point at the
    earlier item's real row (they used to point at a placeholder and change nothing)."""
    r = await warden.retain(
        "active_context: 正在推进 P1 改造",
        "active_context: 正在推进 P2 插件改造",
        "决定用激活码订阅模式",
        "决定用激活码订阅模式",
    )
    assert json.loads(r.headers["x-warden-decisions"]) == {"store": 3, "duplicate": 1}
    rows = {row["content"]: row for row in warden.rows("SELECT id, content, status, hit_count FROM memories")}
    assert rows["active_context: 正在推进 P1 改造"]["status"] == "superseded"
    assert rows["active_context: 正在推进 P2 插件改造"]["status"] == "active"
    assert rows["决定用激活码订阅模式"]["hit_count"] == 1
    supersede = [e for e in warden.events() if e["action"] == "supersede"]
    assert supersede[0]["memory_id"] == rows["active_context: 正在推进 P1 改造"]["id"]


async def test_dry_run_touches_nothing(warden: Warden) -> None:
    await warden.retain("决定用激活码订阅模式")
    before = (len(warden.events()), len(warden.rows("SELECT * FROM memories")), len(warden.probe.requests))
    mirror = warden.data_dir / "audit.jsonl"  # SQLite's mirror of the chain (PostgreSQL has none)
    jsonl = mirror.read_text() if mirror.exists() else None
    for kwargs in ({"params": {"dry_run": "true"}}, {"headers": {"x-warden-dry-run": "1"}}):
        r = await warden.client.post(
            RETAIN,
            json={
                "items": [
                    {"content": "决定用激活码订阅模式"},
                    {"content": "要不要关缓存？"},
                    {"content": "实测 FTS5 宽查询约 60 ms"},
                ]
            },
            **kwargs,
        )
        assert r.status_code == 200
        verdicts = [d["verdict"] for d in r.json()["warden"]["decisions"]]
        assert verdicts == ["duplicate", "reject", "store"]
        assert r.json()["warden"]["dry_run"] is True
    after = (len(warden.events()), len(warden.rows("SELECT * FROM memories")), len(warden.probe.requests))
    assert after == before
    assert (mirror.read_text() if mirror.exists() else None) == jsonl
    assert (jsonl is None) == (database_url() is not None)


async def test_shadow_mode_forwards_everything_unchanged_and_audits(probe: UpstreamProbe, tmp_path: Path) -> None:
    async for warden in make_warden(probe, tmp_path, mode="shadow"):
        body = {
            "items": [{"content": "still broken"}, {"content": "这个功能有没有必要？", "tags": ["topic=x"]}],
            "async": True,
        }
        r = await warden.client.post(RETAIN, json=body)
        assert r.status_code == 200
        assert json.loads(probe.requests[-1]["body"]) == body
        assert [(e["action"], e["source"]) for e in warden.events()] == [("reject", "shadow"), ("reject", "shadow")]
        assert warden.rows("SELECT * FROM memories") == []


async def test_off_mode_per_bank_is_plain_pass_through(probe: UpstreamProbe, tmp_path: Path) -> None:
    async for warden in make_warden(probe, tmp_path, banks={"raw": {"mode": "off"}}):
        await warden.retain("still broken", path="/v1/default/banks/raw/memories")
        assert json.loads(probe.requests[-1]["body"]) == {"items": [{"content": "still broken"}]}
        assert warden.events() == []
        await warden.retain("still broken")  # other banks stay governed
        assert len(probe.requests) == 1


async def test_secrets_are_never_stored_forwarded_or_logged(warden: Warden) -> None:
    secret = "sk-proj-a8F3kLmN0pQrStUvWxYz1234567890abcd"
    r = await warden.retain(f"OpenAI key for the bot: {secret}")
    assert json.loads(r.headers["x-warden-decisions"]) == {"reject": 1}
    assert warden.forwarded() == []
    (event,) = warden.events()
    assert event["rule"] == "secret.openai_key"
    assert "[REDACTED:openai_key]" in json.loads(event["after"])["preview"]
    for path in warden.data_dir.iterdir():
        assert secret.encode() not in path.read_bytes(), path


async def test_redact_mode_masks_and_stores(probe: UpstreamProbe, tmp_path: Path) -> None:
    async for warden in make_warden(probe, tmp_path, secrets="redact"):
        secret = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
        r = await warden.retain(f"CI 用的 GitHub token 是 {secret}，存在 1Password 的 ci-bot 条目")
        assert json.loads(r.headers["x-warden-decisions"]) == {"redact": 1}
        (sent,) = warden.forwarded()
        assert secret not in sent["content"]
        assert "[REDACTED:github_token]" in sent["content"]
        for path in warden.data_dir.iterdir():
            assert secret.encode() not in path.read_bytes(), path


async def test_client_labels_validated_and_unknown_ones_kept_as_client_tags(warden: Warden) -> None:
    """A known label or an alias is memwarden's label; a topic or stage the vocabulary does not know
    is the client's own tag, kept as sent, and never a reason to refuse the memory."""
    r = await warden.retain(
        {"content": "生产数据库统一用 PostgreSQL 16", "tags": ["Topic=Infrastructure", "stage:wip"]},
        {"content": "Alice prefers dark roast coffee.", "tags": ["topic:gardening"]},
        {
            "content": "The NAS in the closet runs TrueNAS with two mirrored 8 TB disks.",
            "tags": ["topic:homelab", "stage:someday"],
        },
    )
    assert json.loads(r.headers["x-warden-decisions"]) == {"store": 3}
    first, second, third = warden.forwarded()
    assert first["tags"][:2] == ["topic:infra", "stage:process"]
    assert second["tags"][0].startswith("topic:")
    assert second["tags"][0] != "topic:gardening"
    assert "topic:gardening" in second["tags"]
    assert {"topic:homelab", "stage:someday"} <= set(third["tags"])
    labels = [t for t in third["tags"] if t.split(":")[1] in (*TOPICS, *STAGES)]
    assert len(labels) == 2  # memwarden's own topic and stage beside the client's tags


async def test_other_item_fields_and_request_fields_are_kept(warden: Warden) -> None:
    item = {
        "content": "决定用激活码订阅模式",
        "context": "chat",
        "metadata": {"k": "v"},
        "timestamp": "2026-06-01T00:00:00Z",
        "document_id": "doc-7",
        "entities": [{"text": "Alice"}],
        "update_mode": "append",
    }
    await warden.retain(item, **{"async": True, "operation_id": "1b4e28ba-2fa1-11d2-883f-0016d3cca427"})
    body = json.loads(warden.probe.requests[-1]["body"])
    assert body["async"] is True
    assert body["operation_id"] == "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
    sent = body["items"][0]
    for key, value in item.items():
        assert sent[key] == value


@pytest.mark.parametrize(
    ("body", "status", "check"),
    [
        (b"{not json", 422, lambda d: d[0]["type"] == "json_invalid"),
        (b"\xff\xfe\x00", 422, lambda d: d[0]["type"] == "json_invalid"),
        (
            b"{}",
            422,
            lambda d: d == [{"type": "missing", "loc": ["body", "items"], "msg": "Field required", "input": {}}],
        ),
        (b'{"items": "x"}', 422, lambda d: d[0]["loc"] == ["body", "items"]),
        (b'{"items": [{"content": 5}]}', 422, lambda d: d[0]["loc"][:4] == ["body", "items", 0, "content"]),
        (b'{"items": [{"content": "x", "tags": [1]}]}', 422, lambda d: d[0]["loc"][:4] == ["body", "items", 0, "tags"]),
        (
            json.dumps({"items": [{"content": "x", "tags": [f"t{i}" for i in range(65)]}]}).encode(),
            422,
            lambda d: "64 tags" in d[0]["msg"],
        ),
        (json.dumps({"items": [{"content": "决定用激活码订阅模式"}] * 1001}).encode(), 413, lambda d: "1001" in d),
    ],
)
async def test_bad_input_gets_a_precise_error_and_changes_nothing(
    warden: Warden, body: bytes, status: int, check: Any
) -> None:
    r = await warden.client.post(RETAIN, content=body, headers={"content-type": "application/json"})
    assert r.status_code == status
    assert check(r.json()["detail"])
    assert warden.events() == []
    assert warden.rows("SELECT * FROM memories") == []
    assert warden.probe.requests == []
    ok = await warden.retain("决定用激活码订阅模式")
    assert ok.status_code == 200


async def test_empty_content_gets_a_verdict_and_length_alone_never_rejects(warden: Warden) -> None:
    long_fact = "订单服务按用户 ID 分库，订单号前缀是 ORD。" * 300  # 7,500 characters of one repeated fact
    r = await warden.client.post(
        RETAIN + "?warden=verbose", json={"items": [{"content": "   "}, {"content": long_fact}, {"content": []}]}
    )
    verdicts = [(d["verdict"], d["rule"]) for d in r.json()["warden"]["decisions"]]
    assert verdicts[0] == ("reject", "content.empty")
    assert verdicts[1][0] == "store"
    assert verdicts[2] == ("reject", "content.empty")


async def test_an_item_over_the_length_limit_is_413_and_nothing_is_written(
    probe: UpstreamProbe, tmp_path: Path
) -> None:
    async for w in make_warden(probe, tmp_path, max_length=1000):
        items = [{"content": "The search service listens on port 8080."}, {"content": "x" * 1001}]
        r = await w.client.post(RETAIN, json={"items": items})
        assert r.status_code == 413
        assert "Item 1 is 1001 characters long, limit 1000" in r.json()["detail"]
        assert w.rows("SELECT id FROM memories") == []
        assert w.events() == []
        assert w.forwarded() == []


async def test_a_thousand_items_in_one_request(warden: Warden) -> None:
    items = [{"content": f"服务 svc-{i} 的内网端口是 {9000 + i}"} for i in range(1000)]
    r = await warden.client.post(RETAIN, json={"items": items})
    assert r.status_code == 200
    assert r.json()["items_count"] == 1000
    assert warden.probe.requests[-1]["items_received"] == 1000
    assert len(warden.rows("SELECT id FROM memories WHERE status = 'active'")) == 1000


async def test_backend_refusal_is_passed_on_and_the_rows_marked_failed(warden: Warden) -> None:
    r = await warden.retain("决定用激活码订阅模式", path="/v1/default/banks/reject422/memories")
    assert r.status_code == 422
    assert "detail" in r.json()
    assert [row["status"] for row in warden.rows("SELECT status FROM memories")] == ["failed"]
    assert [e["action"] for e in warden.events()] == ["add", "forward_failed"]
    # The client retries: the fact was never active, so it is stored, not called a duplicate.
    again = await warden.retain("决定用激活码订阅模式")
    assert json.loads(again.headers["x-warden-decisions"]) == {"store": 1}


async def test_a_backend_5xx_queues_the_write(warden: Warden) -> None:
    r = await warden.retain("决定用激活码订阅模式", path="/v1/default/banks/fail500/memories")
    assert (r.status_code, r.json()["async"], r.headers["x-warden-outbox"]) == (200, True, "queued")
    assert [row["status"] for row in warden.rows("SELECT status FROM memories")] == ["pending"]
    assert [e["action"] for e in warden.events()] == ["add", "outbox_queue"]


async def test_backend_down_queues_the_write_and_answers_as_an_accepted_async_retain(tmp_path: Path) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    backend = httpx.AsyncClient(transport=httpx.MockTransport(down))
    settings = make_settings("http://upstream.test", data_dir=tmp_path)
    async with backend, asgi_warden(settings, backend) as client:
        r = await client.post(RETAIN, json={"items": [{"content": "决定用激活码订阅模式"}]})
        status = await client.get(f"/v1/default/banks/b1/operations/{r.json()['operation_id']}")
    assert r.status_code == 200
    assert (r.json()["async"], r.json()["items_count"], r.headers["x-warden-outbox"]) == (True, 1, "queued")
    assert json.loads(r.headers["x-warden-decisions"]) == {"store": 1}
    assert status.json()["status"] == "pending"
    db = ledger_db(tmp_path)
    assert db.execute("SELECT status FROM memories").fetchall() == [("pending",)]
    assert db.execute("SELECT state, operation_id FROM outbox").fetchall() == [("queued", r.json()["operation_id"])]
    db.close()


async def test_a_request_records_all_its_verdicts_or_none(warden: Warden, monkeypatch: pytest.MonkeyPatch) -> None:
    from memwarden.db import memories

    def explode(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(memories, "append_events", explode)
    with pytest.raises(RuntimeError):
        await warden.retain("决定用激活码订阅模式", "项目使用 Python 3.11。")
    assert warden.rows("SELECT * FROM memories") == []
    assert warden.probe.requests == []


async def test_non_text_blocks_pass_and_are_recorded_as_unfiltered(warden: Warden) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
    r = await warden.retain(
        {"content": [{"type": "text", "text": "决定用激活码订阅模式"}, image]}, {"content": [image]}
    )
    assert json.loads(r.headers["x-warden-decisions"]) == {"store": 2}
    sent = warden.forwarded()
    assert sent[0]["content"][1] == image
    assert sent[1]["content"] == [image]
    assert sent[1]["tags"] == ["topic:reflection", "stage:decision"]  # the fallback labels: never an item without
    afters = [json.loads(e["after"]) for e in warden.events()]
    assert [a.get("unfiltered_blocks") for a in afters] == [1, 1]
    assert warden.events()[1]["rule"] == "unfiltered.non_text"


TRANSCRIPT = (
    "User: Can you help me set up the staging server?\n"
    "Assistant: Sure. Which database do you want?\n"
    "User: We decided to use Postgres 16 for staging. Thanks!"
)


async def test_a_transcript_is_judged_by_segment_and_forwarded_whole(warden: Warden) -> None:
    r = await warden.client.post(RETAIN + "?warden=verbose", json={"items": [{"content": TRANSCRIPT}]})
    assert r.status_code == 200
    decision = r.json()["warden"]["decisions"][0]
    assert decision["verdict"] == "store"
    assert [s["keep"] for s in decision["segments"]] == [False, False, False, True, False]
    assert decision["segments"][3]["speaker"] == "User"
    assert "text" not in decision["segments"][0]  # offsets, speaker, rule: never the text
    assert warden.forwarded()[0]["content"] == TRANSCRIPT  # whole: the backend's extractor reads it all
    stored = json.loads(warden.events()[-1]["after"])
    assert stored["segments"] == 5
    assert [d["rule"] for d in stored["noise_segments"]] == ["question.mark", "chatter", "question.mark", "chatter"]
    assert stored["trimmed"] is False


async def test_a_bank_set_to_trim_gets_the_transcript_without_its_noise(probe: UpstreamProbe, tmp_path: Path) -> None:
    async for w in make_warden(probe, tmp_path, banks={"b1": {"segments": "trim"}}):
        r = await w.retain({"content": TRANSCRIPT, "document_id": "chat-1"})
        assert r.status_code == 200
        sent = w.forwarded()[0]
        # The turns that were all noise left; the turn with the fact stays whole, its "Thanks!" too.
        assert sent["content"] == "User: We decided to use Postgres 16 for staging. Thanks!"
        assert sent["document_id"] == "chat-1"
        row = w.rows("SELECT content, item FROM memories")[0]
        assert row["content"] == sent["content"]
        assert json.loads(row["item"])["content"] == sent["content"]  # a rollback re-sends what was stored


async def test_a_transcript_of_noise_only_is_rejected(warden: Warden) -> None:
    r = await warden.retain("User: hi! Can you help me?\nAssistant: Sure, what do you need?\nUser: thanks")
    assert r.status_code == 200
    assert json.loads(r.headers["x-warden-decisions"]) == {"reject": 1}
    assert warden.forwarded() == []
