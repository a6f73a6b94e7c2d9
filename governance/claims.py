"""Each writer's recent claims, for the corroboration-flood check (``policies/floods.py``): in
memory, per bank and writer, for :data:`WINDOW` seconds. Thread-safe (judging runs off the loop).
One instance's view: instances sharing a database do not share it (a flood spread over several
instances behind a load balancer is seen by each in part)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence

from memwarden.policies.floods import Claim

WINDOW = 600.0  # seconds: claims older than this are forgotten
PER_WRITER = 256  # claims kept per bank and writer (the most recent)
WRITERS = 10_000  # banks × writers held (the least recently seen go first)

Writer = tuple[str, str]  # (bank, writer)


class RecentClaims:
    def __init__(
        self, window: float = WINDOW, clock: Callable[[], float] = time.monotonic, writers: int = WRITERS
    ) -> None:
        self._held: OrderedDict[Writer, deque[tuple[float, Claim]]] = OrderedDict()
        self._window, self._clock, self._writers = window, clock, writers
        self._lock = threading.Lock()

    def recent(self, bank: str, writer: str) -> list[Claim]:
        """The writer's claims within the window, oldest first."""
        with self._lock:
            held = self._held.get((bank, writer))
            if held is None:
                return []
            cutoff = self._clock() - self._window
            while held and held[0][0] < cutoff:
                held.popleft()
            return [c for _, c in held]

    def follow(self, bank: str, writer: str, claims: Sequence[Claim]) -> None:
        """The writer's new claims, written (or shadowed): remembered for the window."""
        if not claims:
            return
        now = self._clock()
        with self._lock:
            held = self._held.get((bank, writer))
            if held is None:
                held = self._held[(bank, writer)] = deque(maxlen=PER_WRITER)
                while len(self._held) > self._writers:
                    self._held.popitem(last=False)
            else:
                self._held.move_to_end((bank, writer))
            held.extend((now, c) for c in claims)
