"""Facts taken from a conversation by the configured LLM (``[llm]``): the Mem0 front's ``infer``.

One chat call in JSON mode; the model is asked for the durable facts, one statement each. What it
answers is only a proposal: every fact is then judged like any other item (governance/retain.py),
so a model that returns a question or a greeting as a "fact" gets it rejected as noise.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memwarden.backends.llm import ChatClient, LLMError

MAX_FACTS = 50
SYSTEM = (
    "You extract the durable facts worth remembering from a conversation between a user and an assistant:"
    " preferences, decisions and their reasons, names, settings and their values, people and roles."
    " One fact per statement, each stated on its own (who, what, which value). Skip questions, requests,"
    ' greetings, thanks and progress chatter. Answer JSON: {"facts": ["...", ...]} (an empty list when'
    " there is nothing worth remembering)."
)


def _fact_text(fact: Any) -> str | None:
    if isinstance(fact, str):
        return fact.strip() or None
    if isinstance(fact, dict):  # {"what": ...}, {"text": ...}, {"fact": ...}
        for key in ("fact", "text", "what", "memory"):
            value = fact.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


async def extract_facts(chat: ChatClient, transcript: str) -> list[str]:
    """The facts the model finds in ``transcript`` (``role: content`` lines), at most
    :data:`MAX_FACTS`, duplicates dropped. Raises :class:`LLMError` (its timeout included) when the
    model fails or answers something that is not the JSON asked for."""
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Extract the facts from this conversation.\nContent:\n{transcript}"},
    ]
    completion = await chat.complete(messages, json_mode=True)
    try:
        answer = json.loads(completion.text)
    except ValueError:
        raise LLMError("the LLM's answer is not JSON") from None
    facts = answer.get("facts") if isinstance(answer, dict) else None
    if not isinstance(facts, list):
        raise LLMError('the LLM\'s answer holds no "facts" list')
    found: Sequence[str | None] = [_fact_text(f) for f in facts]
    return list(dict.fromkeys(f for f in found if f))[:MAX_FACTS]
