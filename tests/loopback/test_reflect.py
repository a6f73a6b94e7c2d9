"""Reflect and directives in self-hosted mode, with the fake OpenAI server as the LLM (no network):
through memwarden's governed front, as a client sees them."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.store.schema import STORE_MIGRATIONS
from testing.loopback import free_port
from tests.fake_openai import serve_fake_llm
from tests.reflect_rig import KEY, reflect_settings, seed, sent_to_llm, warden
from tests.servers import spawn_memwarden, wait_memwarden

pytestmark = pytest.mark.anyio
B = "/v1/default/banks/team"


async def test_reflect_answers_from_the_memories_it_cites(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            ids = await seed(client, "team")
            r = await client.post(
                f"{B}/reflect", json={"query": "What coffee does Alice like?", "include": {"facts": {}}}
            )
            assert r.status_code == 200, r.text
            answer = r.json()
            assert answer["text"] == "Alice prefers dark roast coffee."
            cited = answer["based_on"]["memories"]
            assert [(m["id"], m["text"]) for m in cited] == [
                (ids["Alice prefers dark roast coffee."], cited[0]["text"])
            ]
            assert cited[0]["type"] == "world"
            assert "user:alice" in cited[0]["tags"]
            assert answer["based_on"]["directives"] == []
            assert answer["based_on"]["mental_models"] == []
            assert answer["usage"]["total_tokens"] == 15  # the fake's count, passed on
            assert answer["structured_output"] is None
            assert answer["trace"] is None
            # The LLM was given every memory the recall found; it cited the one it used.
            prompt = sent_to_llm(fake.seen)
            assert "Bob is allergic to peanuts." in prompt
            assert fake.seen[-1]["authorization"] == f"Bearer {KEY}"
            # Without include.facts, no based_on (Hindsight's default); with tool_calls, the trace.
            r = await client.post(
                f"{B}/reflect", json={"query": "Who drives a Tesla?", "include": {"tool_calls": {"output": False}}}
            )
            assert r.json()["based_on"] is None
            assert r.json()["text"] == "Carol drives a red Tesla to the office."
            trace = r.json()["trace"]
            assert trace["tool_calls"][0]["tool"] == "recall"
            assert trace["tool_calls"][0]["output"] is None
            assert trace["llm_calls"][0]["scope"] == "final"


async def test_the_tag_filter_decides_what_the_llm_reads(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            body = {"query": "What coffee does Alice like?", "tags": ["user:bob"], "tags_match": "any_strict"}
            r = await client.post(f"{B}/reflect", json={**body, "include": {"facts": {}}})
            assert r.json()["text"] == "I don't know."
            assert r.json()["based_on"]["memories"] == []
            assert "Alice" not in sent_to_llm(fake.seen).split("## Evidence")[1]
            # The other spelling finds Alice's memory: the governed front rewrites the filter.
            r = await client.post(f"{B}/reflect", json={**body, "tags": ["user=alice"], "include": {"facts": {}}})
            assert r.status_code == 200, r.text
            assert r.headers["x-warden-tags"] == "normalized"
            assert [m["text"] for m in r.json()["based_on"]["memories"]] == ["Alice prefers dark roast coffee."]
            # Fact types too: no experience is held, so nothing is read.
            r = await client.post(f"{B}/reflect", json={"query": "Alice coffee", "fact_types": ["experience"]})
            assert r.json()["text"] == "I don't know."


async def test_directives_apply_by_their_tags(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            brief = (await client.post(f"{B}/directives", json={"name": "brief", "content": "Be brief."})).json()
            shout = await client.post(
                f"{B}/directives",
                json={"name": "shout", "content": "Answer in uppercase.", "tags": ["user:alice"], "priority": 5},
            )
            assert shout.status_code == 200, shout.text
            shout_id = shout.json()["id"]

            async def ask(**filters: Any) -> dict[str, Any]:
                body = {"query": "What coffee does Alice like?", "include": {"facts": {}}, **filters}
                r = await client.post(f"{B}/reflect", json=body)
                assert r.status_code == 200, r.text
                answer: dict[str, Any] = r.json()
                return answer

            untagged = await ask()  # no tag filter: the untagged directives only (Hindsight's isolation)
            assert untagged["text"] == "Alice prefers dark roast coffee."
            assert [d["name"] for d in untagged["based_on"]["directives"]] == ["brief"]
            assert "Be brief." in sent_to_llm(fake.seen)
            assert "uppercase" not in sent_to_llm(fake.seen)
            scoped = await ask(tags=["user:alice"])
            assert scoped["text"] == "ALICE PREFERS DARK ROAST COFFEE."  # the LLM was told, and obeyed
            assert [d["name"] for d in scoped["based_on"]["directives"]] == ["shout", "brief"]  # by priority
            other = await ask(tags=["user:bob"])
            assert [d["name"] for d in other["based_on"]["directives"]] == ["brief"]
            forced = await ask(apply_all_directives=True)
            assert forced["text"] == "ALICE PREFERS DARK ROAST COFFEE."
            r = await client.patch(f"{B}/directives/{shout_id}", json={"is_active": False})
            assert r.status_code == 200
            assert r.json()["is_active"] is False
            assert (await ask(tags=["user:alice"]))["text"] == "Alice prefers dark roast coffee."
            listed = (await client.get(f"{B}/directives", params={"active_only": "false"})).json()
            assert [d["id"] for d in listed["items"]] == [shout_id, brief["id"]]
            assert (await client.get(f"{B}/directives")).json()["total"] == 1


async def test_directives_as_hindsight_keeps_them(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, _):
        async with warden(reflect_settings(tmp_path, url)) as client:
            assert (await client.get(f"{B}/directives")).status_code == 404  # no such bank yet
            made = await client.post(f"{B}/directives", json={"name": "n", "content": "c", "tags": ["a"]})
            assert made.status_code == 200, made.text  # the bank is made on first write, as by a retain
            d = made.json()
            assert set(d) == {
                "id",
                "bank_id",
                "name",
                "content",
                "priority",
                "is_active",
                "tags",
                "created_at",
                "updated_at",
            }
            assert (await client.get(f"{B}/directives/{d['id']}")).json() == d
            patched = (await client.patch(f"{B}/directives/{d['id']}", json={"content": "c2", "tags": []})).json()
            assert (patched["content"], patched["tags"], patched["name"]) == ("c2", [], "n")
            listed = (await client.get(f"{B}/directives", params={"tags": "b"})).json()
            assert [x["id"] for x in listed["items"]] == [d["id"]]  # untagged now: listed for any tag
            assert (await client.delete(f"{B}/directives/{d['id']}")).json() == {"status": "deleted"}
            missing = await client.get(f"{B}/directives/{d['id']}")
            assert missing.status_code == 404
            assert missing.json() == {"detail": f"Directive '{d['id']}' not found"}
            # An id that is no UUID is just not found (Hindsight's database fails on it with a 500).
            assert (await client.delete(f"{B}/directives/nope")).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "where"),
    [
        ("POST", "directives", {"name": "x"}, ["body", "content"]),
        ("POST", "directives", {"name": "x", "content": "y", "priority": "high"}, ["body", "priority"]),
        ("POST", "directives", {"name": "x", "content": "y" * 16_001}, ["body", "content"]),
        ("POST", "directives", {"name": "x", "content": "y", "tags": "a"}, ["body", "tags"]),
        ("GET", "directives?limit=0", None, ["query", "limit"]),
        ("GET", "directives?active_only=maybe", None, ["query", "active_only"]),
        ("POST", "reflect", {}, ["body", "query"]),
        ("POST", "reflect", {"query": ""}, ["body"]),
        ("POST", "reflect", {"query": 5}, ["body", "query"]),
        ("POST", "reflect", {"query": "q" * 16_001}, ["body", "query"]),
        ("POST", "reflect", {"query": "x", "budget": "huge"}, ["body", "budget"]),
        ("POST", "reflect", {"query": "x", "fact_types": ["opinion"]}, ["body", "fact_types", 0]),
        ("POST", "reflect", {"query": "x", "tags": ["a"], "tag_groups": [{"tags": ["a"]}]}, ["body"]),
        ("POST", "reflect", {"query": "x", "tag_groups": [{"nope": 1}]}, ["body", "tag_groups"]),
        ("POST", "reflect", {"query": "x", "include": {"tool_calls": {"output": "some"}}}, None),
    ],
)
async def test_bad_input_is_hindsights_422_and_changes_nothing(
    tmp_path: Path, method: str, path: str, body: Any, where: list[Any] | None
) -> None:
    with serve_fake_llm() as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            before = (await client.get(f"{B}/directives", params={"active_only": "false"})).json()
            r = await client.request(method, f"{B}/{path}", json=body)
            assert r.status_code == 422, r.text
            detail = r.json()["detail"]
            assert isinstance(detail, list)
            assert {"type", "loc", "msg"} <= set(detail[0])
            if where is not None:
                assert detail[0]["loc"] == where
            assert fake.seen == []  # no LLM call
            assert (await client.get(f"{B}/directives", params={"active_only": "false"})).json() == before


async def test_without_llm_the_routes_say_to_configure_it(tmp_path: Path) -> None:
    async with warden(reflect_settings(tmp_path, None)) as client:
        await seed(client, "team")
        for method, path, body in [
            ("POST", "reflect", {"query": "What coffee does Alice like?"}),
            ("GET", "directives", None),
            ("POST", "directives", {"name": "n", "content": "c"}),
            ("GET", "mental-models", None),
            ("POST", "mental-models", {"name": "n", "source_query": "q"}),
            ("GET", "mental-models/m1", None),
            ("POST", "mental-models/m1/refresh", None),
        ]:
            r = await client.request(method, f"{B}/{path}", json=body)
            assert r.status_code == 501, (path, r.text)
            assert "configure [llm]" in r.json()["detail"], r.text
        # Recall is untouched.
        assert (await client.post(f"{B}/memories/recall", json={"query": "coffee"})).status_code == 200


async def test_a_stalled_llm_is_a_504_and_nothing_is_written(tmp_path: Path) -> None:
    with serve_fake_llm(stall=5) as (url, fake):
        async with warden(reflect_settings(tmp_path, url, timeout=0.5)) as client:
            await seed(client, "team")
            started = time.monotonic()
            r = await client.post(f"{B}/reflect", json={"query": "What coffee does Alice like?"})
            assert time.monotonic() - started < 3
            assert r.status_code == 504, r.text
            assert "timed out" in r.json()["detail"]
            assert "0.5 s" in r.json()["detail"]
            model = {"id": "coffee", "name": "Coffee", "source_query": "What coffee does Alice like?"}
            r = await client.post(f"{B}/mental-models", json=model)
            assert r.status_code == 504, r.text
            assert len(fake.seen) == 2  # both reached the LLM
            assert (await client.get(f"{B}/mental-models/coffee")).status_code == 404
            assert (await client.get(f"{B}/mental-models")).json()["total"] == 0
            audit = (await client.get("/warden/v1/audit", params={"bank": "team"})).json()
            assert not [e for e in audit["events"] if e["action"].startswith("mental_model")]


async def test_an_llm_error_is_a_502_saying_so_without_the_key(tmp_path: Path) -> None:
    with serve_fake_llm(fail=401) as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            r = await client.post(f"{B}/reflect", json={"query": "What coffee does Alice like?"})
            assert r.status_code == 502, r.text
            detail = r.json()["detail"]
            assert "the LLM answered 401" in detail
            assert "nothing was written" in detail
            assert KEY not in detail
            assert "***" in detail
            assert KEY in fake.seen[0]["authorization"]


def test_the_store_keeps_its_reflect_tables_in_its_own_migrations() -> None:
    assert "0012_store_reflect" in [name for name, _ in STORE_MIGRATIONS]


@pytest.mark.parametrize(
    ("key", "method", "path", "body", "status"),
    [
        ("reader", "POST", "reflect", {"query": "What coffee does Alice like?"}, 200),
        ("reader", "GET", "directives", None, 200),
        ("reader", "POST", "directives", {"name": "n", "content": "c"}, 403),
        ("reader", "POST", "mental-models", {"name": "n", "source_query": "coffee"}, 403),
        ("writer", "POST", "mental-models", {"name": "n", "source_query": "coffee"}, 200),
        ("writer", "POST", "directives", {"name": "n", "content": "c"}, 403),
        ("writer", "DELETE", "mental-models/kept", None, 403),
        ("writer", "POST", "mental-models/kept/clear", None, 403),
        ("writer", "POST", "mental-models/kept/refresh", None, 200),
        ("admin", "POST", "directives", {"name": "n", "content": "c"}, 200),
        ("admin", "DELETE", "mental-models/kept", None, 200),
    ],
)
async def test_each_route_needs_what_it_declares(
    tmp_path: Path, key: str, method: str, path: str, body: Any, status: int
) -> None:
    with serve_fake_llm() as (url, _):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            made = await client.post(f"{B}/mental-models", json={"id": "kept", "name": "k", "source_query": "coffee"})
            assert made.status_code == 200, made.text
            tokens = {}
            for name, scopes in (
                ("admin", {"admin": ["*"]}),
                ("writer", {"write": ["team"]}),
                ("reader", {"read": ["team"]}),
            ):
                r = await client.post(
                    "/warden/v1/keys", json={"name": name, **scopes}, headers=_bearer(tokens.get("admin"))
                )
                assert r.status_code == 201, r.text
                tokens[name] = r.json()["token"]
            r = await client.request(method, f"{B}/{path}", json=body, headers=_bearer(tokens[key]))
            assert r.status_code == status, r.text


def _bearer(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


def test_the_key_is_never_logged_nor_stored(tmp_path: Path) -> None:
    """memwarden as a user runs it, logging at debug: the key reaches the LLM and nothing else."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    data = tmp_path / "data"
    with serve_fake_llm() as (url, fake):
        config = tmp_path / "memwarden.toml"
        config.write_text(
            f'data_dir = "{data}"\n[server]\nport = {port}\nlog_level = "debug"\n[local]\nembedder = "hashing"\n'
            f'[llm]\nbase_url = "{url}"\nmodel = "fake-llm"\napi_key_env = "REFLECT_LLM_KEY"\ntimeout = 1.0\n'
        )
        env = {"MEMWARDEN_CONFIG": str(config), "REFLECT_LLM_KEY": KEY}
        proc = spawn_memwarden("serve", cwd=tmp_path, env=env)
        try:
            wait_memwarden(base, proc)
            with httpx.Client(base_url=f"{base}{B}", timeout=30) as http:
                assert http.post(
                    "/memories", json={"items": [{"content": "Alice prefers dark roast coffee."}]}
                ).is_success
                assert http.post("/directives", json={"name": "n", "content": "Be brief."}).status_code == 200
                assert http.post("/reflect", json={"query": "Alice coffee"}).status_code == 200
                model = {"id": "m", "name": "Coffee", "source_query": "Alice coffee"}
                assert http.post("/mental-models", json=model).status_code == 200
                fake.fail = 401  # an endpoint that quotes the key back in its error
                failed = http.post("/reflect", json={"query": "Alice coffee"})
                assert failed.status_code == 502
                assert KEY not in failed.text
                fake.fail, fake.stall = 0, 3
                assert http.post("/mental-models/m/refresh").status_code == 504
        finally:
            proc.send_signal(signal.SIGINT)
            _, log = proc.communicate(timeout=30)
    assert fake.seen
    assert all(s["authorization"] == f"Bearer {KEY}" for s in fake.seen)
    assert "llm_failed" in log
    assert "llm_timeout" in log
    assert "reflect" in log
    assert KEY not in log
    assert KEY.encode() not in config.read_bytes()
    stored = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.name == "memwarden.db" for p in stored)
    for path in stored:
        assert KEY.encode() not in path.read_bytes(), path
