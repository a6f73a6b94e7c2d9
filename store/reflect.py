"""Reflect in the self-hosted store: Hindsight 1.1.0's ``POST …/reflect`` answered by one recall and
one LLM call, and the directives and mental models that go with it.

A reflect (:meth:`Reflector.reflect`):

1. recalls from the bank with the request's tag filters and fact types, ``budget`` sizing the
   memories given to the LLM (:data:`CONTEXT_TOKENS`);
2. gathers the directives in force (:func:`store.directives.in_force`) and, unless excluded, up to
   :data:`MAX_MODELS` mental models in the same tag scope that share a word with the question;
3. asks the LLM once (:mod:`store.reflect_prompt`, :mod:`memwarden.backends.llm`);
4. answers with Hindsight's ``ReflectResponse``: ``based_on`` (with ``include.facts``) lists the
   memories and mental models the LLM cited — all it was given when its reply holds no list of
   them, as Hindsight does when its agent declares none — and the directives applied; ``trace`` (with ``include.tool_calls``) the recall and the
   LLM call.

A mental model's content is the answer of the same reflect over its source query, in its scope
(:mod:`store.mental_models`). Nothing is written by a reflect; a model is written only after its
LLM call succeeded. The LLM's failures are the client's 504 (timed out) or 502 (anything else).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from memwarden.backends.hindsight_json import recall_query_from_json
from memwarden.backends.llm import ChatClient, Completion, LLMError, LLMTimeout, Usage
from memwarden.backends.types import Memory
from memwarden.policies import tagfilter
from memwarden.store import directives as directive_rows
from memwarden.store import mental_models as model_rows
from memwarden.store import reflect_prompt, rules
from memwarden.store.errors import StoreError, obey
from memwarden.store.local import LocalStore
from memwarden.store.shapes import loads
from memwarden.store.text import terms

log = structlog.get_logger("memwarden.store")

CONTEXT_TOKENS = {"low": 2048, "mid": 4096, "high": 8192}  # the memories' share of the prompt, by budget
MAX_MODELS = 5


@dataclass(frozen=True)
class ReflectQuery:
    """A reflect request, checked (``ReflectRequest``'s fields the store acts on)."""

    query: str
    budget: str = "low"
    max_tokens: int = 4096
    tags: list[str] | None = None
    tags_match: str = "any"
    tag_groups: list[Any] | None = None
    fact_types: list[str] | None = None
    apply_all_directives: bool = False
    exclude_mental_models: bool = False
    exclude_mental_model_ids: Sequence[str] = ()
    response_schema: dict[str, Any] | None = None


@dataclass
class Answer:
    """One reflect's outcome, before it is shaped."""

    text: str
    memories: list[Memory]
    models: list[dict[str, Any]]
    directives: list[dict[str, Any]]
    structured: dict[str, Any] | None
    structured_error: str | None
    usage: Usage
    steps: dict[str, Any] = field(default_factory=dict)


def fact_json(m: Memory) -> dict[str, Any]:
    """Hindsight's ``ReflectFact``."""
    return {
        "id": m.id,
        "text": m.text,
        "type": m.kind,
        "context": m.context,
        "occurred_start": m.occurred_start,
        "occurred_end": m.occurred_end,
        "mentioned_at": m.mentioned_at,
        "document_id": m.document_id,
        "chunk_id": None,
        "tags": list(m.tags),
        "metadata": dict(m.metadata or {}),
        "attachments": None,
    }


def _related(models: Sequence[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """The models that share a word with the question, most shared first (then most recent)."""
    wanted = set(terms(query))
    scored = [(len(wanted & set(terms(f"{m['name']} {m['content']}"))), i, m) for i, m in enumerate(models)]
    return [m for score, _, m in sorted(scored, key=lambda s: (-s[0], s[1])) if score][:MAX_MODELS]


class Reflector:
    """Reflect, directives and mental models over a :class:`LocalStore`, with ``chat`` as the LLM."""

    def __init__(self, store: LocalStore, chat: ChatClient) -> None:
        self.store = store
        self.ledger = store.ledger
        self.chat = chat

    # -- reflect -----------------------------------------------------------------------------

    async def _ask(self, messages: list[dict[str, str]], what: str) -> Completion:
        try:
            return await self.chat.complete(messages)
        except LLMTimeout as exc:
            log.warning("llm_timeout", what=what, error=str(exc))
            raise StoreError(504, f"{what} timed out: {exc}; nothing was written") from None
        except LLMError as exc:
            log.warning("llm_failed", what=what, error=str(exc))
            raise StoreError(502, f"{what} failed: {exc}; nothing was written") from None

    async def answer(self, bank: str, q: ReflectQuery, *, what: str = "Reflect", missing_ok: bool = False) -> Answer:
        """Recall, gather, ask. An unknown bank is a 404 (``missing_ok``: an empty bank, for a
        model created with its bank)."""
        row = await self.store.bank_row(bank)
        if row is None and not missing_ok:
            raise StoreError(404, f"Bank '{bank}' not found")
        started = time.perf_counter()
        recall = {
            "query": q.query,
            "types": q.fact_types,
            "budget": q.budget,
            "max_tokens": CONTEXT_TOKENS.get(q.budget, CONTEXT_TOKENS["low"]),
            "tags": q.tags,
            "tags_match": q.tags_match,
            "tag_groups": q.tag_groups,
        }
        memories = (await self.store.recall(bank, recall_query_from_json(recall))).memories if row is not None else []
        in_force: list[dict[str, Any]] = []
        models: list[dict[str, Any]] = []
        if row is not None:
            in_force = await directive_rows.for_reflect(
                self.ledger,
                bank,
                tags=q.tags,
                tags_match=q.tags_match,
                tag_groups=q.tag_groups,
                apply_all=q.apply_all_directives,
            )
            if not q.exclude_mental_models:
                scope = tagfilter.build(q.tags, q.tags_match, q.tag_groups)
                shown = await model_rows.visible(self.ledger, bank, scope)
                models = _related([m for m in shown if m["id"] not in q.exclude_mental_model_ids], q.query)
        recalled_ms = round((time.perf_counter() - started) * 1000)
        mission = ""
        if row is not None:
            mission = "\n".join(
                dict.fromkeys(m for m in (row["mission"], loads(row["overrides"], {}).get("reflect_mission")) if m)
            )
        prompt = reflect_prompt.messages(
            q.query,
            memories,
            models,
            in_force,
            mission=mission,
            max_tokens=q.max_tokens,
            response_schema=q.response_schema,
        )
        done = await self._ask(prompt, what)
        reply = reflect_prompt.read_reply(done.text)
        if reply.answer is None:
            raise StoreError(502, f"{what} failed: the LLM's reply holds no answer; nothing was written")
        used = set(reflect_prompt.cited([m.id for m in memories], reply.memory_ids))
        used_models = set(reflect_prompt.cited([m["id"] for m in models], reply.model_ids))
        structured_error = None
        if q.response_schema is not None and reply.structured is None:
            structured_error = "the LLM's reply holds no structured_output object"
        return Answer(
            text=reply.answer,
            memories=[m for m in memories if m.id in used],
            models=[m for m in models if m["id"] in used_models],
            directives=in_force,
            structured=reply.structured if q.response_schema is not None else None,
            structured_error=structured_error,
            usage=done.usage,
            steps={
                "recall": recall,
                "recall_ms": recalled_ms,
                "llm_ms": done.duration_ms,
                "given": {"memories": [m.id for m in memories], "mental_models": [m["id"] for m in models]},
            },
        )

    async def reflect(self, bank: str, q: ReflectQuery, *, facts: bool, tool_calls: bool | None) -> dict[str, Any]:
        """Hindsight's ``ReflectResponse``; ``facts``: with ``based_on``; ``tool_calls``: with the
        trace (``False``: its inputs only)."""
        a = await self.answer(bank, q)
        based_on = None
        if facts:
            based_on = {
                "memories": [fact_json(m) for m in a.memories],
                "mental_models": [
                    {"id": m["id"], "text": f"{m['name']}: {m['content']}", "context": None} for m in a.models
                ],
                "directives": [{"id": d["id"], "name": d["name"], "content": d["content"]} for d in a.directives],
            }
        trace = None
        if tool_calls is not None:
            given = a.steps["given"]
            trace = {
                "tool_calls": [
                    {
                        "tool": "recall",
                        "input": {k: v for k, v in a.steps["recall"].items() if v is not None},
                        "output": given if tool_calls else None,
                        "duration_ms": a.steps["recall_ms"],
                        "iteration": 1,
                    }
                ],
                "llm_calls": [{"scope": "final", "duration_ms": a.steps["llm_ms"]}],
            }
        return {
            "text": a.text,
            "based_on": based_on,
            "structured_output": a.structured,
            "structured_output_error": a.structured_error,
            "usage": a.usage.as_json(),
            "trace": trace,
        }

    # -- mental models -----------------------------------------------------------------------

    async def _generate(self, bank: str, model: Mapping[str, Any], what: str) -> tuple[str, dict[str, Any], str | None]:
        """A model's content: the reflect of its source query in its scope; with the stored answer
        (Hindsight's ``reflect_response``) and when its newest memory was written."""
        trigger, scope = model["trigger"], model_rows.scope_of(model)
        q = ReflectQuery(
            query=model["source_query"],
            budget=trigger.get("budget") or "mid",
            max_tokens=model["max_tokens"],
            tags=scope.tags or None,
            tags_match=scope.tags_match,
            tag_groups=scope.tag_groups,
            fact_types=scope.fact_types,
            exclude_mental_models=bool(trigger.get("exclude_mental_models")),
            exclude_mental_model_ids=[model["id"], *(trigger.get("exclude_mental_model_ids") or [])],
            response_schema=trigger.get("response_schema"),
        )
        seen = await self.ledger.read(lambda db: model_rows.newest_in_scope(db, bank, scope))
        a = await self.answer(bank, q, what=what, missing_ok=True)

        def fact(kind: str, i: str, text: str) -> dict[str, Any]:
            return {"id": i, "text": text, "type": kind, "context": None}

        based_on: dict[str, list[dict[str, Any]]] = {k: [] for k in ("world", "experience", "observation", "opinion")}
        for m in a.memories:
            based_on.setdefault(m.kind or "world", []).append(fact(m.kind or "world", m.id, m.text))
        based_on["directives"] = [fact("directives", d["id"], d["content"]) for d in a.directives]
        based_on["mental-models"] = [fact("mental-models", m["id"], m["content"]) for m in a.models]
        answer = {"text": a.text, "outcome": "content_written", "based_on": based_on, "mental_models": []}
        if a.structured is not None:
            answer["structured_output"] = a.structured
        return a.text, answer, seen

    async def create_model(self, bank: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """``POST …/mental-models``: the model with its content generated, or nothing written."""
        model_id = fields.get("id") or f"mm-{uuid.uuid4().hex}"
        if await self.store.bank_row(bank) is None:
            obey(rules.check_new_bank_id, bank)  # before the LLM is paid for
        elif await model_rows.find(self.ledger, bank, model_id) is not None:
            raise model_rows.duplicate(bank, model_id)
        draft = {
            **fields,
            "id": model_id,
            "tags": list(fields.get("tags") or []),
            "max_tokens": fields.get("max_tokens", 2048),
            "trigger": {**model_rows.TRIGGER_DEFAULTS, **(fields.get("trigger") or {})},
        }
        content, answer, seen = await self._generate(bank, draft, "The mental model's content")
        return await model_rows.create(self.ledger, bank, draft, content, answer, seen)

    async def refresh_model(self, bank: str, model_id: str) -> dict[str, Any]:
        """``POST …/mental-models/{id}/refresh``, run before the answer: the operation is done."""
        model = await model_rows.find(self.ledger, bank, model_id)
        if model is None:
            raise StoreError(404, f"Mental model {model_id} not found in bank {bank}")
        content, answer, seen = await self._generate(bank, model, "The mental model's refresh")
        operation_id = await model_rows.refresh(self.ledger, bank, model_id, content, answer, seen)
        return {"operation_id": operation_id, "status": "completed"}
