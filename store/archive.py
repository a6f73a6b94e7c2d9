"""Hindsight 1.1.0's transfer archive, as memwarden writes and reads it: its layout, its entries'
models, memwarden's ledger blocks, and the archive written (:func:`build`); reading one back,
checked, is :mod:`store.archive_read`.

The archive is the ZIP of Hindsight's ``POST …/transfer/export`` (``schema_version`` 1)::

    manifest.json          TransferManifest, with memwarden's section (below)
    documents/000000.json  one TransferDocument each: text, tags, retain params, created_at,
                           chunks, facts (text, type, times, metadata, tags)
    banks.json             the bank's row (profile and config overrides), with its config
    directives.json …      Hindsight's other sections, empty (memwarden has none of them)

Hindsight restores it without an LLM: its facts are taken as they are and re-embedded.

memwarden's ledger rows ride in each document's ``retain_params["memwarden"]``: a JSON string
(a *ledger block*) that Hindsight stores and exports again byte for byte and otherwise ignores.
A block holds the rows of that document's memories, per fact what memwarden keeps beside it
(operators' feedback), the document's archived facts (never sent as facts: Hindsight would
recall them), and its own SHA-256. Rows of no document the bank holds (held for review,
superseded, failed) ride in a *carrier* document with no text and no facts.

Integrity. memwarden's archives carry, in ``manifest["memwarden"]``, the format version, the
SHA-256 of every other entry and of the manifest itself: a truncated file, another version, an
entry edited, missing or added is refused by name. An archive Hindsight wrote has no such section
(Hindsight rewrites the whole archive); it is checked by the ZIP's CRCs, the manifest's document
count, and each ledger block's own checksum.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memwarden.db.memory_reads import STATUSES

SCHEMA_VERSION = 1  # Hindsight's archive layout
FORMAT_VERSION = 1  # memwarden's section and ledger blocks
LEDGER_KEY = "memwarden"
CARRIER_ID = "memwarden-ledger"
MAX_EXPANDED = 1 << 30  # what an archive may expand to: a ZIP bomb is refused before it is read
HINDSIGHT_SECTIONS = ("directives", "webhooks", "mental_models", "mental_model_history", "knowledge_pages")
NOT_RESTORED = {  # Hindsight's sections memwarden's store has no place for, by entry
    "observations.json": "observations",
    "mental_models.json": "mental_models",
    "knowledge_pages.json": "knowledge_pages",
    "directives.json": "directives",
    "webhooks.json": "webhooks",
    "attachments.json": "attachments",
    "data/invalidated_memory_units.json": "invalidated_memory_units",
}


class ArchiveError(ValueError):
    """An archive memwarden refuses; the message says what is wrong and where."""


def _finite(value: datetime | None) -> datetime | None:
    # Hindsight's own rule (finite_utc): an open bound stored as year 1 or 9999 is no date.
    if value is None or value.year in (1, 9999):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


Date = datetime | None


class Chunk(BaseModel):
    chunk_index: int
    chunk_text: str


class Fact(BaseModel):
    """A ``TransferFact``: one memory, without its embedding or its id."""

    text: str
    fact_type: str
    context: str | None = None
    event_date: Date = None
    occurred_start: Date = None
    occurred_end: Date = None
    mentioned_at: Date = None
    metadata: dict[str, str] = Field(default_factory=dict)
    tags: list[Annotated[str, Field(max_length=512)]] = Field(default_factory=list)
    chunk_index: int | None = None
    entities: list[str] = Field(default_factory=list)
    causal_relations: list[dict[str, Any]] = Field(default_factory=list)
    created_at: Date = None

    _dates = field_validator("event_date", "occurred_start", "occurred_end", "mentioned_at", "created_at")(_finite)


class Document(BaseModel):
    """A ``TransferDocument``: a document, its chunks and its facts."""

    id: Annotated[str, Field(min_length=1, max_length=1024)]
    original_text: str | None = None
    retain_params: dict[str, Any] | None = None
    tags: list[Annotated[str, Field(max_length=512)]] = Field(default_factory=list)
    created_at: Date = None
    chunks: list[Chunk] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)

    _created = field_validator("created_at")(_finite)


class Scope(BaseModel):
    data: bool = True
    bank_config: bool = True
    history: bool = False


class Manifest(BaseModel):
    schema_version: int
    source_bank_id: Annotated[str, Field(min_length=1)]
    exported_at: Date = None
    document_count: int = 0
    fact_count: int = 0
    archive_type: Literal["documents", "bank"] = "documents"
    scope: Scope | None = None


# -- ledger blocks -------------------------------------------------------------------------------

_STRICT = ConfigDict(extra="forbid")


class LedgerRow(BaseModel):
    """A row of memwarden's ``memories`` (``db/memory_transfer.LEDGER_FIELDS``)."""

    model_config = _STRICT
    id: Annotated[str, Field(min_length=1, max_length=128)]
    status: Literal[STATUSES]  # type: ignore[valid-type]
    content: str
    content_hash: str
    topic: str | None = None
    stage: str | None = None
    topic_key: str | None = None
    cardinality: str | None = None
    tags: list[str] = Field(default_factory=list)
    hit_count: int = Field(0, ge=0)
    document_id: str | None = None
    item: str = "{}"  # the item as it was forwarded: JSON text, kept as stored
    rule: str | None = None
    reason: str | None = None
    conflict_with: str | None = None
    event_time: str | None = None
    created_at: str
    updated_at: str
    request_id: str | None = None

    @field_validator("item")
    @classmethod
    def _an_object(cls, item: str) -> str:
        try:
            is_object = isinstance(json.loads(item), dict)
        except ValueError:
            is_object = False
        if not is_object:
            raise ValueError("item must be a JSON object's text")
        return item


class FactExtra(BaseModel):
    """What memwarden keeps beside one of the document's facts, matched by the fact's text."""

    model_config = _STRICT
    text_sha256: str
    feedback: int = 0
    edited_at: str | None = None


class ArchivedUnit(BaseModel):
    """A fact memwarden archived: carried here only, so that no other server recalls it."""

    model_config = _STRICT
    text: str
    context: str = ""
    fact_type: str = "world"
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    mentioned_at: str | None = None
    occurred_start: str | None = None
    occurred_end: str | None = None
    invalidation_reason: str | None = None
    invalidated_at: str | None = None
    edited_at: str | None = None
    created_at: str
    updated_at: str
    feedback: int = 0


class LedgerBlock(BaseModel):
    model_config = _STRICT
    format_version: int
    document_id: str
    carrier: bool = False
    memories: list[LedgerRow] = Field(default_factory=list)
    facts: list[FactExtra] = Field(default_factory=list)
    archived_units: list[ArchivedUnit] = Field(default_factory=list)
    sha256: str


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def ledger_block(
    document_id: str,
    memories: Sequence[Mapping[str, Any]],
    *,
    facts: Sequence[Mapping[str, Any]] = (),
    archived_units: Sequence[Mapping[str, Any]] = (),
    carrier: bool = False,
) -> str:
    """A document's ledger block: the JSON string that goes in its ``retain_params``."""
    body: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "document_id": document_id,
        "carrier": carrier,
        "memories": list(memories),
        "facts": list(facts),
        "archived_units": list(archived_units),
    }
    return json.dumps({**body, "sha256": sha256(canonical(body))}, ensure_ascii=False, sort_keys=True)


def read_block(raw: Any, where: str) -> LedgerBlock:
    """A ledger block, checked: its format version, its checksum, its rows' fields."""
    try:
        body = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ArchiveError(f"{where}: memwarden's ledger block is not a JSON object")
    version = body.get("format_version")
    if version != FORMAT_VERSION:
        raise ArchiveError(
            f"{where}: memwarden's ledger block is format version {version!r}; this memwarden reads {FORMAT_VERSION}"
        )
    claimed = body.pop("sha256", None)
    if claimed != sha256(canonical(body)):
        raise ArchiveError(f"{where}: memwarden's ledger block was edited: its checksum does not match")
    try:
        return LedgerBlock.model_validate({**body, "sha256": claimed})
    except ValidationError as exc:
        raise ArchiveError(f"{where}: memwarden's ledger block: {first_error(exc)}") from None


# -- writing -------------------------------------------------------------------------------------


def build(
    *,
    source_bank: str,
    documents: Sequence[Document],
    bank_row: Mapping[str, Any] | None,
    scope: Scope,
    archive_type: Literal["documents", "bank"],
    exported_at: str,
    memwarden_version: str,
) -> bytes:
    """The archive's bytes: Hindsight's layout, memwarden's section with every entry's checksum."""
    entries: dict[str, bytes] = {}
    for n, document in enumerate(documents):
        entries[f"documents/{n:06d}.json"] = canonical(document.model_dump(mode="json"))
    if archive_type == "bank" and scope.bank_config:
        entries["banks.json"] = canonical([dict(bank_row)] if bank_row else [])
        for section in HINDSIGHT_SECTIONS:
            entries[f"{section}.json"] = b"[]"
    if archive_type == "bank" and scope.history:
        entries["audit_log.json"] = entries["llm_requests.json"] = b"[]"
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source_bank_id": source_bank,
        "exported_at": exported_at,
        "document_count": len(documents),
        "fact_count": sum(len(d.facts) for d in documents),
        "observation_count": 0,
        "mental_model_count": 0,
        "knowledge_page_count": 0,
        "archive_type": archive_type,
        "includes_history": archive_type == "bank" and scope.history,
        "bank_rows_json_encoding": "serialized",
        LEDGER_KEY: {
            "format_version": FORMAT_VERSION,
            "memwarden_version": memwarden_version,
            "entries": {name: sha256(data) for name, data in entries.items()},
        },
    }
    if archive_type == "bank":
        manifest["scope"] = scope.model_dump()
    manifest[LEDGER_KEY]["checksum"] = sha256(canonical(manifest))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in [*entries.items(), ("manifest.json", json.dumps(manifest, indent=2).encode())]:
            zf.writestr(name, data)
    return buffer.getvalue()
