"""Bank config governance, the pure part: body formats, ``entity_labels`` forms, container merges,
missions, and the arithmetic of snapshots (watched counts, drops, what a rollback must undo).

Everything here takes and returns plain JSON values; ``governance/config_guard.py`` does the I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

MissionsMode = Literal["enforce", "seed", "off"]

# Hindsight 1.1.0's per-bank configurable fields (HindsightConfig._CONFIGURABLE_FIELDS, 58).
KNOWN_FIELDS: frozenset[str] = frozenset(
    """
    retain_mission retain_extraction_mode retain_custom_instructions retain_chunk_size
    retain_structured_chunk_size retain_chunk_batch_size retain_max_attachments_per_chunk
    retain_default_strategy retain_strategies store_document_text entity_labels entities_allow_free_form
    enable_text_search enable_temporal_retrieval enable_graph_retrieval enable_reranking
    enable_observations enable_auto_consolidation observations_mission max_observations_per_scope
    observation_scope_limits default_observation_scopes consolidation_strategies
    consolidation_use_decision_model consolidation_llm_batch_size consolidation_llm_parallelism
    consolidation_max_memories_per_round consolidation_source_facts_max_tokens
    consolidation_source_facts_max_tokens_per_observation reflect_mission reflect_use_decision_model
    reflect_source_facts_max_tokens reflect_default_options mental_model_refresh_use_decision_model
    mental_model_delta_use_decision_model mental_model_min_refresh_interval_seconds
    knowledge_page_default_trigger recall_include_chunks recall_prefer_observations recall_max_tokens
    recall_chunks_max_tokens recall_budget_function recall_budget_fixed_low recall_budget_fixed_mid
    recall_budget_fixed_high recall_budget_adaptive_low recall_budget_adaptive_mid
    recall_budget_adaptive_high recall_budget_min recall_budget_max disposition_skepticism
    disposition_literalism disposition_empathy mcp_enabled_tools audit_log_enabled
    llm_gemini_safety_settings memory_defense
    """.split()
)
ENV_PREFIX = "HINDSIGHT_API_"
LABEL_GROUPS = ("topic", "stage")  # the groups memwarden owns: always tag: true
GROUP_TYPES = frozenset({"value", "multi-values", "text", "multi-text", "map"})


class ConfigInputError(ValueError):
    """The client's config change cannot be used; the message says why. ``status`` and ``detail``
    are the answer Hindsight gives to it: 400 with the message, or 422 with FastAPI's error list
    where Hindsight's request model refuses the body before its own checks."""

    def __init__(self, message: str, *, status: int = 400, detail: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.detail = message if detail is None else detail


def unknown_fields_message(unknown: Sequence[str]) -> str:
    """Hindsight's refusal of fields it does not know. It names ten valid fields, taken from a set
    (so which ten varies by process); memwarden names the first ten in sorted order."""
    return f"Unknown configuration fields: {sorted(unknown)}. Valid configurable fields: {sorted(KNOWN_FIELDS)[:10]}..."


def field_name(key: str) -> str:
    """``HINDSIGHT_API_RETAIN_MISSION`` → ``retain_mission`` (Hindsight accepts both)."""
    return key[len(ENV_PREFIX) :].lower() if key.upper().startswith(ENV_PREFIX) else key


def parse_updates(body: Any) -> tuple[dict[str, Any], str]:
    """The updates a PATCH body asks for, and its format: ``wrapped`` (``{"updates": {...}}``) or
    ``flat`` (``{...}``). Raises :class:`ConfigInputError` for anything else."""
    if not isinstance(body, dict):
        raise ConfigInputError('the body must be a JSON object: {"updates": {...}} or the fields themselves')
    if "updates" in body:
        updates = body["updates"]
        if not isinstance(updates, dict):
            raise ConfigInputError(
                "'updates' must be an object of config fields",
                status=422,
                detail=[
                    {
                        "type": "dict_type",
                        "loc": ["body", "updates"],
                        "msg": "Input should be a valid dictionary",
                        "input": updates,
                    }
                ],
            )
        if len(body) > 1:
            others = sorted(k for k in body if k != "updates")
            raise ConfigInputError(f"fields next to 'updates' are not allowed: {others}")
        return {field_name(k): v for k, v in updates.items()}, "wrapped"
    return {field_name(k): v for k, v in body.items()}, "flat"


MAX_CONFIG_CHARS = 65_536  # one string of a config change (a mission is a few hundred characters)
MAX_CONFIG_JSON = 1 << 20  # a whole config change, as JSON


def check_fields(updates: Mapping[str, Any], extra_fields: Sequence[str] = ()) -> None:
    """Unknown keys and oversized values refused (400, naming the key), before anything is done."""
    unknown = sorted(k for k in updates if k not in KNOWN_FIELDS and k not in extra_fields)
    if unknown:
        raise ConfigInputError(unknown_fields_message(unknown))
    check_sizes(updates)


def check_sizes(updates: Mapping[str, Any]) -> None:
    """No string of a config change (or a bank profile) past :data:`MAX_CONFIG_CHARS`, and the
    whole change within :data:`MAX_CONFIG_JSON`: 400 naming the key."""
    for key, value in updates.items():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str) and len(item) > MAX_CONFIG_CHARS:
                raise ConfigInputError(
                    f"Config field '{key}' holds a string of {len(item)} characters: at most {MAX_CONFIG_CHARS}"
                )
            if isinstance(item, dict):
                stack.extend(item.values())
                stack.extend(item.keys())
            elif isinstance(item, list):
                stack.extend(item)
    if len(json.dumps(dict(updates), ensure_ascii=False, default=str)) > MAX_CONFIG_JSON:
        raise ConfigInputError(f"A config change is at most {MAX_CONFIG_JSON} bytes of JSON")


def _value(raw: Any, where: str) -> dict[str, Any]:
    if isinstance(raw, str) and raw.strip():
        return {"value": raw.strip(), "description": ""}
    if isinstance(raw, dict) and isinstance(raw.get("value"), str) and raw["value"].strip():
        out = dict(raw)
        out["value"] = raw["value"].strip()
        out.setdefault("description", "")
        if not isinstance(out["description"], str):
            raise ConfigInputError(f"Invalid entity_labels format: {where}: 'description' must be a string")
        return out
    raise ConfigInputError(f"Invalid entity_labels format: {where}: a value is a non-empty string or {{'value': ...}}")


def _group(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ConfigInputError(f"Invalid entity_labels format: {where} must be an object with a 'key'")
    key = raw.get("key")
    if not isinstance(key, str) or not key.strip():
        raise ConfigInputError(f"Invalid entity_labels format: {where}: 'key' must be a non-empty string")
    group = dict(raw)
    group["key"] = key.strip()
    if "type" in group and group["type"] not in GROUP_TYPES:
        raise ConfigInputError(
            f"Invalid entity_labels format: {where}: type {group['type']!r} is not one of {sorted(GROUP_TYPES)}"
        )
    values = group.get("values", [])
    if not isinstance(values, list):
        raise ConfigInputError(f"Invalid entity_labels format: {where}: 'values' must be a list")
    group["values"] = [_value(v, f"{where}.values[{i}]") for i, v in enumerate(values)]
    for flag in ("tag", "optional"):
        if flag in group and not isinstance(group[flag], bool):
            raise ConfigInputError(f"Invalid entity_labels format: {where}: '{flag}' must be true or false")
    if group["key"] in LABEL_GROUPS:
        group["tag"] = True
    return group


def normalize_entity_labels(raw: Any) -> list[dict[str, Any]]:
    """Hindsight's list-of-groups form from any accepted form.

    Accepted: the simple form ``{"topic": [...], "stage": [...]}`` (values as strings or
    ``{"value", "description"}``), Hindsight's list of groups, and ``{"attributes": [groups]}``.
    The ``topic`` and ``stage`` groups always get ``tag: true`` so the backend also tags facts.
    """
    if raw is None:
        raise ConfigInputError("Invalid entity_labels format: null (to reset it, DELETE the config)")
    if isinstance(raw, dict) and set(raw) == {"attributes"}:
        raw = raw["attributes"]
    if isinstance(raw, dict):
        groups = []
        for key, values in raw.items():
            if not isinstance(values, list):
                raise ConfigInputError(
                    f"Invalid entity_labels format: '{key}' must be a list of values in the simple form"
                )
            groups.append({"key": key, "type": "value", "optional": True, "tag": key in LABEL_GROUPS, "values": values})
        raw = groups
    if not isinstance(raw, list):
        raise ConfigInputError("Invalid entity_labels format: expected a list of groups or {'topic': [...], ...}")
    out = [_group(g, f"entity_labels[{i}]") for i, g in enumerate(raw)]
    keys = [g["key"] for g in out]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ConfigInputError(f"Invalid entity_labels format: group keys repeated: {dupes}")
    return out


def validate_containers(updates: Mapping[str, Any]) -> None:
    """Raise :class:`ConfigInputError` if a container field of ``updates`` cannot be used."""
    if updates.get("entity_labels") is not None:
        normalize_entity_labels(updates["entity_labels"])
    strategies = updates.get("retain_strategies")
    if strategies is not None and not isinstance(strategies, dict):
        raise ConfigInputError("retain_strategies must be an object of name → strategy")


def merge_entity_labels(current: Any, incoming: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Read-modify-write: groups the client did not mention are kept; a mentioned group takes the
    client's fields, and its values are the union (current order first, new values appended, a
    value's description updated by the client's)."""
    base = [dict(g) for g in current] if isinstance(current, list) else []
    by_key = {g.get("key"): i for i, g in enumerate(base)}
    for group in incoming:
        i = by_key.get(group["key"])
        if i is None:
            base.append(group)
            by_key[group["key"]] = len(base) - 1
            continue
        old = base[i]
        values = {v.get("value"): dict(v) for v in old.get("values", []) if isinstance(v, dict)}
        for v in group["values"]:
            values[v["value"]] = {**values.get(v["value"], {}), **v}
        base[i] = {**old, **group, "values": list(values.values())}
    return base


def merge_strategies(current: Any, incoming: Any) -> dict[str, Any]:
    """``retain_strategies``: named strategies the client did not mention are kept."""
    if not isinstance(incoming, dict):
        raise ConfigInputError("retain_strategies must be an object of name → strategy")
    return {**(current if isinstance(current, dict) else {}), **incoming}


@dataclass(frozen=True)
class Templates:
    """What memwarden's missions put in a bank's config."""

    topics: Sequence[str]
    stages: Sequence[str]
    retain_mission: str
    observations_mission: str

    def entity_labels(self) -> list[dict[str, Any]]:
        return normalize_entity_labels({"topic": list(self.topics), "stage": list(self.stages)})

    def values(self) -> dict[str, Any]:
        return {
            "entity_labels": self.entity_labels(),
            "retain_mission": self.retain_mission,
            "observations_mission": self.observations_mission,
        }


def _labels_cover(current: Any, template: list[dict[str, Any]]) -> bool:
    """Whether ``current`` already holds the template's groups (values and tag flag)."""
    if not isinstance(current, list):
        return False
    have = {g.get("key"): g for g in current if isinstance(g, dict)}
    for group in template:
        got = have.get(group["key"])
        if got is None or got.get("tag") is not True:
            return False
        if {v["value"] for v in group["values"]} - {
            v.get("value") for v in got.get("values", []) if isinstance(v, dict)
        }:
            return False
    return True


def plan_update(
    updates: Mapping[str, Any],
    current_overrides: Mapping[str, Any],
    *,
    mode: MissionsMode,
    templates: Templates,
    replace: Sequence[str] = (),
) -> tuple[dict[str, Any], list[str]]:
    """What to send the backend for a client's ``updates`` given the bank's current overrides:
    ``entity_labels`` normalized and merged, ``retain_strategies`` merged (unless named in
    ``replace``), and the missions applied. Returns the updates and the client keys overridden."""
    out: dict[str, Any] = {}
    for key, value in updates.items():
        if key == "entity_labels" and value is not None:
            groups = normalize_entity_labels(value)
            out[key] = groups if key in replace else merge_entity_labels(current_overrides.get(key), groups)
        elif key == "retain_strategies" and value is not None and key not in replace:
            out[key] = merge_strategies(current_overrides.get(key), value)
        else:
            out[key] = value
    overridden: list[str] = []
    if mode == "off":
        return out, overridden
    for key, template in templates.values().items():
        effective = out[key] if key in out else current_overrides.get(key)
        if key == "entity_labels":
            if (mode == "enforce" or effective is None) and not _labels_cover(effective, template):
                if key in updates:
                    overridden.append(key)
                out[key] = merge_entity_labels(effective, template)
            continue
        if mode == "enforce":
            if effective != template:
                if key in updates:
                    overridden.append(key)
                out[key] = template
        elif effective is None:
            out[key] = template
    return out, overridden


def restore_updates(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """The PATCH that makes the overrides ``before`` again: changed keys back to their old value,
    keys the change added reset to null (Hindsight's tombstone)."""
    out: dict[str, Any] = {}
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key) or (key in after and key not in before):
            out[key] = before.get(key)
    return out


WATCHABLE = ("world", "experience", "observation", "documents")


def watched_counts(stats: Mapping[str, Any], watched: Sequence[str]) -> dict[str, int]:
    """The counts a snapshot compares, from Hindsight's stats body."""
    by_type = stats.get("nodes_by_fact_type") or {}
    out: dict[str, int] = {}
    for name in watched:
        raw = stats.get("total_documents") if name == "documents" else by_type.get(name)
        out[name] = int(raw) if isinstance(raw, int | float) else 0
    return out


def drops(before: Mapping[Any, int], after: Mapping[str, int], tolerance: int) -> dict[str, dict[str, int]]:
    """Every watched count that fell by more than ``tolerance``: name → before, after, delta."""
    out = {}
    for name, was in before.items():
        now = after.get(name, 0)
        if was - now > tolerance:
            out[name] = {"before": was, "after": now, "delta": now - was}
    return out


def settled(stats: Mapping[str, Any]) -> bool:
    """No pending operations or consolidation (fields Hindsight may omit count as zero)."""
    return not any(int(stats.get(k) or 0) for k in ("pending_operations", "pending_consolidation"))
