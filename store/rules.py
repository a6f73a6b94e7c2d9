"""Hindsight 1.1.0's input rules, as the self-hosted store enforces them.

The store answers bad input the way the real server does, with its status and its words (checked
side by side against it in ``tests/interop/test_interop_local.py``): bank ids a new bank may take, the
per-bank config's value types and ranges, the memory ``PATCH`` rules, recall's fact types, the
dates a retain or an edit may carry, and the tag listing's wildcard. Each rule names where
Hindsight keeps it. Every function raises :class:`ValueError` with Hindsight's message; the store
turns it into the status the server answers with.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import MAXYEAR, MINYEAR, UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memwarden.backends.hindsight_models import check_new_bank_id as check_new_bank_id  # Hindsight's rule

# engine/memory_engine.py: VALID_RECALL_FACT_TYPES; "opinion" (a removed type) is dropped silently.
RECALL_FACT_TYPES = ("experience", "observation", "world")

# config_resolver._configurable_field_types() of Hindsight 1.1.0, captured from the server: the JSON
# types each per-bank field accepts (null always clears an override).
CONFIG_FIELD_TYPES: Mapping[str, tuple[type, ...]] = {
    "audit_log_enabled": (bool,),
    "consolidation_llm_batch_size": (int,),
    "consolidation_llm_parallelism": (int,),
    "consolidation_max_memories_per_round": (int,),
    "consolidation_source_facts_max_tokens": (int,),
    "consolidation_source_facts_max_tokens_per_observation": (int,),
    "consolidation_strategies": (list,),
    "consolidation_use_decision_model": (bool,),
    "default_observation_scopes": (str, list),
    "disposition_empathy": (int,),
    "disposition_literalism": (int,),
    "disposition_skepticism": (int,),
    "enable_auto_consolidation": (bool,),
    "enable_graph_retrieval": (bool,),
    "enable_observations": (bool,),
    "enable_reranking": (bool,),
    "enable_temporal_retrieval": (bool,),
    "enable_text_search": (bool,),
    "entities_allow_free_form": (bool,),
    "entity_labels": (list, dict),
    "knowledge_page_default_trigger": (dict,),
    "llm_gemini_safety_settings": (list,),
    "max_observations_per_scope": (int,),
    "mcp_enabled_tools": (list,),
    "memory_defense": (dict,),
    "mental_model_delta_use_decision_model": (bool,),
    "mental_model_min_refresh_interval_seconds": (int,),
    "mental_model_refresh_use_decision_model": (bool,),
    "observation_scope_limits": (list,),
    "observations_mission": (str,),
    "recall_budget_adaptive_high": (float,),
    "recall_budget_adaptive_low": (float,),
    "recall_budget_adaptive_mid": (float,),
    "recall_budget_fixed_high": (int,),
    "recall_budget_fixed_low": (int,),
    "recall_budget_fixed_mid": (int,),
    "recall_budget_function": (str,),
    "recall_budget_max": (int,),
    "recall_budget_min": (int,),
    "recall_chunks_max_tokens": (int,),
    "recall_include_chunks": (bool,),
    "recall_max_tokens": (int,),
    "recall_prefer_observations": (bool,),
    "reflect_default_options": (dict,),
    "reflect_mission": (str,),
    "reflect_source_facts_max_tokens": (int,),
    "reflect_use_decision_model": (bool,),
    "retain_chunk_batch_size": (int,),
    "retain_chunk_size": (int,),
    "retain_custom_instructions": (str,),
    "retain_default_strategy": (str,),
    "retain_extraction_mode": (str,),
    "retain_max_attachments_per_chunk": (int,),
    "retain_mission": (str,),
    "retain_strategies": (dict,),
    "retain_structured_chunk_size": (int,),
    "store_document_text": (bool,),
}
_TYPE_WORDS = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}
_DISPOSITIONS = ("disposition_skepticism", "disposition_literalism", "disposition_empathy")
_BUDGET_FIXED = ("recall_budget_fixed_low", "recall_budget_fixed_mid", "recall_budget_fixed_high")
_BUDGET_ADAPTIVE = ("recall_budget_adaptive_low", "recall_budget_adaptive_mid", "recall_budget_adaptive_high")
_BUDGET_FUNCTIONS = ("adaptive", "fixed")


class _ScopePattern(BaseModel):
    """``StrictConsolidationScopePattern`` (engine/response_models.py)."""

    model_config = ConfigDict(extra="forbid")
    tags: list[str] = Field(default_factory=list)
    tags_match: str | None = None

    @field_validator("tags_match")
    @classmethod
    def _known_mode(cls, value: str | None) -> str | None:
        if value is not None and value not in ("all", "exact"):
            raise ValueError("must be one of all, exact")
        return value


class StrictConsolidationStrategySpec(BaseModel):
    """One ``consolidation_strategies`` entry, unknown keys refused (Hindsight's class name: it is in
    the error message)."""

    model_config = ConfigDict(extra="forbid")
    scopes: list[_ScopePattern] = Field(default_factory=list)
    observations_mission: str | None = None
    max_observations_per_scope: int | None = None
    consolidation_source_facts_max_tokens: int | None = None
    consolidation_source_facts_max_tokens_per_observation: int | None = None


def _is_type(value: Any, allowed: tuple[type, ...]) -> bool:
    if isinstance(value, bool):  # bool is an int: it must not pass for a number
        return bool in allowed
    if isinstance(value, int) and float in allowed:  # JSON has no int/float distinction
        return True
    return isinstance(value, allowed)


def _types_of(updates: Mapping[str, Any]) -> None:
    for key, value in updates.items():
        allowed = CONFIG_FIELD_TYPES.get(key)
        if allowed is None or value is None:
            continue
        if not _is_type(value, allowed):
            words = " or ".join(dict.fromkeys(_TYPE_WORDS[t] for t in allowed))
            raise ValueError(f"{key} must be {words}, got {type(value).__name__}")


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def check_config_updates(updates: Mapping[str, Any], current: Mapping[str, Any]) -> None:
    """``ConfigResolver.validate_bank_config_updates``, the checks that do not need an LLM: every
    value's type, then the fields with rules of their own. ``current`` is the bank's resolved
    config, for the recall budget's bounds when an update sets only one of them."""
    _types_of(updates)
    strategies = updates.get("retain_strategies")
    if strategies:
        for name, overrides in strategies.items():
            if not str(name).strip():
                raise ValueError(
                    "Strategy names must not be empty strings. Remove entries with empty names before saving."
                )
            if not isinstance(overrides, dict):
                raise ValueError(f"Invalid retain strategy {name!r}: must be an object")
            try:
                _types_of(overrides)
            except ValueError as exc:
                raise ValueError(f"Invalid retain strategy {name!r}: {exc}") from None
    for index, entry in enumerate(updates.get("consolidation_strategies") or ()):
        try:
            StrictConsolidationStrategySpec.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "entry"
            raise ValueError(f"Invalid consolidation strategy at index {index}: {where}: {first['msg']}") from None
    function = updates.get("recall_budget_function")
    if "recall_budget_function" in updates and (
        not isinstance(function, str) or function.lower() not in _BUDGET_FUNCTIONS
    ):
        raise ValueError(f"recall_budget_function must be one of {sorted(_BUDGET_FUNCTIONS)}, got {function!r}")
    for key in (*_BUDGET_FIXED, "recall_budget_min", "recall_budget_max"):
        if key in updates and not _positive_int(updates[key]):
            raise ValueError(f"{key} must be a positive integer, got {updates[key]!r}")
    for key in _BUDGET_ADAPTIVE:
        value = updates.get(key)
        if key in updates and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0):
            raise ValueError(f"{key} must be a positive number, got {value!r}")
    if "recall_budget_min" in updates or "recall_budget_max" in updates:
        low = updates.get("recall_budget_min", current.get("recall_budget_min"))
        high = updates.get("recall_budget_max", current.get("recall_budget_max"))
        if low is not None and high is not None and low > high:
            raise ValueError(f"recall_budget_min ({low}) must be <= recall_budget_max ({high})")
    for key in _DISPOSITIONS:
        value = updates.get(key)
        if value is not None and not (_positive_int(value) and value <= 5):
            raise ValueError(f"{key} must be an integer between 1 and 5, got {value!r}")


def check_memory_id(memory_id: str) -> None:
    """Hindsight's memory ids are UUIDs (memwarden's are too, written without dashes)."""
    try:
        uuid.UUID(memory_id)
    except ValueError:
        raise ValueError(f"Invalid memory_id: '{memory_id}' is not a valid UUID") from None


def check_operation_id(operation_id: str) -> None:
    """An async operation's id, a UUID too."""
    try:
        uuid.UUID(operation_id)
    except ValueError:
        raise ValueError(f"Invalid operation_id format: {operation_id}") from None


def _utc(when: datetime) -> str:
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def mentioned_at(timestamp: str | None, retained_at: str) -> str | None:
    """A retained item's ``timestamp`` as Hindsight stores it (validated by ``MemoryItem``): none →
    the time of the retain, ``unset`` → no date, else the instant in UTC (a naive one read as UTC)."""
    if not timestamp:
        return retained_at
    if timestamp.lower() == "unset":
        return None
    return _utc(datetime.fromisoformat(timestamp.replace("Z", "+00:00")))


def edit_date(value: str) -> str | None:
    """A date in a memory ``PATCH``: ``""`` clears it, else ISO 8601 with a real year, in UTC."""
    if not value:
        return None
    when = datetime.fromisoformat(value)
    if when.year in (MINYEAR, MAXYEAR):
        raise ValueError(f"Date year {when.year} is a placeholder, not a date; send '' to clear it.")
    return _utc(when)


def recall_types(types: list[str] | None) -> list[str] | None:
    """The fact types a recall asks for (None: all). Raises on a type Hindsight does not know."""
    if not types:
        return None
    kept = [t for t in types if t != "opinion"]
    unknown = sorted(set(kept) - set(RECALL_FACT_TYPES))
    if unknown:
        raise ValueError(f"Invalid fact type(s): {', '.join(unknown)}. Must be one of: {', '.join(RECALL_FACT_TYPES)}")
    return kept


def query_has_words(query: str) -> bool:
    """``tokenize_query``: a query needs one word character once punctuation is dropped."""
    return bool(re.sub(r"[^\w\s]", " ", query.lower()).split())


def tag_pattern(q: str) -> re.Pattern[str]:
    """The tag listing's ``q`` as Hindsight matches it (``tag ILIKE q`` with ``*`` → ``%``): the whole
    tag, case-insensitively; ``*`` and ``%`` any run of characters, ``_`` any one."""
    wild = {"*": ".*", "%": ".*", "_": "."}
    return re.compile("".join(wild.get(ch) or re.escape(ch) for ch in q), re.IGNORECASE | re.DOTALL)
