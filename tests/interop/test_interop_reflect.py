"""Reflect, directives and mental models against the real thing: the same requests to the real
Hindsight 1.1.0 (whose LLM is the fake OpenAI server, started by scripts/hindsight-up) and to
memwarden's self-hosted store (with the same fake as its [llm]); the answers must have the same
statuses and shapes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import running_warden
from tests.fake_openai import serve_fake_llm
from tests.interop.test_interop_local import same_shape, shape
from tests.reflect_rig import ITEMS, reflect_settings

pytestmark = [pytest.mark.interop]

# Free-form objects (their keys are data, or the engine's own: Hindsight's agent calls other tools).
FREE = frozenset({"input", "output", "metadata", "based_on_counts"})


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data: Path = tmp_path_factory.mktemp("reflect")
    with serve_fake_llm() as (url, _), running_warden(reflect_settings(data, url, governance={"mode": "off"})) as base:
        yield base


def _settled(http: httpx.Client, p: str, operation_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        status: dict[str, Any] = http.get(f"{p}/operations/{operation_id}").json()
        if status["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.2)


def scenario(base: str, bank: str) -> dict[str, httpx.Response]:
    out: dict[str, httpx.Response] = {}
    with httpx.Client(base_url=base, timeout=120) as http:
        p = f"/v1/default/banks/{bank}"
        http.put(p, json={}).raise_for_status()
        http.post(f"{p}/memories", json={"items": ITEMS}).raise_for_status()
        out["directive"] = http.post(f"{p}/directives", json={"name": "formal", "content": "Answer formally."})
        tagged = {"name": "alice", "content": "Mention Alice.", "tags": ["user:alice"], "priority": 5}
        out["directive_tagged"] = http.post(f"{p}/directives", json=tagged)
        directive_id = out["directive"].json()["id"]
        out["directives"] = http.get(f"{p}/directives")
        out["directives_tagged"] = http.get(f"{p}/directives", params={"tags": "user:bob"})
        out["directive_get"] = http.get(f"{p}/directives/{directive_id}")
        out["directive_patch"] = http.patch(f"{p}/directives/{directive_id}", json={"priority": 3})
        question = "What coffee does Alice like?"
        out["reflect"] = http.post(f"{p}/reflect", json={"query": question, "include": {"facts": {}}})
        out["reflect_tagged"] = http.post(
            f"{p}/reflect", json={"query": question, "tags": ["user:alice"], "include": {"facts": {}}}
        )
        out["reflect_plain"] = http.post(f"{p}/reflect", json={"query": question, "budget": "mid"})
        made = http.post(f"{p}/mental-models", json={"id": "coffee", "name": "Coffee", "source_query": question})
        out["model_create"] = made
        assert _settled(http, p, made.json()["operation_id"])["status"] == "completed"
        out["model"] = http.get(f"{p}/mental-models/coffee")
        out["model_metadata"] = http.get(f"{p}/mental-models/coffee", params={"detail": "metadata"})
        out["models"] = http.get(f"{p}/mental-models")
        out["models_content"] = http.get(f"{p}/mental-models", params={"detail": "content"})
        out["model_patch"] = http.patch(f"{p}/mental-models/coffee", json={"name": "Coffee 2"})
        out["model_refresh"] = http.post(f"{p}/mental-models/coffee/refresh")
        assert _settled(http, p, out["model_refresh"].json()["operation_id"])["status"] == "completed"
        out["model_history"] = http.get(f"{p}/mental-models/coffee/history")
        # Refusals.
        out["reflect_no_query"] = http.post(f"{p}/reflect", json={})
        out["reflect_blank_query"] = http.post(f"{p}/reflect", json={"query": "  "})
        out["reflect_bad_budget"] = http.post(f"{p}/reflect", json={"query": "q", "budget": "huge"})
        out["reflect_both_filters"] = http.post(
            f"{p}/reflect", json={"query": "q", "tags": ["a"], "tag_groups": [{"tags": ["a"]}]}
        )
        out["directive_no_content"] = http.post(f"{p}/directives", json={"name": "x"})
        out["directive_missing"] = http.get(f"{p}/directives/{uuid.uuid4()}")
        out["directives_bad_limit"] = http.get(f"{p}/directives", params={"limit": 0})
        out["model_small"] = http.post(f"{p}/mental-models", json={"name": "n", "source_query": "q", "max_tokens": 10})
        out["model_taken"] = http.post(f"{p}/mental-models", json={"id": "coffee", "name": "n", "source_query": "q"})
        out["model_missing"] = http.get(f"{p}/mental-models/nope")
        out["model_refresh_missing"] = http.post(f"{p}/mental-models/nope/refresh")
        out["model_refresh_bad"] = http.post(f"{p}/mental-models/coffee/refresh", json={"mode": "delta"})
        out["models_unknown_bank"] = http.get(f"/v1/default/banks/nope-{bank}/mental-models")
        out["model_delete"] = http.delete(f"{p}/mental-models/coffee")
        out["directive_delete"] = http.delete(f"{p}/directives/{directive_id}")
        http.delete(p)
    return out


def test_reflect_directives_and_models_answer_as_hindsight_does(hindsight_url: str, local: str) -> None:
    bank = f"rf-{uuid.uuid4().hex[:8]}"
    theirs, ours = scenario(hindsight_url, bank), scenario(local, bank)
    problems: list[str] = []
    for name, their in theirs.items():
        our = ours[name]
        if our.status_code != their.status_code:
            problems.append(f"{name}: status {our.status_code} vs Hindsight's {their.status_code}: {our.text[:200]}")
            continue
        problems += same_shape(_free(shape(our.json())), _free(shape(their.json())), name)
    assert not problems, "\n".join(problems)
    # What the answers say, where both must agree.
    reflect = ours["reflect"].json()
    assert set(reflect) == set(theirs["reflect"].json())
    assert [d["name"] for d in reflect["based_on"]["directives"]] == ["formal"]  # untagged only, as Hindsight
    tagged = {d["name"] for d in ours["reflect_tagged"].json()["based_on"]["directives"]}
    assert (
        tagged == {d["name"] for d in theirs["reflect_tagged"].json()["based_on"]["directives"]} == {"formal", "alice"}
    )
    assert [m["text"] for m in reflect["based_on"]["memories"]] == ["Alice prefers dark roast coffee."]
    assert ours["reflect_blank_query"].json() == theirs["reflect_blank_query"].json()
    assert ours["model_missing"].json() == theirs["model_missing"].json()
    assert ours["model_taken"].json()["detail"] == theirs["model_taken"].json()["detail"]


def _free(value: Any) -> Any:
    """``value`` with the free-form objects (:data:`FREE`) emptied."""
    if isinstance(value, dict):
        return {k: ({} if k in FREE and isinstance(v, dict) else _free(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_free(v) for v in value]
    return value
