"""The tools memwarden's MCP server offers: Hindsight 1.1.0's, as its own MCP server lists them
(``hindsight_tools.json``, captured from the real server: names, descriptions, input and output
schemas, annotations), in its two sets — every bank (``/mcp``: a ``bank_id`` argument on each) and
one bank (``/mcp/{bank}/``: three tools fewer, no ``bank_id``) — and a call's arguments read as
Hindsight reads them: unknown ones dropped (models add ``explanation`` and the like), a list or an
object sent as JSON text parsed, a number or a flag sent as text read as one; then checked against
the tool's schema, a problem answered as a tool error that names the argument.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import best_match

Tool = Mapping[str, Any]
INTEGER = re.compile(r"^-?\d{1,18}$")  # past 18 digits: left as text, and refused as one


class ArgumentError(Exception):
    """A tool call whose arguments its schema refuses (the message names the argument)."""


@cache
def _captured() -> Mapping[str, Any]:
    text = resources.files("memwarden.fronts.mcp").joinpath("hindsight_tools.json").read_text(encoding="utf-8")
    loaded: Mapping[str, Any] = json.loads(text)
    return loaded


def tools(*, single_bank: bool) -> list[Tool]:
    """The tools as ``tools/list`` answers them, in Hindsight's order."""
    listed: list[Tool] = _captured()["single" if single_bank else "multi"]
    return listed


@cache
def _by_name(single_bank: bool) -> Mapping[str, Tool]:
    return {t["name"]: t for t in tools(single_bank=single_bank)}


def find(name: str, *, single_bank: bool) -> Tool | None:
    """The tool of that name in the set (None: no such tool there)."""
    return _by_name(single_bank).get(name)


@cache
def _validator(name: str, single_bank: bool) -> Draft202012Validator:
    tool = _by_name(single_bank)[name]
    return Draft202012Validator(tool["inputSchema"])


def _kinds(schema: Mapping[str, Any]) -> set[str]:
    found = {schema["type"]} if isinstance(schema.get("type"), str) else set()
    for variant in (*schema.get("anyOf", ()), *schema.get("oneOf", ())):
        if isinstance(variant, Mapping) and isinstance(variant.get("type"), str):
            found.add(variant["type"])
    return found


def _lenient(value: Any, kinds: set[str]) -> Any:
    """A value sent as text where the schema wants a list, an object, a number or a flag, read as
    one when it reads as one (as Hindsight's tools take it); anything else as sent."""
    if not isinstance(value, str) or "string" in kinds:
        return value
    text = value.strip()
    if kinds & {"array", "object"} and text[:1] in ("[", "{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            return value
        wanted = (list if "array" in kinds else type(None), dict if "object" in kinds else type(None))
        return parsed if isinstance(parsed, wanted) else value
    if "integer" in kinds and INTEGER.match(text):
        return int(text)
    if "boolean" in kinds and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


def arguments(tool: Tool, given: Mapping[str, Any] | None, *, single_bank: bool) -> dict[str, Any]:
    """The call's arguments as the tool reads them. Raises :class:`ArgumentError`."""
    properties: Mapping[str, Any] = tool["inputSchema"].get("properties", {})
    read = {k: _lenient(v, _kinds(properties[k])) for k, v in (given or {}).items() if k in properties}
    errors = sorted(_validator(tool["name"], single_bank).iter_errors(read), key=lambda e: list(e.path))
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        first = best_match([errors[0]])  # within an anyOf, the branch that came nearest, and where in it
        raise ArgumentError(f"Invalid arguments for tool '{tool['name']}': {_described(first)}{more}")
    return read


def _described(error: ValidationError) -> str:
    """What is wrong, never the value sent (it may be a secret, or megabytes)."""
    where = ".".join(str(p) for p in error.absolute_path) or "arguments"
    rule, wanted = error.validator, error.validator_value
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    if rule == "type" or rule == "anyOf":
        kinds = sorted(_kinds(schema)) if rule == "anyOf" else [str(wanted)]
        return f"{where}: must be {' or '.join(kinds)}, not {_json_kind(error.instance)}"
    if rule == "required":
        given = error.instance if isinstance(error.instance, Mapping) else {}
        missing = next((k for k in wanted if k not in given), "?") if isinstance(wanted, list) else "?"
        return f"{missing}: a required argument is missing"
    if rule in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength"):
        return f"{where}: {rule} is {wanted}"
    if rule == "enum":
        return f"{where}: must be one of {', '.join(map(str, wanted)) if isinstance(wanted, list) else wanted}"
    if rule == "additionalProperties":
        return f"{where}: unknown fields are not allowed"
    return f"{where}: does not match the schema ({rule})"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return {int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "value")
