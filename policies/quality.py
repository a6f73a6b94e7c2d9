"""The quality filter: does this text deserve to be remembered? Rule-based, no model.

Order of judgement (first that decides wins):

1. chatter ("ok", "好的", "thanks"), then length — too short (CJK characters count double: each
   carries a word); length alone never rejects a long text (the retain route's item limit answers
   413 instead, and a long item is judged segment by segment: ``policies/segments.py``);
2. structured prefixes (``active_context:``, ``偏好：`` …) are durable by construction and skip
   the noise rules — unless the value is a fragment ("偏好: 是这个");
3. reject rules in table order; an *overridable* one yields when an allow marker (decision,
   root cause, reflection, preference, conclusion) is in the text too;
4. otherwise keep, naming the allow marker that vouched for it, if any.

Every verdict carries a stable rule id and a human reason. Pure and deterministic.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memwarden.policies.facts import OVERRULING, SHORT_OVERRULING, Kind, overruling_kind, statement_kind
from memwarden.policies.facts_answer import answers
from memwarden.policies.fastre import PatternSet
from memwarden.policies.quality_allow import ALLOW_RULES
from memwarden.policies.quality_rules import CJK, REJECT_RULES, STRUCTURED_PREFIXES, Rule

_SPACE = re.compile(r"\s+")
# Rejects a statement of fact overrules: a fact told with a request, a question, a hedge or a word of
# progress beside it is still a fact ("我对青霉素过敏，请记住", "I just finished my first marathon!",
# "I'm moving to Oslo, what should I pack?"; a question alone states nothing: ``policies/facts.py``).
# Debugging residue, bare links and paths, and secret breadcrumbs are never facts.
FACT_OVERRULES = frozenset(
    {
        "question.mark",
        "conversation_note",
        "question.zh",
        "question.en",
        "request.zh",
        "request.en",
        "half_formed",
        "progress.zh",
        "progress.en",
    }
)
_FACT_REASONS: dict[Kind, str] = {
    "self": "a statement of fact about the speaker",
    "person": "a statement of fact about a person",
    "named": "a statement of fact about someone or something named",
    "elided": "a statement of fact whose subject the speaker left out",
    "thing": "a statement of fact about a thing",
    "instruction": "a standing instruction about how to answer",
    "when": "a short reply that names a day, a time or a date: an appointment or a routine",
    "plan": "a plan or a habit: something the speaker does on a day, a date or every so often",
}
_ANSWER_REASON = "a short reply that answers the question asked just before it (who, what, where, how many …)"
_CJK_CHAR = re.compile(f"[{CJK}]")


@dataclass(frozen=True)
class QualityVerdict:
    keep: bool
    rule: str
    reason: str


def prepare(text: str) -> str:
    """The form rules match against: NFKC, casefolded, whitespace collapsed, punctuation kept."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def weighted_length(text: str) -> int:
    return len(text) + len(_CJK_CHAR.findall(text))


class QualityFilter:
    """The filter with its rule tables compiled; build once, call :meth:`assess` per item."""

    def __init__(
        self,
        *,
        min_length: int = 8,
        extra_rules: Iterable[Rule] = (),
        disabled: Iterable[str] = (),
        structured_prefixes: Iterable[str] = (),
    ) -> None:
        off = set(disabled)
        # ``disabled_rules = ["allow.fact"]`` switches the statement-of-fact detector off.
        self.facts = "allow.fact" not in off
        self.min_length = min_length
        self.allow = [r for r in ALLOW_RULES if r.id not in off]
        rejects = [r for r in (*REJECT_RULES, *extra_rules) if r.id not in off]
        # Chatter is judged on the whole text, before length: "ok" is chatter, not "too short".
        self.chatter = next((r for r in rejects if r.id == "chatter"), None)
        clash = [r.id for r in rejects if r.id.startswith("label/")]
        if clash:
            raise ValueError(f"rule ids starting with 'label/' are reserved: {clash}")
        self.reject = [r for r in rejects if r.id != "chatter"]
        # All rules' literal alternatives are found in one pass; the rest stay regular expressions.
        self._groups = {r.id: list(r.patterns) for r in (*self.allow, *rejects)}
        self._patterns = PatternSet(self._groups)
        prefixes = sorted({*STRUCTURED_PREFIXES, *structured_prefixes}, key=len, reverse=True)
        self._prefix = re.compile(r"^(" + "|".join(re.escape(p) for p in prefixes) + r")\s*[:：]\s*(.*)$", re.S)

    @property
    def groups(self) -> Mapping[str, Sequence[str]]:
        """The pattern groups the rules search (named by rule id)."""
        return self._groups

    def share(self, patterns: PatternSet) -> None:
        """Search through ``patterns``, a set that also holds these rules' groups."""
        self._patterns = patterns

    def fires(self, rule_id: str, prepared: str, literal_hits: dict[str | int, int] | None = None) -> bool:
        """Whether rule ``rule_id`` matches the prepared text."""
        hits = self._patterns.scan(prepared) if literal_hits is None else literal_hits
        return self._patterns.search(rule_id, prepared, hits)

    def assess(
        self,
        text: str,
        *,
        prepared: str | None = None,
        hits: dict[str | int, int] | None = None,
        name_facts: bool = True,
        before: str | None = None,
    ) -> QualityVerdict:
        """The verdict on ``text`` (``prepared`` is its :func:`prepare` form and ``hits`` its scan,
        if the caller has them). ``name_facts=False`` skips telling a kept fact (``allow.fact``)
        from another kept text (``keep.default``) where nothing depends on it: with no learned
        layer to overrule a keep, both are kept alike (the statement-of-fact check costs ~35 µs).
        ``before``: the turn before this one in its conversation, when the caller knows it — a short
        reply that answers a question it asks is a fact (``allow.answer``: policies/facts_answer.py)."""
        prepared = prepare(text) if prepared is None else prepared
        hits = self._patterns.scan(prepared) if hits is None else hits
        if self.chatter is not None and self.fires(self.chatter.id, prepared, hits):
            return QualityVerdict(False, self.chatter.id, self.chatter.reason)
        # A reply to a question that asks for a fact overrules the length rule and the learned layer,
        # never a reject rule: "已完成，下一步跑测试" after a question is still progress.
        answered = bool(before) and self.facts and answers(before or "", prepared)
        # Whether the text states a fact is asked only where it can change the verdict (it costs a
        # few regular expressions): a short text, a reject a fact overrules, a text that is kept
        # (there the learned layer would otherwise second-guess it: see ``name_facts``).
        fact: Kind | None = None
        fact_known = False
        # A character weighs 1 or 2 (CJK): the exact weight is counted only when the plain length
        # cannot settle the bound.
        if len(prepared) < self.min_length:
            size = weighted_length(prepared)
            if size < self.min_length:
                fact, fact_known = (overruling_kind(prepared, text) if self.facts else None), True
                if fact not in SHORT_OVERRULING and not answered:
                    reason = f"too short to be a memory ({size} < {self.min_length})"
                    return QualityVerdict(False, "length.too_short", reason)

        structured = self._prefix.match(prepared)
        if structured:
            return self._structured(structured.group(1), structured.group(2))

        allow: Rule | None = None
        allow_known = False
        maybe = self._patterns.candidates(hits)
        for rule in self.reject:
            if rule.id in maybe and self._patterns.search(rule.id, prepared, hits):
                if rule.id in FACT_OVERRULES and self.facts:
                    if not fact_known:
                        fact, fact_known = overruling_kind(prepared, text), True
                    if fact in OVERRULING:
                        continue
                if rule.overridable:
                    if not allow_known:  # allow markers are looked for only when they can matter
                        allow, allow_known = self._allow_marker(prepared, hits, maybe), True
                    if allow is not None:
                        continue
                return QualityVerdict(False, rule.id, rule.reason)
        if answered:
            return QualityVerdict(True, "allow.answer", _ANSWER_REASON)
        if not allow_known:
            allow = self._allow_marker(prepared, hits, maybe)
        if allow is not None:
            return QualityVerdict(True, allow.id, allow.reason)
        if not fact_known and self.facts and name_facts:
            fact = statement_kind(prepared, text)
        if fact is not None:
            return QualityVerdict(
                True, f"allow.{'instruction' if fact == 'instruction' else 'fact'}", _FACT_REASONS[fact]
            )
        return QualityVerdict(True, "keep.default", "no rule objected")

    def _allow_marker(self, prepared: str, hits: dict[str | int, int], maybe: set[str]) -> Rule | None:
        for rule in self.allow:
            if rule.id in maybe and self._patterns.search(rule.id, prepared, hits):
                return rule
        return None

    def _structured(self, prefix: str, value: str) -> QualityVerdict:
        value = value.strip()
        fragment = (
            weighted_length(value) < 4
            or re.match(r"^(是|了|这个|那个|还是|来|户|吗|呢|啥|什么)", value) is not None
            or re.search(r"[?？]\s*$", value) is not None
        )
        if fragment:
            return QualityVerdict(False, "structured.fragment", f"'{prefix}:' with a fragment instead of a value")
        return QualityVerdict(True, "allow.structured_prefix", f"structured record '{prefix}:'")
