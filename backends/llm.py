"""An OpenAI-compatible chat-completions endpoint: the LLM the self-hosted store's reflect asks.

One call, ``POST {base_url}/chat/completions``, with the messages, JSON mode
(``response_format: json_object``, as Hindsight's own ``openai`` provider sends it) and the key as
``Authorization: Bearer``. Like a backend adapter it translates and does nothing else: the answer's
text and token usage out, failures as :class:`LLMError`. It receives its ``httpx.AsyncClient``.

The key never appears in an error's message (an endpoint that echoes it back gets it masked), so
what reaches a log, an audit event or a client is safe to show.

Exceptions::

    LLMError            unreachable, an HTTP error, an answer without text
    └── LLMTimeout      no complete answer within the timeout (connecting, waiting and reading)
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import httpx


class LLMError(Exception):
    """The LLM failed; the message says how, without the key."""


class LLMTimeout(LLMError):
    """The LLM did not answer in time."""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts, named as Hindsight's ``TokenUsage`` names them."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    thoughts_tokens: int = 0

    def as_json(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cached_tokens": self.cached_tokens,
            "thoughts_tokens": self.thoughts_tokens,
        }


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    usage: Usage
    duration_ms: int


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def read_usage(usage: Any) -> Usage:
    """OpenAI's ``usage`` object (missing or partial: zeros)."""
    if not isinstance(usage, Mapping):
        return Usage()
    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    inputs, outputs = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        total_tokens=_count(usage.get("total_tokens")) or inputs + outputs,
        cached_tokens=_count(prompt.get("cached_tokens")) if isinstance(prompt, Mapping) else 0,
        thoughts_tokens=_count(completion.get("reasoning_tokens")) if isinstance(completion, Mapping) else 0,
    )


class ChatClient:
    """Chat completions at ``base_url`` with ``model``; ``timeout`` bounds a whole call."""

    def __init__(
        self, client: httpx.AsyncClient, *, base_url: str, model: str, api_key: str | None, timeout: float
    ) -> None:
        self._client = client
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout = timeout
        self._key = api_key or None
        self._headers = {"authorization": f"Bearer {api_key}"} if api_key else {}

    def _mask(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    async def complete(self, messages: Sequence[Mapping[str, str]], *, json_mode: bool = True) -> Completion:
        """The model's answer to ``messages``. Raises :class:`LLMTimeout` past the timeout and
        :class:`LLMError` on any other failure."""
        body: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages]}
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.timeout):  # the whole call: a trickling answer counts too
                response = await self._client.post(self.url, json=body, headers=self._headers)
        except (TimeoutError, httpx.TimeoutException):
            raise LLMTimeout(f"the LLM did not answer within {self.timeout:g} s (llm.timeout)") from None
        except httpx.HTTPError as exc:
            raise LLMError(
                self._mask(f"the LLM at {self.url} cannot be reached: {type(exc).__name__}: {exc}")
            ) from None
        duration_ms = round((time.perf_counter() - started) * 1000)
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if response.status_code >= 400:
            raise LLMError(self._mask(f"the LLM answered {response.status_code}: {_error_text(answer, response)}"))
        try:
            text = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str) or not text.strip():
            raise LLMError("the LLM's answer holds no text (choices[0].message.content)")
        return Completion(text, read_usage(answer.get("usage")), duration_ms)


def _error_text(answer: Any, response: httpx.Response) -> str:
    """The endpoint's own words for its failure (OpenAI's ``{"error": {"message"}}``), shortened."""
    if isinstance(answer, Mapping):
        error = answer.get("error")
        message = error.get("message") if isinstance(error, Mapping) else error
        if isinstance(message, str) and message:
            return message[:300]
    return response.text[:300] or response.reason_phrase
