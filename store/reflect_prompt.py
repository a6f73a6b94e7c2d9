"""What reflect tells the LLM, and what it reads back: pure functions, no I/O.

The system message holds the rules, the bank's mission and the directives in force (Hindsight's
"DIRECTIVES (MANDATORY)"); the user message the question and the evidence as JSON — memories and
mental models with their ids — so that text from a memory can never pass for the prompt's own
structure. The model answers with one JSON object: ``answer`` (Markdown), ``memory_ids`` and
``mental_model_ids`` (what it used), and ``structured_output`` when a response schema was given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memwarden.backends.types import Memory

MARKER = "memwarden reflect"  # names the prompt in the LLM's logs (and lets the test stand-in spot it)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def memory_json(m: Memory) -> dict[str, Any]:
    """A memory as the LLM reads it (empty fields left out)."""
    fields = {
        "id": m.id,
        "text": m.text,
        "type": m.kind,
        "context": m.context,
        "mentioned_at": m.mentioned_at,
        "occurred_start": m.occurred_start,
        "occurred_end": m.occurred_end,
        "tags": list(m.tags),
    }
    return {k: v for k, v in fields.items() if v not in (None, "", [])}


def messages(
    query: str,
    memories: Sequence[Memory],
    models: Sequence[Mapping[str, Any]],
    directives: Sequence[Mapping[str, Any]],
    *,
    mission: str,
    max_tokens: int,
    response_schema: Mapping[str, Any] | None,
) -> list[dict[str, str]]:
    """The chat messages of one reflect."""
    system = [
        f"You answer a question from the memories of a memory bank ({MARKER}).",
        "Use only the memories and mental models in the user message: never invent names, events, dates or"
        " numbers. When they do not answer the question, say what they do record and that the rest is not"
        " recorded. When two memories conflict, the later mentioned_at wins.",
    ]
    if mission.strip():
        system.append(f"## The bank's mission\n{mission.strip()}")
    if directives:
        rules = "\n".join(f"- **{d['name']}**: {d['content']}" for d in directives)
        system.append(
            "## DIRECTIVES (MANDATORY)\nHard rules: follow every one of them in the answer, without commenting"
            f" on them. They take precedence over everything else here.\n{rules}"
        )
    shape = (
        '{"answer": "<the answer in Markdown, in the language of the question unless a directive says otherwise>",'
        ' "memory_ids": ["<the id of each memory the answer uses>"],'
        ' "mental_model_ids": ["<the id of each mental model the answer uses>"]'
    )
    if response_schema is not None:
        shape += ', "structured_output": <the answer as an object that follows response_schema>'
    system.append(
        f"## Output\nReply with one JSON object and nothing else:\n{shape}}}\n"
        "Never write ids in the answer text. The answer must stand on its own: the reader cannot reply."
        f" Keep it under about {max(max_tokens, 1)} tokens."
    )
    evidence: dict[str, Any] = {
        "memories": [memory_json(m) for m in memories],
        "mental_models": [{"id": x["id"], "name": x["name"], "content": x["content"]} for x in models],
    }
    if response_schema is not None:
        evidence["response_schema"] = response_schema
    user = f"## Question\n{query}\n\n## Evidence (JSON)\n{json.dumps(evidence, ensure_ascii=False)}"
    return [{"role": "system", "content": "\n\n".join(system)}, {"role": "user", "content": user}]


@dataclass(frozen=True)
class Reply:
    """The LLM's answer, read: its text (None: it gave none), the ids it cited (unchecked; None: it
    gave no list) and its structured output (None: none)."""

    answer: str | None
    memory_ids: list[str] | None
    model_ids: list[str] | None
    structured: dict[str, Any] | None


def _ids(value: Any) -> list[str] | None:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None


def read_reply(text: str) -> Reply:
    """Read the model's JSON answer; an answer that is not JSON is taken as the answer's text (a
    model that ignored JSON mode), with no list of what it used."""
    fenced = _FENCE.match(text)
    try:
        found = json.loads(fenced.group(1) if fenced else text)
    except ValueError:
        return Reply(text.strip() or None, None, None, None)
    if not isinstance(found, dict):
        return Reply(None, None, None, None)
    answer = found.get("answer")
    structured = found.get("structured_output")
    return Reply(
        answer.strip() if isinstance(answer, str) and answer.strip() else None,
        _ids(found.get("memory_ids")),
        _ids(found.get("mental_model_ids")),
        structured if isinstance(structured, dict) else None,
    )


def cited(given: Sequence[str], named: Sequence[str] | None) -> list[str]:
    """Of the ids ``given`` to the model, those it ``named``, in the order given. A model that gave
    no list is taken to have used all of them (Hindsight's rule when its agent declares no ids);
    an empty list, or ids of nothing it was given, is none."""
    if named is None:
        return list(given)
    chosen = set(named)
    return [i for i in given if i in chosen]
