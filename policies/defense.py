"""What a bank does with an item that holds instructions aimed at the agent: its action by severity,
in Hindsight's ``memory_defense`` vocabulary (``allow``, ``tag``, ``quarantine``, ``block``), applied
to the item's judgement. Pure.

The pipeline finds instructions in the memory text (:mod:`memwarden.policies.injection`, the
judgement's ``threat``); :func:`defend` adds what the item's other fields hold — its ``context``
(which a backend prepends to the text it extracts from), its metadata, entities, any other string
field — and applies the action of the worst severity:

- ``allow``: stored as judged (the finding stays on the judgement: its audit event and a verbose
  answer show it);
- ``tag``: stored with the tag ``injection:<severity>`` (the reader of a memory can see it, a
  recall can filter it out);
- ``quarantine``: held (verdict ``review``): recorded in the ledger, not delivered, not recalled,
  in the review queue until someone approves or rejects it;
- ``block``: refused (verdict ``reject``); a write that holds one is refused as a whole
  (:mod:`memwarden.governance.retain`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from memwarden.policies.field_secrets import Loc, field_name, is_identifier
from memwarden.policies.injection import EVERY_RULE, SEVERITIES, Finding, find_instructions, severity
from memwarden.policies.judgement import FORWARDED, Judgement, Threat

Action = Literal["allow", "tag", "quarantine", "block"]
ACTIONS: tuple[Action, ...] = ("allow", "tag", "quarantine", "block")
DEFAULT_ACTIONS: Mapping[str, Action] = {"low": "allow", "medium": "tag", "high": "quarantine"}
TAG_KEY = "injection"
MAX_FIELD_STRINGS = 256  # strings of an item's other fields read, at most (the rest: not read)
_NOT_READ = frozenset({"content", "timestamp", "created_at", "updated_at", "event_time"})


def _strings(value: Any, loc: Loc, name: str | int | None) -> Iterator[tuple[Loc, str]]:
    """The strings of a JSON value with their locations, keys included; an id left out (one word
    under an id's name says nothing — words with spaces under one are read all the same: the
    name is the writer's to choose)."""
    if isinstance(value, str):
        if value and not (is_identifier(name) and not any(ch.isspace() for ch in value)):
            yield loc, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if any(ch.isspace() for ch in str(key)):  # a key that is words
                yield (*loc, "[key]"), str(key)
            yield from _strings(item, (*loc, str(key)), str(key))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, (*loc, i), name)


def field_findings(item: Mapping[str, Any]) -> list[tuple[str, list[Finding]]]:
    """The instructions in an item's fields other than its memory text: (field, findings) for each
    field that holds any. Its first :data:`MAX_FIELD_STRINGS` strings are read."""
    out: list[tuple[str, list[Finding]]] = []
    read = 0
    for key, value in item.items():
        if key in _NOT_READ:
            continue
        for loc, text in _strings(value, (str(key),), str(key)):
            read += 1
            if read > MAX_FIELD_STRINGS:
                return out
            found = find_instructions(text)
            if found:
                out.append((field_name(loc), found))
    return out


def _worst_rule(rules: list[tuple[str, str]]) -> str:
    """The rule of the highest severity (the first such)."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    return max(rules, key=lambda r: rank[r[1]])[0]


def defend(
    j: Judgement,
    item: Mapping[str, Any],
    actions: Mapping[str, Action],
    separator: str = ":",
    repeated: Sequence[Finding] = (),
) -> Judgement:
    """``j`` with the bank's action applied (see the module); unchanged for an item not kept (a
    rejected item stores nothing, a held one waits already) or one without findings. ``actions``:
    severity → action (a severity not named: ``allow``). ``repeated``: its writer's flood findings
    (:mod:`memwarden.policies.floods`)."""
    if j.verdict not in FORWARDED:
        return j
    fields = field_findings(item)
    if j.threat is None and not fields and not repeated:
        return j
    # Every rule reads a text the pipeline found a threat in: its gate (one scan of the prepared
    # text, whitespace collapsed) sees "bank\naccount changed" where this module's own would not.
    found: list[Finding] = list(find_instructions(j.text, wanted=EVERY_RULE)) if j.threat is not None else []
    places = ["content"] if found else []
    for name, more in fields:
        found += more
        places.append(name)
    if repeated:
        found += repeated
        places.append("repetition")
    level = severity(found)
    if level is None:
        return j
    rules = tuple(dict.fromkeys(f.rule for f in found))
    action: Action = actions.get(level, "allow")
    threat = Threat(level, rules, tuple(places), action)
    what = f"instructions aimed at the agent ({level}: {', '.join(rules[:3])}{' …' if len(rules) > 3 else ''})"
    if action == "allow":
        return j._replace(threat=threat)
    if action == "tag":
        tag = f"{TAG_KEY}{separator}{level}"
        return j._replace(threat=threat, tags=(*j.tags, tag), reason=f"{j.reason}; {what}: tagged {tag}")
    rule = _worst_rule([(f.rule, f.severity) for f in found])
    if action == "quarantine":
        return j._replace(verdict="review", rule=rule, reason=f"{what}: quarantined for review", threat=threat)
    return j._replace(verdict="reject", rule=rule, reason=f"{what}: blocked", threat=threat)
