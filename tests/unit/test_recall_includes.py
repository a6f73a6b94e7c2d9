"""What a recall includes beside its results comes back only for documents memwarden lets through
(fronts/hindsight/recall.py): chunks are read by the document their id names — Hindsight sends the
chunks of more candidates than it returns — and source facts by theirs."""

from __future__ import annotations

from typing import Any

from memwarden.fronts.hindsight.recall import _chunk_document, _included_documents, _prune_includes


def test_a_chunk_id_names_its_document_whatever_the_underscores() -> None:
    assert _chunk_document("team_a_notes_2026_05_3", "team_a") == "notes_2026_05"
    assert _chunk_document("team_a_notes_x", "team_a") is None  # no index: not a chunk id of this bank
    assert _chunk_document("other_notes_0", "team_a") is None


def test_a_withheld_documents_chunk_and_source_fact_are_dropped_even_when_not_a_result() -> None:
    result: dict[str, Any] = {
        "results": [{"id": "m2", "document_id": "kept", "chunk_id": "b_kept_0", "entities": ["Kenji"]}],
        "chunks": {"b_kept_0": {"text": "kept text"}, "b_old_0": {"text": "superseded text"}},
        "source_facts": {"m1": {"document_id": "old", "text": "superseded fact"}, "m2": {"document_id": "kept"}},
        "entities": {"Kenji": {}, "Maria": {}},
    }
    assert sorted(_included_documents(result, "b")) == ["kept", "kept", "old", "old"]
    _prune_includes(result, "b", {"old"})
    assert list(result["chunks"]) == ["b_kept_0"]
    assert list(result["source_facts"]) == ["m2"]
    assert list(result["entities"]) == ["Kenji"]
