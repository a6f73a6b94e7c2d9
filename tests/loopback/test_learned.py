"""The learned layer: keep/reject where no rule is sure, topic and stage from the e5 embedding, a
vocabulary a deployment extends without retraining; reproducible weights."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from memwarden.backends.base import self_hosted
from memwarden.governance.state import build_pipeline, learned_layer
from memwarden.policies.pipeline import Pipeline
from memwarden.settings import SettingsError, load_settings
from memwarden.store.backend import LocalBackend
from memwarden.store.embedder import E5Embedder, HashingEmbedder
from tests.conftest import asgi_warden, make_settings
from tests.upstream import UpstreamProbe, create_upstream

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


@pytest.fixture(scope="module")
def pipeline(e5: E5Embedder) -> Pipeline:
    settings = load_settings(
        environ={},
        overrides={
            "labels": {
                "topics": {
                    "gardening": {
                        "description": "Plants, the garden, seeds, watering and harvests.",
                        "examples": [
                            "The tomatoes go in the south bed this year.",
                            "阳台的薄荷每周浇两次水。",
                            "We sow the carrots in early April.",
                        ],
                    }
                }
            }
        },
    )
    return build_pipeline(settings.governance, settings.labels, e5)


@pytest.mark.parametrize(
    "text",
    [
        "restarting the router again, one sec",
        "refactor done, running the test suite now",
        "Next: write tests",
        "trying again now, let me check the logs",
        "还是不行",
    ],
)
def test_transient_work_without_a_marker_word_is_noise(pipeline: Pipeline, text: str) -> None:
    judged = pipeline.judge(0, text)
    assert judged.verdict == "reject", judged.reason


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("Alice prefers dark roast coffee.", "personal"),
        ("Bob is allergic to peanuts.", "personal"),
        ("我女儿九月开始上小学。", "personal"),
        ("The staging cluster has three nodes with 16 GB each.", "infra"),
    ],
)
def test_facts_about_people_have_a_home(pipeline: Pipeline, text: str, topic: str) -> None:
    judged = pipeline.judge(0, text)
    assert (judged.verdict, judged.topic) == ("store", topic), judged.reason


@pytest.mark.parametrize("text", ["The billing service is written in Go.", "计费服务是用 Go 写的。"])
def test_a_service_written_in_a_language_is_code_not_business_nor_personal(pipeline: Pipeline, text: str) -> None:
    """A review found "a billing service written in Go" labelled ``personal``; the e5 head alone now
    says ``business`` (billing), the words say ``code`` (written in Go), and the two together too."""
    judged = pipeline.judge(0, text)
    assert (judged.verdict, judged.topic) == ("store", "code"), judged.reason


def test_a_dated_decision_with_its_reason_is_a_decision(pipeline: Pipeline) -> None:
    judged = pipeline.judge(0, "DNS moved from Cloudflare to DNSPod because of ICP filing requirements.")
    assert judged.stage == "decision"


def test_a_topic_added_in_the_config_is_classified_from_its_examples(pipeline: Pipeline) -> None:
    judged = pipeline.judge(0, "The roses along the fence need pruning in late February.")
    assert judged.topic == "gardening"
    assert "topic:gardening" in judged.tags


def test_the_clients_labels_win(pipeline: Pipeline) -> None:
    judged = pipeline.judge(0, "Bob is allergic to peanuts.", ["topic:business", "stage:process"])
    assert (judged.topic, judged.stage) == ("business", "process")


def test_sure_rules_are_not_second_guessed(pipeline: Pipeline) -> None:
    assert pipeline.judge(0, "ok").rule == "chatter"
    assert pipeline.judge(0, "默认模型：deepseek/deepseek-v4-flash").rule == "allow.structured_prefix"


def test_a_transcript_is_judged_turn_by_turn_with_one_embedding_a_segment(pipeline: Pipeline) -> None:
    text = (
        "User: can you look at the staging box?\nAssistant: Looking now.\n"
        "User: btw my son is allergic to shellfish, remember that for the team dinner"
    )
    judged = pipeline.judge(0, text, forward="trim")
    assert judged.verdict == "store"
    assert judged.text == "User: btw my son is allergic to shellfish, remember that for the team dinner"
    assert judged.topic == "personal"


def test_without_the_e5_embedder_the_rules_alone_decide() -> None:
    settings = load_settings(environ={})
    assert learned_layer(settings.labels, HashingEmbedder()) is None
    assert learned_layer(settings.labels, None) is None
    off = load_settings(environ={}, overrides={"labels": {"learned": "off"}})
    assert learned_layer(off.labels, object()) is None


@pytest.mark.parametrize(
    ("topics", "message"),
    [
        (
            {
                "home_garden": {"description": "x", "examples": ["a"]},
                "home-garden": {"description": "y", "examples": ["b"]},
            },
            "name the same label",
        ),
        ({"garden": {"description": "x", "examples": []}}, "labels.topics.garden.examples"),
        ({"garden": {"description": "x", "examples": [3]}}, "labels.topics.garden.examples"),
        ({"garden": {"examples": ["a"]}}, "labels.topics.garden.description"),
    ],
)
def test_a_bad_vocabulary_fails_at_start_naming_the_key(topics: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(environ={}, overrides={"labels": {"topics": topics}})
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_built_in_topic_cannot_be_redefined_and_names_are_as_clients_send_them() -> None:
    from memwarden.proxy.app import check_runnable

    entry = {"description": "x", "examples": ["a"]}
    with pytest.raises(SettingsError, match=r"labels\.topics\.infra: a built-in topic"):
        check_runnable(load_settings(environ={}, overrides={"labels": {"topics": {"infra": entry}}}))
    with pytest.raises(SettingsError, match="lowercase letters, digits and _"):
        load_settings(environ={}, overrides={"labels": {"topics": {"Gardening": entry}}})


@pytest.fixture
async def learned_warden(probe: UpstreamProbe, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    backend = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_upstream(probe)))
    settings = make_settings("http://upstream.test", data_dir=tmp_path, labels={"learned": "auto"})
    async with backend, asgi_warden(settings, backend) as client:
        yield client


@pytest.mark.anyio
async def test_in_front_of_a_backend_the_learned_layer_judges_and_says_so(learned_warden: httpx.AsyncClient) -> None:
    items = [{"content": "restarting the router again, one sec"}, {"content": "Bob is allergic to peanuts."}]
    r = await learned_warden.post("/v1/default/banks/b/memories?warden=verbose", json={"items": items})
    assert r.status_code == 200
    noise, fact = r.json()["warden"]["decisions"]
    assert (noise["verdict"], noise["rule"]) == ("reject", "learned.noise")
    assert (fact["verdict"], fact["topic"]) == ("store", "personal")


def test_the_light_turn_sets_weigh_a_quarter_and_with_adds_a_set_at_full_weight() -> None:
    """The three newest training writers' turns are trained on at LIGHT_WEIGHT (a row the other data
    already holds weighs 1, like it); ``--with`` trains a set at full weight for a candidate, never
    over the shipped model, and is refused together with ``--check`` (which compares the shipped
    model)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_learned", REPO / "scripts" / "train_learned.py")
    assert spec is not None
    assert spec.loader is not None
    trainer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trainer)
    keep, weights, _, _, _ = trainer.training_data()
    assert trainer.LIGHT_WEIGHT == 0.25

    def lines(n: int) -> list[str]:
        text = (REPO / "tests" / "data" / f"training_turns{n}.jsonl").read_text(encoding="utf-8")
        return [line for line in text.splitlines() if line.strip()]

    light = [(json.loads(line)["text"], bool(json.loads(line)["fact"])) for n in (4, 5, 6) for line in lines(n)]
    assert tuple(f"training_turns{n}.jsonl" for n in (4, 5, 6)) == trainer.LIGHT_TURN_SETS
    assert keep[-len(light) :] == light
    full = set(keep[: -len(light)])
    assert weights[-len(light) :] == [1.0 if pair in full else 0.25 for pair in light]
    assert weights.count(0.25) > 2000
    assert set(weights[: -len(light)]) == {1.0}
    extra, extra_weights, _, _, _ = trainer.training_data(("training_turns5.jsonl",))
    # named in --with, a light set is trained on once, at full weight: not twice
    fifth = [(json.loads(line)["text"], bool(json.loads(line)["fact"])) for line in lines(5)]
    assert sorted(extra) == sorted(keep)
    assert all(w == 1.0 for pair, w in zip(extra, extra_weights, strict=True) if pair in set(fifth))
    assert sum(extra_weights) > sum(weights) + 0.75 * 700
    refused = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "train_learned.py"), "--check", "--with", "training_turns5.jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2
    assert "--check compares the shipped model" in refused.stderr
    over = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "train_learned.py"), "--with", "training_turns5.jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert over.returncode == 2
    assert "not over the shipped model" in over.stderr


@pytest.mark.anyio
async def test_self_hosted_one_embedding_serves_the_judge_and_the_store(tmp_path: Path) -> None:
    from memwarden.proxy.app import create_app

    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path),
            "config_guard": {"missions": {"mode": "off"}},
            "labels": {"learned": "auto"},
        },
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        state = app.state.warden
        assert state.pipeline.learned is not None
        store_embedded: list[str] = []
        own = self_hosted(state.memory)
        assert isinstance(own, LocalBackend)
        original = own.store.embedder.passages

        def counting(texts: list[str]) -> object:
            store_embedded.extend(texts)
            return original(texts)

        own.store.embedder.passages = counting  # the store's calls from now on; the judge kept its own
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
            items = [{"content": "Bob is allergic to peanuts."}, {"content": "The API gateway listens on port 8443."}]
            r = await client.post("/v1/default/banks/b/memories", json={"items": items})
            assert r.json()["items_count"] == 2
            assert store_embedded == []  # both vectors came from the judge
            found = await client.post("/v1/default/banks/b/memories/recall", json={"query": "peanut allergy"})
            assert found.json()["results"][0]["text"] == "Bob is allergic to peanuts."


def test_a_request_is_embedded_in_one_batch_with_the_same_verdicts(pipeline: Pipeline) -> None:
    entries: list[tuple[object, list[str]]] = [
        ("restarting the router again, one sec", []),
        ("Bob is allergic to peanuts.", []),
        ("User: can you check the box?\nAssistant: Looking now.\nUser: my son is allergic to shellfish", []),
        ("ok", []),
        ("默认模型：deepseek/deepseek-v4-flash", ["user:ops"]),
    ]
    calls: list[int] = []
    assert pipeline.learned is not None
    original = pipeline.learned.embed

    def counting(texts: object) -> object:
        calls.append(len(texts))  # type: ignore[arg-type]
        return original(texts)  # type: ignore[arg-type]

    pipeline.learned.embed = counting  # type: ignore[method-assign]
    try:
        batched = pipeline.judge_many(entries)
    finally:
        pipeline.learned.embed = original  # type: ignore[method-assign]
    assert len(calls) == 1  # one embedding call for the whole request
    one_by_one = [pipeline.judge(i, c, t) for i, (c, t) in enumerate(entries)]
    assert [(j.verdict, j.topic, j.stage) for j in batched] == [(j.verdict, j.topic, j.stage) for j in one_by_one]


def test_past_the_embedding_budget_the_rules_alone_judge(pipeline: Pipeline) -> None:
    """A request may make the learned layer embed at most ``embed_budget`` texts: the items that fit,
    in the request's order, get the model; the rest the rules (which keep what they are unsure of)."""
    chatter = "restarting the router again, one sec"  # only the model takes this for noise
    transcript = "\n".join(f"User: note {i}: the box in rack {i} runs Debian 12." for i in range(6))
    entries: list[tuple[object, list[str]]] = [(chatter, []), (transcript, []), (chatter + " again", [])]
    embedded: list[int] = []
    assert pipeline.learned is not None
    original = pipeline.learned.embed

    def counting(texts: object) -> object:
        embedded.append(len(texts))  # type: ignore[arg-type]
        return original(texts)  # type: ignore[arg-type]

    pipeline.learned.embed = counting  # type: ignore[method-assign]
    budget = pipeline.embed_budget
    try:
        pipeline.embed_budget = 3  # the chatter fits (1), the six-turn transcript does not (6), the last one does
        judged = pipeline.judge_many(entries)
    finally:
        pipeline.embed_budget = budget
        pipeline.learned.embed = original  # type: ignore[method-assign]
    assert embedded == [2]
    assert [j.verdict for j in judged] == ["reject", "store", "reject"]
    assert [judged[0].rule, judged[2].rule] == ["learned.noise", "learned.noise"]
    assert all(not s.rule.startswith("learned.") for s in judged[1].segments)  # the rules alone


def test_a_sweep_over_a_bank_uses_the_rules_alone(pipeline: Pipeline) -> None:
    """The cleanup report re-judges every active memory: without embeddings (seconds on a large bank)."""
    rules = pipeline.rules_only
    assert rules.learned is None
    assert rules is pipeline.rules_only  # built once
    assert (
        rules.judge(0, "restarting the router again, one sec").verdict == "store"
    )  # the rules miss what the model catches
    assert pipeline.judge(0, "restarting the router again, one sec").verdict == "reject"
