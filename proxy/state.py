"""What the app shares across requests, built by the lifespan."""

from __future__ import annotations

from dataclasses import dataclass

from backends.base import MemoryBackend
from backends.hindsight import HindsightBackend
from policies.labels import TOPIC_ALIASES, LabelClassifier
from policies.pipeline import Pipeline
from policies.quality import QualityFilter
from policies.quality_rules import Rule
from proxy.ledger import Ledger
from proxy.settings import GovernanceSettings, Settings


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
    backend: HindsightBackend  # raw pass-through and health
    memory: MemoryBackend  # JSON calls of the governed routes: the backend behind its wrappers
    read_retries: int
    pipeline: Pipeline
    ledger: Ledger
