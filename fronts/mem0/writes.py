"""The Mem0 front's writes, for both dialects: add, update, delete, delete_all, entity deletes,
batches. Parse → the governance services (retain, rewrite, archive, erase) → what the route shapes.

messages → items:

* ``infer: false`` — each message but the system ones one item, its text as sent, its role and
  name kept (``metadata.mem0_role`` / ``mem0_name``, and the item's ``context``);
* ``infer: true`` (Mem0's default) with ``[llm]`` configured — the facts the model finds in the
  conversation, each an item (``governance/extract.py``);
* ``infer: true`` without an LLM — as Mem0 stores it: each message one item (as ``infer: false``),
  judged message by message with the message before it known (a reply read after its question), so
  a greeting or a question goes and each fact is a memory of its own (issue #34: one item for the
  whole chat made an ``update`` of one fact replace all of them).

Every item is then judged like a Hindsight retain's; what is kept is delivered to the backend and
its Mem0 id (``mem0_id``) is the answer's id. The add's event (``mem0_events``) is written in the
verdicts' transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memwarden.backends.llm import LLMError, LLMTimeout
from memwarden.db import mem0 as rows
from memwarden.db.common import Connection
from memwarden.db.records import LedgerMemory
from memwarden.fronts.auth import provenance_of, writes_as_admin
from memwarden.fronts.mem0.context import Call
from memwarden.fronts.mem0.models import (
    AddRequest,
    Mem0Error,
    UpdateRequest,
    entities_of,
    messages_of,
    validated,
)
from memwarden.fronts.mem0.shapes import entities as entities_in
from memwarden.fronts.mem0.shapes import item_of, mem0_id
from memwarden.governance.delivery import Neutral
from memwarden.governance.errors import ServiceError
from memwarden.governance.extract import extract_facts
from memwarden.governance.refusals import SecretInFields, refuse_secrets
from memwarden.governance.retain import Batch, Retained
from memwarden.governance.rewrite import rewrite
from memwarden.policies.field_secrets import field_secrets
from memwarden.policies.judgement import Judgement
from memwarden.policies.tags import LABEL_KEYS, split_tag


@dataclass
class Added:
    """An add's outcome: its event id, every verdict, and per item the Mem0 id it has (stored, or
    the memory it repeats) and the text stored."""

    event_id: str
    judgements: list[Judgement] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)


async def _secrets(payload: Mapping[str, Any], call: Call) -> None:
    """A secret in any field but the memory text: refused (and audited) by governance, answered
    with the dialect's invalid-body status."""

    def message_text(loc: tuple[str | int, ...]) -> bool:
        return (len(loc) == 3 and loc[0] == "messages" and loc[2] == "content") or loc[:1] == ("text",)

    found = field_secrets(payload, skip=message_text)
    try:
        await refuse_secrets(call.state.ledger, call.bank, found, route=_route(call), request_id=call.request_id)
    except SecretInFields as exc:
        raise Mem0Error(call.invalid, exc.detail) from None


def _route(call: Call) -> str:
    return str(call.scope.get("state", {}).get("route", "mem0"))


async def _items(call: Call, request: AddRequest, entities: Mapping[str, str]) -> list[dict[str, Any]]:
    """The items an add writes: a message each, or the facts a model found in the conversation."""
    messages = [m for m in messages_of(request) if m.role != "system"]
    governance = call.state.settings.governance
    if len(request.messages) > governance.max_items:
        raise Mem0Error(413, f"too many messages: {len(request.messages)}, limit {governance.max_items}")
    size = sum(len(m.content) for m in messages)
    if size > governance.max_length:
        raise Mem0Error(413, f"the messages hold {size} characters, limit {governance.max_length}")
    sep = governance.tag_separator

    def one(text: str, role: str | None, name: str | None = None) -> dict[str, Any]:
        return item_of(
            text,
            mem0_id=uuid.uuid4().hex,
            entities=entities,
            metadata=request.metadata,
            role=role,
            name=name,
            separator=sep,
        )

    chat = call.state.chat
    if not request.infer or chat is None:  # without a model Mem0 stores a memory a message, each judged here
        return [one(m.content, m.role, m.name) for m in messages if m.content.strip()]
    transcript = "\n".join(f"{m.name or m.role}: {m.content}" for m in messages if m.content.strip())
    if not transcript:
        return []
    try:
        facts = await extract_facts(chat, transcript)
    except LLMTimeout as exc:
        raise Mem0Error(504, f"fact extraction: {exc}; nothing was written") from None
    except LLMError as exc:
        raise Mem0Error(502, f"fact extraction: {exc}; nothing was written") from None
    return [one(f, "fact") for f in facts]


def _summary(j: Judgement, ids: Mapping[int, str], items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    stored = ids.get(j.position)
    out: dict[str, Any] = {
        "index": j.position,
        "verdict": j.verdict,
        "rule": j.rule,
        "reason": j.reason,
        "topic": j.topic,
        "stage": j.stage,
        "ledger_id": stored or (j.existing_id if j.verdict == "duplicate" else None),
    }
    if stored is not None:
        out["mem0_id"] = items[j.position]["metadata"]["mem0_id"]
    return out


async def add(call: Call, payload: Any, *, kind: str = "add") -> Added:
    """Govern an add. Raises :class:`Mem0Error` (nothing written) for a request Mem0 refuses."""
    limit = call.state.settings.governance.max_items
    messages = payload.get("messages") if isinstance(payload, dict) else None
    if isinstance(messages, list) and len(messages) > limit:  # counted before anything reads them one by one
        raise Mem0Error(413, f"too many messages: {len(messages)}, limit {limit}")
    request: AddRequest = validated(AddRequest, payload, status=call.invalid)
    entities = entities_of(request)
    if not entities:
        names = "user_id, agent_id, run_id" if call.oss else "user_id, agent_id, app_id, run_id"
        raise Mem0Error(400, f"At least one identifier ({names}) is required.")
    await _secrets(payload, call)
    items = await _items(call, request, entities)
    added = Added(uuid.uuid4().hex)
    state = call.state
    summaries: list[dict[str, Any]] = []
    judgements: list[Judgement] = []

    def also(db: Connection, ids: Mapping[int, str]) -> None:
        summaries.extend(_summary(j, ids, items) for j in judgements)
        rows.record_event(
            db, event_id=added.event_id, bank=call.bank, kind=kind, request_id=call.request_id, results=summaries
        )

    batch = Batch(
        bank=call.bank,
        raw_items=items,
        contents=[i["content"] for i in items],
        tags=[i["tags"] for i in items],
        document_tags=[],
        fields={},
        request_id=call.request_id,
        previews=state.settings.mem0.audit_previews,
        source="mem0",
        provenance=provenance_of(call.scope, "mem0"),
        admin=writes_as_admin(call.scope, call.bank),
        also=also,
        scope=_same_entities(entities),
        threads=[tuple(sorted(entities.items()))] * len(items),  # one conversation: the same ids
    )
    if not items:  # nothing to judge (system messages only, no facts found): an event all the same
        await state.ledger.write(lambda db: also(db, {}))
        return added
    state.config.seed_in_background(call.bank)
    judgements.extend(await state.retain.judge(batch))
    retained = await state.retain.write(batch, judgements, Neutral(state.memory, call.bank))
    added.judgements, added.results = judgements, summaries
    _raise_for_delivery(retained)
    return added


def _raise_for_delivery(retained: Retained) -> None:
    if retained.unreachable is not None:
        raise Mem0Error(502, f"the store could not be reached: {retained.unreachable}")
    delivered = retained.delivered
    if delivered is not None and delivered.status != 200:
        said = delivered.body.decode("utf-8", "replace")[:300]
        raise Mem0Error(502, f"the backend refused the write ({delivered.status}: {said}); nothing was stored")


def _same_entities(named: Mapping[str, str]) -> Callable[[Sequence[str]], bool]:
    """A Mem0 memory repeats or conflicts only with memories of the same user, agent, app and run
    ids (Mem0's entities partition memories: one user's fact is no duplicate of another's)."""
    wanted = dict(named)
    return lambda tags: entities_in(tags) == wanted


def _label(tag: str) -> bool:
    split = split_tag(tag)
    return split is not None and split[0] in LABEL_KEYS


async def _live(call: Call, memory_id: str) -> LedgerMemory:
    row = await call.state.ledger.read(lambda db: rows.live_row(db, call.bank, memory_id))
    if row is None:
        raise Mem0Error(404, "Memory not found")
    return row


async def update(call: Call, memory_id: str, payload: Any) -> LedgerMemory:
    """A governed re-write of one memory; its new version's row. Raises :class:`Mem0Error` (404;
    400 when the new text is refused, 409 when held for review — the old version kept)."""
    request: UpdateRequest = validated(UpdateRequest, payload, status=call.invalid)
    if request.text is None and request.metadata is None:
        raise Mem0Error(400, "At least one of text or metadata must be provided.")
    if request.text is not None and not request.text.strip():
        raise Mem0Error(400, "text must not be empty")
    await _secrets(payload, call)
    async with call.state.bank_locks(call.bank):
        # One change of a memory at a time (the bank's lock, which archives and erasures hold too):
        # two updates at once would each supersede the same version and leave two live ones.
        old = await _live(call, memory_id)
        return await _rewrite(call, old, request.text, request.metadata)


async def _rewrite(call: Call, old: LedgerMemory, text: str | None, metadata: dict[str, Any] | None) -> LedgerMemory:
    state = call.state
    item = dict(old.item) or {"content": old.content, "tags": list(old.tags)}
    item.pop("document_id", None)
    # The entity tags are kept; the old version's labels are not: the new text is labelled anew.
    item["tags"] = [t for t in item.get("tags") or [] if isinstance(t, str) and not _label(t)]
    meta = dict(item.get("metadata") or {})
    meta.setdefault("mem0_id", mem0_id(old))
    meta.setdefault("mem0_created_at", old.created_at)
    if metadata is not None:
        meta["mem0_metadata"] = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    item["metadata"] = meta
    if text is not None:
        item["content"] = text
    if len(item["content"]) > state.settings.governance.max_length:
        raise Mem0Error(413, f"text is longer than {state.settings.governance.max_length} characters")
    batch = Batch(
        bank=call.bank,
        raw_items=[item],
        contents=[item["content"]],
        tags=[item["tags"]],
        document_tags=[],
        fields={},
        request_id=call.request_id,
        previews=state.settings.mem0.audit_previews,
        source="mem0",
        scope=_same_entities(entities_in(item["tags"])),
        provenance=provenance_of(call.scope, "mem0"),
        admin=writes_as_admin(call.scope, call.bank),
    )
    done = await rewrite(state.retain, batch, old.id, Neutral(state.memory, call.bank))
    _raise_for_delivery(done.retained)
    if done.new_id is None:
        j = done.retained.judgements[0]
        status = 409 if j.verdict == "review" else 400
        raise Mem0Error(
            status, f"the new version was not kept: {j.verdict} ({j.rule}: {j.reason}); the memory is unchanged"
        )
    new_id = done.new_id
    row = await state.ledger.read(lambda db: rows.rows_by_ids(db, [new_id]).get(new_id))
    assert row is not None
    return row


async def delete(call: Call, memory_id: str) -> None:
    """Archive one memory (erase it, with ``[mem0] hard_delete``). Raises :class:`Mem0Error` (404) or
    a governance :class:`ServiceError`."""
    state = call.state
    async with state.bank_locks(call.bank):
        row = await _live(call, memory_id)
        if state.settings.mem0.hard_delete:
            versions = await state.ledger.read(lambda db: rows.rows_of(db, call.bank, memory_id))
            await state.eraser.erase(
                call.bank,
                versions,
                reason="deleted by a Mem0 client",
                request_id=call.request_id,
                locked=True,
            )
        else:
            await state.archiver.archive(
                call.bank,
                row.id,
                reason="deleted by a Mem0 client",
                request_id=call.request_id,
                source="mem0",
                locked=True,
            )


async def erase_entities(call: Call, entities: Mapping[str, str], *, missing_ok: bool = True) -> int:
    """Erase every memory (every version) of the memories holding all of ``entities``' tags (every
    memory of the bank when none is named); how many rows. Raises :class:`Mem0Error` (404) or a
    governance :class:`ServiceError`."""
    from memwarden.fronts.mem0.filters import ENTITY_TAG

    sep = call.state.settings.governance.tag_separator
    other = "=" if sep == ":" else ":"
    sets = [[f"{ENTITY_TAG[k]}{s}{v}" for s in (sep, other)] for k, v in entities.items()]
    async with call.state.bank_locks(call.bank):  # the versions read where no update can add one
        found = await call.state.ledger.read(lambda db: rows.rows_with_tags(db, call.bank, sets))
        if not found and not missing_ok:
            raise Mem0Error(404, "Entity not found")
        return await call.state.eraser.erase(
            call.bank,
            found,
            reason="deleted by a Mem0 client (delete_all)",
            request_id=call.request_id,
            locked=True,
        )


async def batch(call: Call, payload: Any, *, deleting: bool) -> list[dict[str, Any]]:
    """A batch update or delete (Mem0's limit: 1000). Every id is checked first (an unknown one:
    404, nothing done); then each is applied in order, its outcome in the answer."""
    from memwarden.fronts.mem0.models import BatchRequest

    request: BatchRequest = validated(BatchRequest, payload, status=call.invalid)
    if not deleting:
        await _secrets({"memories": [e.metadata for e in request.memories]}, call)
        for entry in request.memories:
            if entry.text is None and entry.metadata is None:
                raise Mem0Error(400, f"memory {entry.memory_id}: at least one of text or metadata must be provided")
            if entry.text is not None and not entry.text.strip():
                raise Mem0Error(400, f"memory {entry.memory_id}: text must not be empty")
    for e in request.memories:
        await _live(call, e.memory_id)
    out = []
    for entry in request.memories:
        try:
            if deleting:
                await delete(call, entry.memory_id)
                out.append({"memory_id": entry.memory_id, "status": "deleted"})
            else:
                async with call.state.bank_locks(call.bank):  # as update: the live version read there
                    old = await _live(call, entry.memory_id)
                    await _rewrite(call, old, entry.text, entry.metadata)
                out.append({"memory_id": entry.memory_id, "status": "updated"})
        except Mem0Error as exc:
            out.append({"memory_id": entry.memory_id, "status": "refused", "error": exc.message})
        except ServiceError as exc:
            out.append({"memory_id": entry.memory_id, "status": "refused", "error": exc.detail})
    return out
