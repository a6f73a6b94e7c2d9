"""The ``[governance]`` section: the write pipeline's modes, limits, rules and per-bank overrides,
and what a bank does with instructions planted in memory (``[governance.injection]``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from memwarden.settings.sections import _Section

Mode = Literal["enforce", "shadow", "off"]
SecretsMode = Literal["reject", "redact"]
Segments = Literal["whole", "trim"]


InjectionAction = Literal["allow", "tag", "quarantine", "block"]


class InjectionSettings(_Section):
    """What a bank does with an item that holds instructions aimed at the agent, by the finding's
    severity: allow (store, the finding audited), tag (store with the tag injection:<severity>),
    quarantine (hold in the review queue: not delivered, not recalled), block (refuse the write)."""

    low: InjectionAction = Field("allow", description="Quoted or discussed attacks, the user's own affairs.")
    medium: InjectionAction = Field("tag", description="One signal: a claimed authority, words to the agent ….")
    high: InjectionAction = Field("quarantine", description="An override, role markup, hidden orders, exfiltration ….")

    def actions(self) -> dict[str, InjectionAction]:
        return {"low": self.low, "medium": self.medium, "high": self.high}


class BankGovernance(_Section):
    """Per-bank overrides of the governance modes (unset: the global value applies)."""

    mode: Mode | None = Field(None, description="enforce | shadow | off for this bank.")
    secrets: SecretsMode | None = Field(None, description="reject | redact for this bank.")
    segments: Segments | None = Field(None, description="whole | trim for this bank.")
    injection: InjectionSettings | None = Field(None, description="The actions by severity for this bank.")
    protected_tags: list[str] | None = Field(
        None,
        description="Tags only an admin key may write to this bank: a key (source) or an exact tag (verified:true).",
    )


class QualityRuleSettings(_Section):
    id: str = Field(description="Stable rule id, e.g. custom.jira.")
    reason: str = Field(description="Why matching items are rejected.")
    patterns: list[str] = Field(min_length=1, description="Regular expressions (searched in casefolded text).")
    overridable: bool = Field(False, description="Yield to allow markers (decision, root cause, ...).")

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, v: list[str]) -> list[str]:
        import re

        for pattern in v:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from None
        return v


class GovernanceSettings(_Section):
    """The write pipeline."""

    mode: Mode = Field("enforce", description="enforce: filter and store; shadow: decide, audit, forward all; off.")
    secrets: SecretsMode = Field("reject", description="reject items with secrets, or redact the secret and go on.")
    tag_separator: Literal[":", "="] = Field(":", description="Canonical tag form key:value (or key=value).")
    segments: Segments = Field(
        "whole",
        description="What a kept item of several segments sends on: whole (as sent), trim (without its noise"
        " segments, speaker labels and order kept).",
    )
    min_length: int = Field(8, ge=0, description="Shortest segment worth keeping, in characters (CJK count double).")
    max_length: int = Field(
        1_000_000, gt=0, description="Longest item's text, in characters (longer: 413; length alone never rejects)."
    )
    max_items: int = Field(1000, gt=0, description="Most items in one retain request (more: 413).")
    max_request_chars: int = Field(
        1_000_000,
        gt=0,
        description="Most characters of memory text in one retain request, all items together (more: 413):"
        " the work one request may ask of the judge.",
    )
    max_tags: int = Field(64, gt=0, description="Most tags on one item (more: 422).")
    disabled_rules: list[str] = Field(default_factory=list, description="Quality rule ids switched off.")
    extra_rules: list[QualityRuleSettings] = Field(default_factory=list, description="More reject rules.")
    topic_aliases: dict[str, str] = Field(default_factory=dict, description="More topic aliases (alias = topic).")
    topic_keywords: dict[str, list[str]] = Field(default_factory=dict, description="More keywords per topic.")
    allow_file_retain: bool = Field(False, description="Let /files/retain through ungoverned (default: refuse).")
    allow_mcp_retain: bool = Field(
        False, description="No longer has any effect: MCP tool calls are governed (kept so existing config files load)."
    )
    injection: InjectionSettings = Field(
        default_factory=InjectionSettings,  # type: ignore[arg-type]
        description="Instructions aimed at the agent: the action by severity.",
    )
    protected_tags: list[str] = Field(
        default_factory=list,
        description="Tags only an admin key may write: a key (source: every source:… tag) or an exact tag.",
    )
    banks: dict[str, BankGovernance] = Field(default_factory=dict, description="Per-bank mode/secrets overrides.")

    def mode_for(self, bank: str) -> Mode:
        override = self.banks.get(bank)
        return override.mode if override and override.mode else self.mode

    def secrets_for(self, bank: str) -> SecretsMode:
        override = self.banks.get(bank)
        return override.secrets if override and override.secrets else self.secrets

    def injection_for(self, bank: str) -> dict[str, InjectionAction]:
        """The actions by severity for ``bank`` (its own, else the installation's)."""
        override = self.banks.get(bank)
        return (override.injection if override and override.injection else self.injection).actions()

    def protected_tags_for(self, bank: str) -> list[str]:
        """The tags only an admin key may write to ``bank`` (its own list, else the installation's)."""
        override = self.banks.get(bank)
        return override.protected_tags if override and override.protected_tags is not None else self.protected_tags

    def segments_for(self, bank: str) -> Segments:
        """How a kept item of several segments is sent on to ``bank``."""
        override = self.banks.get(bank)
        return override.segments if override and override.segments else self.segments
