"""backends/hindsight_json.py: Hindsight's JSON read into neutral values and written back is the
JSON it came from, so a Hindsight client behind a backend called in neutral types sees what the
store or Hindsight answered."""

from __future__ import annotations

from typing import Any

from memwarden.backends import hindsight_json as hj
from memwarden.backends.types import Item

RECALL_ANSWER: dict[str, Any] = {
    "results": [
        {
            "id": "0b6c…",
            "text": "We decided to use Postgres 16 for staging.",
            "type": "world",
            "entities": None,
            "context": "infra chat",
            "occurred_start": "2026-11-30T10:00:00+00:00",
            "occurred_end": None,
            "mentioned_at": "2026-11-30T10:00:00+00:00",
            "document_id": "mw-1",
            "metadata": {"source": "slack"},
            "chunk_id": None,
            "tags": ["topic:infra", "stage:decision"],
            "source_fact_ids": None,
            "scores": {"final": 0.03, "reranker": None, "semantic": 0.8, "keyword": 1.0},
            "attachments": None,
        }
    ],
    "trace": {"engine": "memwarden-local", "tokens_used": 12},
    "entities": None,
    "chunks": None,
    "source_facts": None,
    "source_facts_truncated": None,
}


def test_a_recall_answer_survives_the_round_trip() -> None:
    recalled = hj.recalled_from_json(RECALL_ANSWER)
    assert recalled.memories[0].kind == "world"
    assert recalled.memories[0].tags == ("topic:infra", "stage:decision")
    assert hj.recalled_json(recalled) == RECALL_ANSWER


def test_a_recall_request_survives_the_round_trip() -> None:
    body = {
        "query": "which database for staging?",
        "max_tokens": 2048,
        "types": ["world", "experience"],
        "tags": ["user:alice"],
        "tags_match": "all_strict",
        "budget": "high",
        "trace": True,
        "query_timestamp": "2026-12-01T00:00:00Z",
        "include": {"entities": {"max_tokens": 500}},
    }
    query = hj.recall_query_from_json(body)
    assert (query.kinds, query.tags.match, query.extra["query_timestamp"]) == (
        ("world", "experience"),
        "all_strict",
        "2026-12-01T00:00:00Z",
    )
    assert hj.recall_json(query) == body


def test_a_listed_memory_reads_its_kind_from_fact_type() -> None:
    listed = {"id": "m", "text": "t", "fact_type": "experience", "state": "invalidated", "proof_count": 1}
    memory = hj.listed_memory(listed)
    assert (memory.kind, memory.state, memory.extra) == ("experience", "invalidated", {"proof_count": 1})
    assert hj.memory_json(memory, "fact_type")["fact_type"] == "experience"


def test_an_item_keeps_every_field_the_client_sent() -> None:
    sent = {
        "content": "Bob is allergic to peanuts.",
        "context": "lunch planning",
        "timestamp": "2026-11-01T12:00:00Z",
        "document_id": "doc-7",
        "tags": ["user:bob"],
        "metadata": {"k": "v"},
        "entities": [{"text": "Bob"}],  # a field memwarden does not name
    }
    item = Item.from_json(sent)
    assert item.extra == {"entities": [{"text": "Bob"}]}
    assert item.to_json() == sent


def test_config_and_receipt_answers_are_hindsights() -> None:
    config = {"bank_id": "b", "config": {"retain_mission": "x", "k": 1}, "overrides": {"retain_mission": "x"}}
    assert hj.config_json("b", hj.config_from_json(config)) == config
    answer = {
        "success": True,
        "bank_id": "b",
        "items_count": 2,
        "async": True,
        "operation_id": "op-1",
        "operation_ids": None,
        "usage": None,
    }
    assert hj.receipt_json("b", hj.receipt_from_json(answer)) == answer


def test_stats_count_kinds_and_pending_work() -> None:
    stats = hj.stats_from_json(
        {"nodes_by_fact_type": {"world": 5}, "total_documents": 3, "pending_operations": 2, "pending_consolidation": 1}
    )
    assert dict(stats.counts) == {"world": 5, "experience": 0, "observation": 0, "documents": 3}
    assert stats.pending == 3


def test_a_listing_page_of_documents_survives_the_round_trip() -> None:
    answer = {
        "items": [
            {
                "id": "doc-1",
                "bank_id": "b",
                "content_hash": "9f2c",
                "created_at": "2026-11-30T10:00:00+00:00",
                "updated_at": "2026-11-30T10:00:00+00:00",
                "text_length": 41,
                "memory_unit_count": 2,
                "retain_params": None,
                "document_metadata": {"source": "slack"},
                "tags": ["topic:infra"],
                "matched_fields": [],
            }
        ],
        "total": 7,
        "limit": 1,
        "offset": 3,
        "total_is_estimate": False,
    }
    page = hj.page_from_json(answer, hj.document_from_json)
    assert (page.total, page.items[0].memory_count, page.items[0].tags) == (7, 2, ("topic:infra",))
    again = hj.page_json(page, hj.document_json, limit=1, offset=3, total_is_estimate=False)
    assert again == answer


def test_a_memory_in_detail_reads_its_kind_from_type() -> None:
    detail = {
        "id": "m",
        "text": "t",
        "type": "world",
        "state": "valid",
        "entities": ["Bob"],
        "observation_scopes": None,
    }
    memory = hj.memory_from_json(detail)
    assert (memory.kind, memory.extra["entities"]) == ("world", ["Bob"])
    assert hj.memory_json(memory) == {
        **detail,
        **dict.fromkeys(("context", "occurred_start", "occurred_end", "mentioned_at", "document_id", "metadata")),
        "tags": [],
    }


def test_stats_are_written_back_as_the_backend_gave_them() -> None:
    answer = {"bank_id": "b", "nodes_by_fact_type": {"world": 5}, "total_documents": 3, "pending_operations": 0}
    assert hj.stats_json(hj.stats_from_json(answer)) == answer


def test_a_receipt_keeps_only_what_its_writer_would_not_say_again() -> None:
    sync = {"success": True, "bank_id": "b", "items_count": 1, "async": False, "operation_id": None, "usage": None}
    assert hj.receipt_from_json(sync).extra == {"usage": None}
    # Hindsight answers an async retain of no items with async true and no operation: kept as said.
    empty = {"success": True, "bank_id": "b", "items_count": 0, "async": True, "operation_id": None}
    assert hj.receipt_from_json(empty).extra == {"async": True}
    assert hj.receipt_json("b", hj.receipt_from_json(empty)) == empty
