"""What the retain pipeline says of an item: its :class:`Judgement` (and each segment's
:class:`SegmentVerdict`), the verdicts, and the text of a content that may be a block list. The
types every layer above the policies reads; :mod:`memwarden.policies.pipeline` makes them."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from memwarden.policies.topic_keys import Cardinality

Verdict = Literal["store", "redact", "reject", "duplicate", "review"]
SecretsMode = Literal["reject", "redact"]
Forward = Literal["whole", "trim"]


class SegmentVerdict(NamedTuple):
    """One segment of an item and what the rules said of it: offsets into the item's text as judged
    (stripped, secrets masked, a block list's text blocks joined by line breaks), and the
    segment's ``text`` — never in :meth:`summary`, which a client and the audit see."""

    start: int
    end: int
    speaker: str | None
    keep: bool
    rule: str
    text: str = ""

    def summary(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "speaker": self.speaker, "keep": self.keep, "rule": self.rule}


class Threat(NamedTuple):
    """Instructions aimed at the agent found in an item (:mod:`memwarden.policies.injection`): the
    item's severity, the rules that found them, the fields they were in (``content``, ``context``,
    ``metadata.source`` …), and what the bank's policy did (:mod:`memwarden.policies.defense`)."""

    severity: str  # low | medium | high
    rules: tuple[str, ...]
    fields: tuple[str, ...] = ("content",)
    action: str = "allow"  # allow | tag | quarantine | block

    def summary(self) -> dict[str, Any]:
        rules, fields = list(self.rules), list(self.fields)
        return {"severity": self.severity, "rules": rules, "fields": fields, "action": self.action}


ACCEPTED: frozenset[str] = frozenset({"store", "redact", "duplicate"})
FORWARDED: frozenset[str] = frozenset({"store", "redact"})


class Judgement(NamedTuple):
    """The decision about one item. ``text`` is what would be stored (secrets masked).

    A named tuple rather than a frozen dataclass: as immutable, and built 4x faster, which counts
    on a path that runs for every item (``bench/policy_throughput.py``)."""

    position: int  # the item's index in the request ("index" in the client-facing summary)
    verdict: Verdict
    rule: str
    reason: str
    text: str = ""
    content_hash: str = ""
    topic: str | None = None
    stage: str | None = None
    topic_key: str | None = None
    cardinality: Cardinality | None = None
    tags: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()  # kinds found
    confidence: float = 0.0
    non_text_blocks: int = 0
    existing_id: str | None = None  # the duplicate's original / the conflicting memory
    supersedes: str | None = None
    segments: tuple[SegmentVerdict, ...] = ()  # an item of more than one segment: each one's verdict
    trimmed: bool = False  # ``text`` is the item without its noise segments
    vector: Any = None  # the learned layer's embedding of ``text`` (an item of one segment), for the store
    question: str | None = None  # kept as the reply to this question (the turn before's, secrets masked)
    threat: Threat | None = None  # instructions aimed at the agent, found in its text (or fields)

    @property
    def noise(self) -> list[dict[str, Any]]:
        """The noise segments of a kept item: where they are and which rule said so (with
        ``trimmed``, those of the turns or paragraphs that were all noise left the stored text)."""
        if self.verdict == "reject":
            return []
        return [s.summary() for s in self.segments if not s.keep]

    def summary(self) -> dict[str, Any]:
        """The verbose, client-facing view (never the text: it may be what was refused)."""
        out: dict[str, Any] = {
            "index": self.position,
            "verdict": self.verdict,
            "rule": self.rule,
            "reason": self.reason,
            "topic": self.topic,
            "stage": self.stage,
            "topic_key": self.topic_key,
            "content_hash": self.content_hash or None,
        }
        if self.existing_id:
            out["existing_id"] = self.existing_id
        if self.supersedes:
            out["supersedes"] = self.supersedes
        if self.secrets:
            out["secrets"] = list(self.secrets)
        if self.segments:
            out["segments"] = [s.summary() for s in self.segments]
            out["trimmed"] = self.trimmed
        if self.threat is not None:
            out["injection"] = self.threat.summary()
        return out


def extract_text(content: Any) -> tuple[str, int]:
    """The text of ``content`` (a string or a list of blocks) and how many non-text blocks it had."""
    if isinstance(content, str):
        return content, 0
    texts, other = [], 0
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            other += 1
    return "\n".join(texts), other
