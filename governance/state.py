"""What the app shares across requests, built by the lifespan."""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from memwarden.backends.base import MemoryBackend, PassThrough
from memwarden.db.database import Database
from memwarden.governance.archive import Archiver
from memwarden.governance.background import Background
from memwarden.governance.config_changes import ConfigChanges
from memwarden.governance.curation import Curator
from memwarden.governance.deletions import Deletions
from memwarden.governance.erase import Eraser
from memwarden.governance.keys import KeyRing, is_loopback
from memwarden.governance.locks import BankGates, BankLocks
from memwarden.governance.outbox import Outbox
from memwarden.governance.plans import Plans
from memwarden.governance.reports import Reports
from memwarden.governance.retain import Retainer
from memwarden.governance.retention import Retention
from memwarden.governance.review import Review
from memwarden.governance.turns import LastTurns
from memwarden.metrics import Metrics
from memwarden.policies.labels import TOPIC_ALIASES, LabelClassifier
from memwarden.policies.pipeline import Pipeline
from memwarden.policies.quality import QualityFilter
from memwarden.policies.quality_rules import Rule
from memwarden.policies.tag_query import LabelSpace
from memwarden.policies.vocabulary import STAGES, TOPICS, Entry
from memwarden.settings import GovernanceSettings, LabelsSettings, Settings

if TYPE_CHECKING:  # the self-hosted store (and its vector stack) is imported only when it serves
    from memwarden.backends.llm import ChatClient
    from memwarden.policies.learned import LearnedLayer


MODEL_FILE = "learned_model.json"  # in memwarden.policies: scripts/train_learned.py writes it


def vocabulary(labels: LabelsSettings) -> tuple[dict[str, Entry], dict[str, Entry]]:
    """The topics and stages in force: the built-in ones, then the config's (added or redefined)."""
    topics = {**TOPICS, **{k: Entry(v.description, tuple(v.examples)) for k, v in labels.topics.items()}}
    stages = {**STAGES, **{k: Entry(v.description, tuple(v.examples)) for k, v in labels.stages.items()}}
    return topics, stages


def learned_layer(labels: LabelsSettings, embedder: Any) -> LearnedLayer | None:
    """The learned layer over ``embedder`` (an object with ``name`` and ``passages``), or None —
    switched off, no embedder, or one the model was not trained for (the rules alone decide)."""
    if labels.learned == "off" or embedder is None:
        return None
    from memwarden.policies.learned import LearnedLayer, Model

    model = Model.loads((resources.files("memwarden.policies") / MODEL_FILE).read_text(encoding="utf-8"))
    if getattr(embedder, "name", None) != model.embedder:
        return None
    topics, stages = vocabulary(labels)
    # Each text on its own where the embedder can (its vector then does not depend on the rest of
    # the request): the same item gets the same labels however it is sent.
    embed = getattr(embedder, "passages_each", embedder.passages)
    return LearnedLayer(model, embed, topics=topics, stages=stages)


def build_pipeline(
    governance: GovernanceSettings,
    labels: LabelsSettings | None = None,
    embedder: Any = None,
    *,
    hash_key: bytes | None = None,
) -> Pipeline:
    """The policies of this deployment, with the config file's extensions; the learned layer when
    ``embedder`` is the one its model was trained for; rejected items' hashes keyed with
    ``hash_key`` (the installation's key)."""
    labels = labels or LabelsSettings()  # type: ignore[call-arg]
    topics, stages = vocabulary(labels)
    extra = [Rule(r.id, r.reason, tuple(r.patterns), overridable=r.overridable) for r in governance.extra_rules]
    quality = QualityFilter(
        min_length=governance.min_length,
        extra_rules=extra,
        disabled=governance.disabled_rules,
    )
    classifier = LabelClassifier(
        topics=tuple(topics),
        stages=tuple(stages),
        topic_aliases={**TOPIC_ALIASES, **governance.topic_aliases},
        extra_keywords=governance.topic_keywords,
    )
    return Pipeline(
        quality=quality,
        labels=classifier,
        tag_separator=governance.tag_separator,
        learned=learned_layer(labels, embedder),
        embed_budget=labels.embed_budget,
        hash_key=hash_key,
    )


@dataclass
class AppState:
    """The app's composition: the shared pieces (settings, backend, ledger, policies, gates,
    metrics …) and the governance services built from them once, each given only what it needs
    (the :class:`Outbox` only when ``queue_writes``). A service never takes this object; a front
    reads the services it calls from it."""

    settings: Settings
    backend: PassThrough  # raw pass-through and health
    memory: MemoryBackend  # governance's calls: Hindsight behind its retries, or the store called directly
    read_retries: int
    pipeline: Pipeline
    ledger: Database
    bank_locks: BankLocks = field(default_factory=BankLocks)  # config changes: one at a time per bank
    gates: BankGates = field(default_factory=BankGates)  # governed writes wait for a guarded change
    background: Background = field(default_factory=Background)  # memwarden's own work, waited for at shutdown
    label_space: LabelSpace | None = None  # the labels a client's tag filter must not see
    metrics: Metrics = field(default_factory=Metrics)
    chat: ChatClient | None = None  # the [llm] model, when configured (reflect; Mem0's fact extraction)
    turns: LastTurns = field(default_factory=LastTurns)  # each conversation's last question, a while
    queue_writes: InitVar[bool] = False  # in front of a backend: accepted writes wait in the outbox
    keys: KeyRing = field(init=False)  # the API keys, in memory
    # The governance services, composed in __post_init__:
    review: Review = field(init=False)
    outbox: Outbox | None = field(init=False)  # accepted writes waiting for the backend
    retain: Retainer = field(init=False)
    archiver: Archiver = field(init=False)
    eraser: Eraser = field(init=False)
    curator: Curator = field(init=False)
    deletions: Deletions = field(init=False)
    reports: Reports = field(init=False)
    retention: Retention = field(init=False)
    plans: Plans = field(init=False)
    config: ConfigChanges = field(init=False)

    def __post_init__(self, queue_writes: bool) -> None:
        settings, server = self.settings, self.settings.server
        write_wait = settings.config_guard.write_wait
        if self.ledger.url is not None:  # other instances on the database: the gates hold across them
            from memwarden.db.bank_locks import SharedBankLocks

            pool = settings.database.pool_size
            self.gates = BankGates(SharedBankLocks(self.ledger.url, max_size=pool))
            # Config changes and destructive operations: a pool of their own (a long one must not
            # take the governed writes' connections).
            serial = SharedBankLocks(
                self.ledger.url, max_size=max(2, pool // 4), holders="config changes and destructive operations"
            )
            self.bank_locks = BankLocks(serial)
        self.review = Review(self.ledger, self.memory)
        self.outbox = (
            Outbox(
                self.ledger, self.memory, self.review, self.gates, self.metrics, settings.outbox, write_wait=write_wait
            )
            if queue_writes
            else None
        )
        self.retain = Retainer(
            self.ledger,
            self.pipeline,
            settings.governance,
            self.gates,
            write_wait,
            self.review,
            self.outbox,
            self.metrics,
            self.turns,
        )
        guard = settings.config_guard
        self.archiver = Archiver(self.ledger, self.memory, self.bank_locks)
        self.eraser = Eraser(self.ledger, self.memory, self.bank_locks)
        self.curator = Curator(
            self.ledger, self.memory, self.bank_locks, self.pipeline.labels, settings.governance.tag_separator
        )
        self.deletions = Deletions(self.ledger, self.memory, guard.inventory_page)
        self.reports = Reports(self.ledger, self.memory, self.pipeline, settings.retention, self.outbox)
        self.retention = Retention(
            self.ledger, self.bank_locks, settings.retention, guard.restore_days, self.archiver, self.eraser
        )
        self.plans = Plans(self.ledger, self.bank_locks, settings.plans, self.archiver, self.review)
        self.config = ConfigChanges(
            self.ledger, self.memory, settings, self.bank_locks, self.gates, self.metrics, self.background.spawn
        )
        self.keys = KeyRing(self.ledger, exposed=not is_loopback(server.host) and not server.allow_unauthenticated)
        if self.label_space is None:
            labels = self.pipeline.labels
            self.label_space = LabelSpace.of(labels.topics, labels.stages, self.settings.governance.tag_separator)
