"""Mental models in self-hosted mode: content the LLM writes from a recall of the source query, kept,
refreshed and listed as Hindsight does; and reflect, directives and mental models through the
official ``hindsight-client`` against memwarden on loopback. The LLM is the fake OpenAI server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import running_warden
from tests.fake_openai import serve_fake_llm
from tests.reflect_rig import ITEMS, reflect_settings, seed, sent_to_llm, warden

pytestmark = pytest.mark.anyio
B = "/v1/default/banks/team"
COFFEE = {"id": "coffee", "name": "Coffee", "source_query": "What coffee does Alice like?", "tags": ["user:alice"]}


async def test_a_model_is_written_from_its_source_query_and_refreshed(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            made = await client.post(f"{B}/mental-models", json=COFFEE)
            assert made.status_code == 200, made.text
            assert made.json()["mental_model_id"] == "coffee"
            # Scoped to the model's tags (all_strict): only Alice's memories were read.
            assert "Bob is allergic" not in sent_to_llm(fake.seen)
            assert "Carol" not in sent_to_llm(fake.seen)
            operation = await client.get(f"{B}/operations/{made.json()['operation_id']}")
            assert (operation.json()["status"], operation.json()["operation_type"]) == (
                "completed",
                "refresh_mental_model",
            )
            model = (await client.get(f"{B}/mental-models/coffee")).json()  # detail=full by default
            assert model["content"] == "Alice prefers dark roast coffee."
            assert model["reflect_response"]["based_on"]["world"][0]["text"] == "Alice prefers dark roast coffee."
            assert model["is_stale"] is False
            assert model["trigger"]["mode"] == "full"
            meta = (await client.get(f"{B}/mental-models/coffee", params={"detail": "metadata"})).json()
            assert meta["content"] is None
            assert meta["source_query"] is None
            assert meta["name"] == "Coffee"
            assert (await client.post(f"{B}/mental-models", json=COFFEE)).status_code == 409  # id taken
            assert len(fake.seen) == 1  # …refused before the LLM was asked

            # A new memory in the model's scope makes it stale; a refresh writes it in.
            extra = {"content": "Alice also likes oat milk in her coffee.", "tags": ["user:alice"]}
            assert (await client.post(f"{B}/memories", json={"items": [extra]})).status_code == 200
            listed = (await client.get(f"{B}/mental-models")).json()
            assert (listed["total"], listed["items"][0]["is_stale"], listed["items"][0]["content"]) == (1, True, None)
            refreshed = await client.post(f"{B}/mental-models/coffee/refresh")
            assert refreshed.status_code == 200, refreshed.text
            assert refreshed.json()["status"] == "completed"
            model = (await client.get(f"{B}/mental-models/coffee")).json()
            assert "oat milk" in model["content"]
            assert model["is_stale"] is False
            history = (await client.get(f"{B}/mental-models/coffee/history")).json()
            assert [h["previous_content"] for h in history] == ["Alice prefers dark roast coffee.", ""]

            # Reflect reads a model whose words match; its id is cited.
            r = await client.post(f"{B}/reflect", json={"query": "coffee", "include": {"facts": {}}})
            assert [m["id"] for m in r.json()["based_on"]["mental_models"]] == ["coffee"]
            r = await client.post(f"{B}/reflect", json={"query": "coffee", "exclude_mental_models": True})
            assert '"mental_models": []' in sent_to_llm(fake.seen)

            patched = await client.patch(
                f"{B}/mental-models/coffee", json={"name": "Coffee 2", "trigger": {"budget": "high"}}
            )
            assert patched.status_code == 200, patched.text
            assert (patched.json()["name"], patched.json()["trigger"]["budget"]) == ("Coffee 2", "high")
            assert patched.json()["content"] == model["content"]  # not regenerated
            cleared = (await client.post(f"{B}/mental-models/coffee/clear")).json()
            assert cleared["content"] == ""
            assert (await client.delete(f"{B}/mental-models/coffee")).json() == {"status": "deleted"}
            gone = await client.get(f"{B}/mental-models/coffee")
            assert (gone.status_code, gone.json()) == (404, {"detail": "Mental model 'coffee' not found"})
            audit = (await client.get("/warden/v1/audit", params={"bank": "team"})).json()["events"]
            actions = [e["action"] for e in audit if e["action"].startswith("mental_model")]
            assert actions == [
                "mental_model_create",
                "mental_model_refresh",
                "mental_model_update",
                "mental_model_clear",
                "mental_model_delete",
            ]


async def test_bad_model_requests_are_refused_before_the_llm(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, fake):
        async with warden(reflect_settings(tmp_path, url)) as client:
            await seed(client, "team")
            for body in (
                {"name": "n"},
                {"name": "n", "source_query": "q", "max_tokens": 10},
                {"name": "n", "source_query": "q", "id": "a/b"},
                {"name": "n", "source_query": "q", "trigger": {"mode": "sometimes"}},
                {"name": "n", "source_query": "q", "trigger": {"tag_groups": [{"nope": 1}]}},
            ):
                r = await client.post(f"{B}/mental-models", json=body)
                assert r.status_code == 422, (body, r.text)
            r = await client.post(f"{B}/mental-models/nope/refresh", json={"mode": "delta"})
            assert r.status_code == 422
            assert r.json()["detail"][0]["loc"] == ["body", "mode"]
            r = await client.post(f"{B}/mental-models/nope/refresh")
            assert (r.status_code, r.json()) == (404, {"detail": "Mental model nope not found in bank team"})
            assert (await client.get(f"{B}/mental-models", params={"detail": "all"})).status_code == 422
            assert (await client.get("/v1/default/banks/nowhere/mental-models")).status_code == 404
            assert fake.seen == []
            assert (await client.get(f"{B}/mental-models")).json()["total"] == 0
            # A model for a bank that does not exist yet makes the bank (as Hindsight does).
            r = await client.post("/v1/default/banks/fresh/mental-models", json={"name": "n", "source_query": "q"})
            assert r.status_code == 200, r.text
            assert r.json()["mental_model_id"].startswith("mm-")


async def test_deleting_the_bank_takes_its_directives_and_models(tmp_path: Path) -> None:
    with serve_fake_llm() as (url, _):
        async with warden(reflect_settings(tmp_path, url, config_guard={"destructive": "allow"})) as client:
            await seed(client, "team")
            assert (await client.post(f"{B}/directives", json={"name": "n", "content": "c"})).status_code == 200
            assert (await client.post(f"{B}/mental-models", json=COFFEE)).status_code == 200
            assert (await client.delete(B)).status_code == 200
            await seed(client, "team")
            assert (await client.get(f"{B}/directives")).json()["total"] == 0
            assert (await client.get(f"{B}/mental-models")).json()["total"] == 0
            assert (await client.get(f"{B}/mental-models/coffee/history")).status_code == 404


async def test_the_official_client_reflects_and_keeps_directives_and_models(tmp_path: Path) -> None:
    from hindsight_client import Hindsight

    with serve_fake_llm() as (url, _), running_warden(reflect_settings(tmp_path, url)) as base:
        client = Hindsight(base_url=base)
        try:
            await client.aretain_batch("team", [{"content": i["content"], "tags": i.get("tags")} for i in ITEMS])
            directive = await client.acreate_directive("team", "shout", "Answer in uppercase.", tags=["user:alice"])
            assert directive.tags == ["user:alice"]
            answer = await client.areflect(
                "team", "What coffee does Alice like?", tags=["user:alice"], include_facts=True
            )
            assert answer.text == "ALICE PREFERS DARK ROAST COFFEE."
            assert answer.based_on is not None
            assert [m.text for m in answer.based_on.memories] == ["Alice prefers dark roast coffee."]
            assert [d.name for d in answer.based_on.directives] == ["shout"]
            listed = await client.alist_directives("team")
            assert [d.id for d in listed.items] == [directive.id]
            updated = await client.aupdate_directive("team", directive.id, is_active=False)
            assert updated.is_active is False
            assert (await client.aget_directive("team", directive.id)).is_active is False
            await client.adelete_directive("team", directive.id)

            made = await client.acreate_mental_model(
                "team", "Coffee", "What coffee does Alice like?", tags=["user:alice"]
            )
            model = await client.aget_mental_model("team", made.mental_model_id)
            assert model.content == "Alice prefers dark roast coffee."
            models = await client.alist_mental_models("team", detail="content")
            assert [m.content for m in models.items] == [model.content]
            refreshed = await client.arefresh_mental_model("team", made.mental_model_id)
            assert refreshed.operation_id
            renamed = await client.aupdate_mental_model("team", made.mental_model_id, name="Coffee 2")
            assert renamed.name == "Coffee 2"
            await client.adelete_mental_model("team", made.mental_model_id)
            assert (await client.alist_mental_models("team")).total == 0
        finally:
            await client.aclose()
