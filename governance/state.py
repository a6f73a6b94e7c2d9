"""What the app shares across requests, built by the lifespan."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memwarden.backends.base import MemoryBackend, PassThrough
from memwarden.db.database import Database
from memwarden.governance.locks import BankLocks
from memwarden.policies.labels import TOPIC_ALIASES, LabelClassifier
from memwarden.policies.pipeline import Pipeline
from memwarden.policies.quality import QualityFilter
from memwarden.policies.quality_rules import Rule
from memwarden.settings import GovernanceSettings, Settings

if TYPE_CHECKING:  # the self-hosted store (and its vector stack) is imported only when it serves
    from memwarden.store.local import LocalStore


def build_pipeline(governance: GovernanceSettings) -> Pipeline:
    """The policies of this deployment, with the config file's extensions."""
    extra = [Rule(r.id, r.reason, tuple(r.patterns), overridable=r.overridable) for r in governance.extra_rules]
    quality = QualityFilter(
        min_length=governance.min_length,
        max_length=governance.max_length,
        extra_rules=extra,
        disabled=governance.disabled_rules,
    )
    labels = LabelClassifier(
        topic_aliases={**TOPIC_ALIASES, **governance.topic_aliases}, extra_keywords=governance.topic_keywords
    )
    return Pipeline(quality=quality, labels=labels, tag_separator=governance.tag_separator)


@dataclass
class AppState:
    settings: Settings
    backend: PassThrough  # raw pass-through and health
    memory: MemoryBackend  # governance's calls: Hindsight behind its retries, or the store called directly
    read_retries: int
    pipeline: Pipeline
    ledger: Database
    local: LocalStore | None = None  # the self-hosted store, when memwarden is the memory server
    bank_locks: BankLocks = field(default_factory=BankLocks)  # config changes: one at a time per bank
    seeded: set[str] = field(default_factory=set)  # banks whose missions were seeded (or are being)
    seed_retry_at: dict[str, float] = field(default_factory=dict)  # bank → when seeding may be retried
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background; the lifespan waits for it (briefly) at shutdown."""
        task = asyncio.get_running_loop().create_task(work)
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
