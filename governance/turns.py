"""The turn before: what a conversation's last retained turn asked, kept a while in memory.

An agent that retains a conversation turn by turn (every Mem0 ``add``; many Hindsight agents after
each message) sends "27" in one request and "how old r u" in the one before it. Alone, "27" is too
short to be a memory; after its question it is a fact (``policies/facts_answer.py``). This keeps,
for each conversation, the question its last turn ended with — only a question that asks for a fact,
secrets already masked, its last 300 characters — so that the next retain can be judged after it.

A conversation is a bank and what the front knows of the thread: the Hindsight front's
``document_id`` (or none: then every item of the bank is one conversation), the Mem0 front's user,
agent, app and run ids. Held in this process's memory only — gone at a restart, not shared between
instances; a kept answer carries its question's sentence to the ledger and the backend as its
context, nothing else of it is written — bounded in entries (the conversation whose last turn is
oldest dropped first) and in age (a reply comes within the hour or is read alone). Two requests of
one conversation in flight together may each be read after the turn before both: a client that
waits for each answer, as chat agents do, sees its turns in order. A request's items follow one
another: an item's turn before is the previous item of the same conversation in the request, else
the one remembered."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

from memwarden.policies.facts_answer import QUESTION_TAIL, fact_question

MAX_CONVERSATIONS = 10_000
MAX_AGE = 3600.0  # seconds

Thread = tuple[str, Hashable]  # (bank, the front's conversation key)


class LastTurns:
    """The last question of each recent conversation (thread-safe: judging runs off the loop)."""

    def __init__(
        self,
        size: int = MAX_CONVERSATIONS,
        max_age: float = MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._asked: OrderedDict[Thread, tuple[float, str]] = OrderedDict()
        self._size = size
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Conversations held (an expired one until it is read or pushed out)."""
        return len(self._asked)

    def question(self, thread: Thread) -> str | None:
        """The question the conversation's last turn asked, if it asked one within the hour."""
        with self._lock:
            found = self._asked.get(thread)
            if found is None:
                return None
            at, text = found
            if self._clock() - at > self._max_age:
                del self._asked[thread]
                return None
            return text

    def follow(self, thread: Thread, turn: str) -> None:
        """``turn`` (secrets masked) was the conversation's latest: remember its question, or forget
        the one before (a reply answers the turn just before it, not one three turns back)."""
        asked = fact_question(turn)
        with self._lock:
            if asked is None:
                self._asked.pop(thread, None)
                return
            self._asked[thread] = (self._clock(), turn[-QUESTION_TAIL:])
            self._asked.move_to_end(thread)
            while len(self._asked) > self._size:
                self._asked.popitem(last=False)

    def before(self, threads: Sequence[Thread | None], texts: Sequence[str | None]) -> list[str | None]:
        """Each item's turn before, for a request of items in order (``threads``: each one's
        conversation, None for an item outside any)."""
        latest: dict[Thread, str | None] = {}
        out: list[str | None] = []
        for thread, text in zip(threads, texts, strict=True):
            if thread is None:
                out.append(None)
                continue
            out.append(latest[thread] if thread in latest else self.question(thread))
            latest[thread] = text
        return out
