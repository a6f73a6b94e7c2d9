"""The quality filter: does this text deserve to be remembered? Rule-based, no model.

Order of judgement (first that decides wins):

1. chatter ("ok", "好的", "thanks"), then length — too short or too long (CJK characters count
   double: each carries a word);
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
from collections.abc import Iterable
from dataclasses import dataclass

from policies.fastre import Matcher
from policies.quality_rules import ALLOW_RULES, CJK, REJECT_RULES, STRUCTURED_PREFIXES, Rule

_SPACE = re.compile(r"\s+")
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


@dataclass(frozen=True)
class _Compiled:
    rule: Rule
    regex: Matcher


def _compile(rule: Rule) -> _Compiled:
    return _Compiled(rule, Matcher(rule.patterns))


class QualityFilter:
    """The filter with its rule tables compiled; build once, call :meth:`assess` per item."""

    def __init__(
        self,
        *,
        min_length: int = 8,
        max_length: int = 4000,
        extra_rules: Iterable[Rule] = (),
        disabled: Iterable[str] = (),
        structured_prefixes: Iterable[str] = (),
    ) -> None:
        off = set(disabled)
        self.min_length = min_length
        self.max_length = max_length
        self.allow = [_compile(r) for r in ALLOW_RULES if r.id not in off]
        rejects = [_compile(r) for r in (*REJECT_RULES, *extra_rules) if r.id not in off]
        # Chatter is judged on the whole text, before length: "ok" is chatter, not "too short".
        self.chatter = next((c for c in rejects if c.rule.id == "chatter"), None)
        self.reject = [c for c in rejects if c.rule.id != "chatter"]
        prefixes = sorted({*STRUCTURED_PREFIXES, *structured_prefixes}, key=len, reverse=True)
        self._prefix = re.compile(r"^(" + "|".join(re.escape(p) for p in prefixes) + r")\s*[:：]\s*(.*)$", re.S)

    def rules(self) -> list[Rule]:
        return [c.rule for c in (*self.allow, *self.reject)]

    def assess(self, text: str, *, prepared: str | None = None) -> QualityVerdict:
        """The verdict on ``text`` (``prepared`` is its :func:`prepare` form, if the caller has it)."""
        prepared = prepare(text) if prepared is None else prepared
        if self.chatter is not None and self.chatter.regex.search(prepared):
            return QualityVerdict(False, self.chatter.rule.id, self.chatter.rule.reason)
        size = weighted_length(prepared)
        if size < self.min_length:
            return QualityVerdict(False, "length.too_short", f"too short to be a memory ({size} < {self.min_length})")
        if size > self.max_length:
            return QualityVerdict(False, "length.too_long", f"too long for one memory ({size} > {self.max_length})")

        structured = self._prefix.match(prepared)
        if structured:
            return self._structured(structured.group(1), structured.group(2))

        allow: Rule | None = None
        allow_known = False
        for compiled in self.reject:
            if compiled.regex.search(prepared):
                if compiled.rule.overridable:
                    if not allow_known:  # allow markers are looked for only when they can matter
                        allow, allow_known = self._allow_marker(prepared), True
                    if allow is not None:
                        continue
                return QualityVerdict(False, compiled.rule.id, compiled.rule.reason)
        if not allow_known:
            allow = self._allow_marker(prepared)
        if allow is not None:
            return QualityVerdict(True, allow.id, allow.reason)
        return QualityVerdict(True, "keep.default", "no rule objected")

    def _allow_marker(self, prepared: str) -> Rule | None:
        return next((c.rule for c in self.allow if c.regex.search(prepared)), None)

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
