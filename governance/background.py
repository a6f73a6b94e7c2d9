"""memwarden's own background work (seeding missions, verifying a change): started, and waited for
briefly at shutdown. A service that starts some is given this, not the app."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any

from memwarden.db.audit import ACTOR


class Background:
    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background; :meth:`drain` waits for it (briefly) at shutdown. It is
        memwarden's own work: it runs in a context of its own, its audit events by the actor
        ``memwarden`` — not by the key whose request set it off."""
        context = contextvars.Context()
        context.run(ACTOR.set, "memwarden")
        task = asyncio.get_running_loop().create_task(work, context=context)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drain(self, grace: float = 5.0) -> None:
        """Let background work finish (up to ``grace`` seconds), then cancel what is left."""
        if not self.tasks:
            return
        _, pending = await asyncio.wait(set(self.tasks), timeout=grace)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
