"""``POST /warden/v1/banks/{bank}/explain``: a recall with every candidate, its ranks, its scores,
and why it was kept or excluded."""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendError, self_hosted
from memwarden.backends.hindsight_json import recall_query_from_json
from memwarden.fronts.errors import backend_failed, refused_for_secrets
from memwarden.governance import reads
from memwarden.governance.state import AppState
from memwarden.policies.tag_query import TagQueryError, normalize_request
from memwarden.policies.tagfilter import TagFilterError
from memwarden.store.errors import StoreError
from memwarden.wire.asgi import read_json, send_json

WITHHELD = "withheld: its document holds only memories memwarden archived, superseded or rejected"


async def explain(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST /warden/v1/banks/{bank}/explain``: one recall, white-box.

    The body is a recall body. The answer: the tag filter as sent and as expanded; the query
    vector's head, the full-text query, each retriever's candidate count and every candidate with
    its ranks and semantic / keyword / fused scores, returned or excluded and why (status, type,
    tag filter, the max_tokens budget, memwarden's ledger). In the self-hosted store all of it is
    memwarden's own; in front of Hindsight the candidates are what Hindsight returned, its
    ``trace`` is passed on as ``backend_trace``, and memwarden's own exclusions are added."""
    bank: str = scope["path_params"]["bank_id"]
    got = await read_json(scope, receive, send)
    if got is None:
        return
    _, payload = got
    if await refused_for_secrets(state, scope, send, payload):  # as recall: in front of a backend the query goes to it
        return
    own = self_hosted(state.memory)
    try:
        if own is not None:
            from memwarden.store.server.app import recall_request  # the store's stack: only when it serves

            payload = recall_request(payload)
        elif not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
            raise StoreError(422, [{"type": "missing", "loc": ["body", "query"], "msg": "Field required"}])
        body, normalized = normalize_request(payload, state.label_space)
    except StoreError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    except TagQueryError as exc:
        await send_json(send, 400, {"detail": str(exc)})
        return
    filters = ("tags", "tags_match", "tag_groups")
    account: dict[str, Any] = {
        "bank_id": bank,
        "query": body["query"],
        "tag_filter": {
            "sent": {k: payload[k] for k in filters if payload.get(k) is not None},
            "expanded": {k: body[k] for k in filters if body.get(k) is not None},
            "normalized": normalized,
        },
    }
    try:
        if own is not None:
            account.update(await own.explain(bank, recall_query_from_json(body)))
        else:
            account.update(await _explain_backend(state, bank, body))
    except StoreError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    except TagFilterError as exc:
        await send_json(send, 400, {"detail": f"Invalid tag_groups: {exc}"})
        return
    except BackendError as exc:
        await backend_failed(send, scope, exc)
        return
    candidates: list[dict[str, Any]] = account["candidates"]
    documents = [c["document_id"] for c in candidates if c["outcome"] == "returned" and c.get("document_id")]
    withheld = await reads.withheld(state.ledger, bank, documents)
    for c in candidates:
        if c["outcome"] == "returned" and c.get("document_id") in withheld:
            c["outcome"], c["reason"] = "excluded", WITHHELD
    reasons: dict[str, int] = {}
    for c in candidates:
        if c["outcome"] == "excluded":
            key = str(c["reason"]).split(" (")[0]
            reasons[key] = reasons.get(key, 0) + 1
    account["summary"] = {
        "candidates": len(candidates),
        "returned": sum(1 for c in candidates if c["outcome"] == "returned"),
        "excluded": reasons,
    }
    await send_json(send, 200, account)


async def _explain_backend(state: AppState, bank: str, body: dict[str, Any]) -> dict[str, Any]:
    recalled = await state.memory.recall(bank, recall_query_from_json({**body, "trace": True}))
    candidates = []
    for n, m in enumerate(recalled.memories, 1):
        scores = m.extra.get("scores")
        scores = scores if isinstance(scores, dict) else {}
        candidates.append(
            {
                "id": m.id,
                "text": m.text,
                "document_id": m.document_id,
                "tags": list(m.tags),
                "type": m.kind,
                "semantic": {"rank": None, "score": scores.get("semantic")},
                "keyword": {"rank": None, "score": scores.get("keyword")},
                "fused": scores.get("final"),
                "rank": n,
                "outcome": "returned",
                "reason": None,
            }
        )
    return {
        "backend": state.memory.kind,
        "embedder": None,
        "query_vector_head": None,
        "note": f"{state.memory.kind} embeds the query itself and does not return the vector; the candidates are"
        " the results it returned (its exclusions are in backend_trace), plus memwarden's own",
        "arms": None,
        "backend_trace": recalled.trace,
        "candidates": candidates,
    }
