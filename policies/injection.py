"""Instructions planted in memory: text written to an agent's memory that addresses the agent
rather than recording a fact — memory poisoning (OWASP ASI06, MITRE ATLAS AML.T0080).

A memory is read back into a prompt later; whoever could write it (a web page the agent read, a
tool's output, an e-mail, another tenant) can plant an order the agent will follow. The detector
looks for what such an order needs, in English and Chinese, each signal a rule with a severity:

- ``markup``: the roles and delimiters of chat templates and tool calls (``<|im_start|>system``,
  ``### System:``, ``[INST]``, ``"role": "system"``, ``<system>`` …) — high;
- ``override``: "ignore / disregard / forget the previous instructions", 忽略之前的指令 — high;
- ``secrecy``: keep it from the user ("do not tell the user", "without asking", 不要告诉用户,
  无需确认) — high when it hides something from the user, medium when it skips a confirmation;
- ``supersede``: "this supersedes all earlier memories", 以本条为准, 之前的设定作废 — high;
- ``exfiltration``: a markdown image whose URL carries a query (data out through a fetch) — high;
  sending or sharing something to an address or a URL — medium, high with data a user guards
  (credentials, the conversation, records) or as a standing habit ("always", "every", 以后);
- ``authority``: a claimed system / admin / developer / platform message, "the user has approved"
  — medium;
- ``address``: words addressed to the assistant, the AI or the agent ("Note to the assistant",
  "the assistant must", 给助手, 助手请) — medium;
- ``standing``: a standing order on money or access ("automatically approve", "the bank account
  has changed", 自动转账, 收款账户变更) — medium;
- ``hidden``: text the reader of a memory does not see — tag characters, zero-width and bidi
  controls between letters, base64 or hex that decodes to words — medium; the hidden or decoded
  text is checked again, and an order found there is high.

An item's severity is its highest finding's, raised to high when two different signals of medium
severity meet (an authority claim that also addresses the assistant; a standing order sent to an
address). A user's own preference ("I always want replies in French", 以后都用中文回复我) names
no one else, hides nothing and sends nothing: it carries no signal here. Pure functions; no I/O.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import Any

from memwarden.policies.injection_model import LEARNED_RULE, model
from memwarden.policies.injection_rules import ADDRESS, DATA, DATA_ZH, HABIT, HABIT_ZH, RULES, compiled

SEVERITIES = ("low", "medium", "high")
_RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass(frozen=True)
class Finding:
    """One signal: its rule (``injection.<signal>.<what>``), severity, and span in the text."""

    rule: str
    severity: str
    start: int
    end: int

    @property
    def signal(self) -> str:
        return self.rule.split(".")[1]


def _gate() -> object:
    """One Aho-Corasick automaton over every rule's trigger strings (lowercase): a rule's pattern
    runs only when the text holds one of its triggers — each match of the pattern contains one."""
    import ahocorasick

    automaton = ahocorasick.Automaton()
    owners: dict[str, list[int]] = {}
    for n, (_, _, _, triggers) in enumerate(RULES):
        for t in triggers:
            owners.setdefault(t, []).append(n)
    for t, rules in owners.items():
        automaton.add_word(t, tuple(rules))
    automaton.make_automaton()
    return automaton


_GATE: Any = _gate()


# -- hidden text ---------------------------------------------------------------------------------

_TAGS = re.compile("[\U000e0000-\U000e007f]")
# A subdivision flag (🏴 and the region's code in tag characters, then the cancel tag: England,
# Scotland, Wales) is the one place tag characters are ordinary text.
_FLAG = re.compile("\U0001f3f4[\U000e0020-\U000e007e]{1,8}\U000e007f")
_INVISIBLE = re.compile("[\u200b\u200c\u200e\u200f\u2060-\u2064\u180e\u00ad\ufeff]")
_ZWJ_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_])\u200d(?=[^\W\d_])")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_BASE64 = re.compile(
    r"(?<![A-Za-z0-9+/=_-])(?:[A-Za-z0-9+/]{4}){5,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=])"
)
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:(?:\\x|0x)?[0-9A-Fa-f]{2}[\s:]?){12,}")


def _words(decoded: str) -> bool:
    """Whether decoded bytes read as words: mostly printable, with letters and spaces."""
    if len(decoded) < 8:
        return False
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
    letters = sum(ch.isalpha() for ch in decoded)
    return (
        printable / len(decoded) > 0.95 and letters / len(decoded) > 0.5 and (" " in decoded or not decoded.isascii())
    )


def _decoded(text: str) -> Iterable[tuple[int, int, str]]:
    """Base64 and hex runs of ``text`` that decode to words: (start, end, the words)."""
    for m in _BASE64.finditer(text):
        try:
            raw = base64.b64decode(m.group(0), validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if _words(raw):
            yield m.start(), m.end(), raw
    for m in _HEX.finditer(text):
        digits = re.sub(r"\\x|0x|[\s:]", "", m.group(0))
        if len(digits) % 2:
            digits = digits[:-1]
        try:
            raw = bytes.fromhex(digits).decode("utf-8")
        except ValueError:
            continue
        if _words(raw):
            yield m.start(), m.end(), raw


def _hidden(text: str, seen: set[str]) -> list[Finding]:
    """Hidden text's signals; an order found only once the hidden text is shown (not in ``seen``,
    the visible text's rules) is high."""
    out: list[Finding] = []
    tags = [m for m in _TAGS.finditer(text) if not any(f.start() < m.start() < f.end() for f in _FLAG.finditer(text))]
    if tags:
        smuggled = "".join(chr(ord(m.group(0)) - 0xE0000) for m in tags)
        severity = "high" if sum(ch.isalpha() for ch in smuggled) >= 3 else "medium"
        out.append(Finding("injection.hidden.tag_characters", severity, tags[0].start(), tags[-1].end()))
        out += [_raised(f, tags[0].start(), tags[-1].end()) for f in _scan(smuggled)]
    invisible = list(_INVISIBLE.finditer(text)) + list(_ZWJ_BETWEEN_LETTERS.finditer(text))
    inner = [m for m in invisible if 0 < m.start() < len(text) - 1]
    if inner:
        out.append(Finding("injection.hidden.invisible_characters", "medium", inner[0].start(), inner[-1].end()))
        shown = _ZWJ_BETWEEN_LETTERS.sub(" ", _INVISIBLE.sub(" ", text))
        out += [_raised(f, 0, len(text)) for f in _scan(shown) if f.rule not in seen]
    bidi = list(_BIDI.finditer(text))
    if bidi:
        out.append(Finding("injection.hidden.bidi_controls", "medium", bidi[0].start(), bidi[-1].end()))
    for start, end, words in _decoded(text):
        found = _scan(words)
        out.append(Finding("injection.hidden.encoded_text", "medium" if found else "low", start, end))
        out += [_raised(f, start, end) for f in found]
    return out


def _raised(found: Finding, start: int, end: int) -> Finding:
    """A finding in hidden or decoded text: high, wherever it is (the span: the hiding place)."""
    return Finding(found.rule + ".hidden", "high", start, end)


# The triggers as groups of literal patterns, one group a rule, for a caller that scans the text
# with its own automaton (the pipeline's :class:`~memwarden.policies.fastre.PatternSet`, which
# matches against the casefolded, whitespace-collapsed text: each trigger found in the lowercased
# text is found there too). :func:`gated` reads the rules to run from its hits.
GATE_PREFIX = "injection:"
GATE_GROUPS: dict[str, list[str]] = {
    f"{GATE_PREFIX}{n}": [re.escape(t) for t in triggers] for n, (_, _, _, triggers) in enumerate(RULES)
}


_GATE_NUMBER: dict[str | int, int] = {name: n for n, name in enumerate(GATE_GROUPS)}


def gated(hits: Mapping[str | int, int]) -> set[int]:
    """The rules (their numbers in ``RULES``) whose triggers a scan with :data:`GATE_GROUPS` found."""
    return {_GATE_NUMBER[k] for k in hits.keys() & _GATE_NUMBER.keys()}


def _triggered(lowered: str) -> set[int]:
    wanted: set[int] = set()
    for _, rules in _GATE.iter(lowered):
        wanted.update(rules)
    return wanted


def _scan(text: str, wanted: Set[int] | None = None) -> list[Finding]:
    if wanted is None:
        wanted = _triggered(text.lower())
    out = []
    for n in sorted(wanted):
        rule, severity, pattern, _ = RULES[n]
        m = pattern.search(text)
        if m:
            out.append(Finding(rule, severity, m.start(), m.end()))
    return _escalate(text, out)


_DATA_RE = compiled(r"\b" + DATA + r"\b|" + DATA_ZH)
_HABIT_RE = compiled(r"\b" + HABIT + r"\b|" + HABIT_ZH)
# The user speaking of their own affairs ("send my sister the photos", 发给我的主管).
_FIRST_PERSON = compiled(r"\b(?:i|i'm|i'd|i've|i'll|my|me|mine|myself)\b|我")
# Talk about an attack or a format, not one: the finding is then quoted, or is markup explained.
_DISCUSSION = compiled(
    r"\b(?:example|e\.g\.|for\s+instance|such\s+as|like|said|says|saying|wrote|string|fixture|test\s+case|attacks?|phishing|"
    r"scam|injection|jailbreak|red[-\s]?team|research|paper|docs?|documentation|documented|explains?|explained|tokens?|templates?|format|"
    r"syntax|tokenizer|fine-?tuning|training\s+data|warned|flagged|blocked|reported|incident|guardrail|csp|readme|toggle|parser)\b|"
    r"例子|示例|反例|比如|例如|写着|钓鱼|诈骗|注入|越狱|研究|演示|文档|格式|模板|清单|培训|提醒大家|上报|举报|拦截|转述|转发的|问过|笔记|组件名|"
    r"设计|解析器|论文|公告"
)
_ADDRESS_RE = compiled(ADDRESS)
_QUOTED = re.compile(r"[\"“”„«»「」『』‘’]|(?<!\w)'|'(?!\w)")
# Signals the user's own preference can raise; the others no user writes about their own affairs.
_OWN_AFFAIRS = frozenset({"exfiltration", "standing", "supersede", "authority", "safety", "memory"})
_NOT_OWN = frozenset({"address", "markup", "override", "hidden"})


def _quoted(text: str, start: int, end: int) -> bool:
    """Whether the span sits inside quotation marks (an odd number of them before it, one after)."""
    return len(_QUOTED.findall(text, 0, start)) % 2 == 1 and _QUOTED.search(text, end) is not None


def _escalate(text: str, found: list[Finding]) -> list[Finding]:
    """Findings weighed in their context: a quoted attack or explained markup in a discussion is
    low; the user's own arrangements (first person, nothing addressed to the agent) are low;
    sending to an address is high with data a user guards, or as a standing habit not the user's."""
    if not found:
        return found
    discussed = _DISCUSSION.search(_ADDRESS_RE.sub(" ", text)) is not None  # (".example" in a domain: no discussion)
    own = _FIRST_PERSON.search(text) is not None and not any(f.signal in _NOT_OWN for f in found)
    out = []
    for f in found:
        if discussed and (_quoted(text, f.start, f.end) or f.signal == "markup"):
            f = Finding(f.rule + ".discussed", "low", f.start, f.end)
        elif own and f.signal in _OWN_AFFAIRS and f.severity != "high":
            f = Finding(f.rule + ".own", "low", f.start, f.end)
        elif f.signal == "exfiltration" and f.severity == "medium":
            window = text[max(0, f.start - 120) : f.end + 120]
            if _DATA_RE.search(window) or (not own and _HABIT_RE.search(window)):
                f = Finding(f.rule + ".guarded", "high", f.start, f.end)
        out.append(f)
    return out


# What hidden text needs, looked for cheaply first (most texts hold none of it): an invisible or
# bidi control or a tag character; a run of 20 base64 characters (hex digits too); hex bytes apart
# or escaped.
_MAY_HIDE = re.compile(
    "[\U000e0000-\U000e007f\u200b-\u200f\u2060-\u2064\u180e\u00ad\ufeff\u202a-\u202e\u2066-\u2069]"
    r"|[A-Za-z0-9+/]{20}|[0-9A-Fa-f]{2}[\s:][0-9A-Fa-f]{2}[\s:][0-9A-Fa-f]{2}[\s:][0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|0x[0-9A-Fa-f]{2}[\s:,]"
)


def _wanted(text: str) -> set[int]:
    return _triggered(text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).lower())


EVERY_RULE = frozenset(range(len(RULES)))  # ``wanted`` for a text to be read by every rule


def triggers(text: str) -> bool:
    """Whether ``text`` holds any rule's trigger (where the learned check reads a text)."""
    return bool(_wanted(text))


def find_instructions(text: str, *, wanted: Set[int] | None = None, learned: bool = True) -> list[Finding]:
    """Every signal of an instruction aimed at the agent in ``text`` (empty for most memories).
    ``wanted``: the rules to run, when the caller's own scan found their triggers (:func:`gated`);
    None: this module's automaton finds them. ``learned``: where a trigger is found and the rules
    do not make the text high, the model of :mod:`~memwarden.policies.injection_model` reads it and
    may find an order the rules did not (``injection.learned.order``, high); it never lowers what
    the rules found."""
    if not text:
        return []
    if wanted is None:
        wanted = _wanted(text)
    found: list[Finding] = []
    if wanted:
        found = _scan(unicodedata.normalize("NFKC", text) if not text.isascii() else text, wanted)
    if _MAY_HIDE.search(text):
        found += _hidden(text, {f.rule for f in found})
    if (
        learned
        and wanted
        and severity(found) != "high"
        and model().confirms(text, [(f.rule, f.severity) for f in found])
    ):
        found.append(Finding(LEARNED_RULE, "high", 0, len(text)))
    return found


def severity(found: Iterable[Finding]) -> str | None:
    """An item's severity: its highest finding's, high when two different signals of medium
    severity meet; None without findings (``low`` findings alone: informational)."""
    found = list(found)
    if not found:
        return None
    top = max(found, key=lambda f: _RANK[f.severity]).severity
    medium = {f.signal for f in found if f.severity == "medium"}
    if top == "medium" and len(medium) >= 2:
        return "high"
    return top
