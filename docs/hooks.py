"""MkDocs hook: the reference pages, generated at every build so that they never go stale.

``mkdocs.yml`` names this file under ``hooks:``. On ``on_files`` it adds three pages that exist
only in the build (nothing is written into ``docs/``):

* ``reference/configuration.md`` — every settings section and key, from the pydantic models in
  ``memwarden/settings`` (type, default, constraints, description, environment variable);
* ``reference/cli.md`` — every ``memwarden`` command, from the click command tree;
* ``reference/http-api.md`` — every path and method of memwarden's OpenAPI document
  (``memwarden.fronts.openapi.document()``, served at ``/warden/openapi.json``), grouped, and the
  document itself as ``reference/openapi.json``.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import annotated_types
import click
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from pydantic import BaseModel, HttpUrl, SecretStr
from pydantic.fields import FieldInfo

GENERATED_NOTE = (
    "!!! note\n    This page is generated from the code at every build of the documentation"
    " (`docs/hooks.py`): it is always the installed version's truth.\n"
)


def _cell(text: str) -> str:
    """Text made safe for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


def _prose(text: str) -> str:
    """Plain text (a help string, a description) as Markdown: its ``code`` (reStructuredText's
    double backticks, or Markdown's single ones) kept as code, nothing else read as markup."""
    parts = text.replace("``", "`").split("`")
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0 or i == len(parts) - 1:
            part = part.replace("\\", "\\\\")
            for ch in "*_[]":
                part = part.replace(ch, "\\" + ch)
            part = part.replace("<", "&lt;").replace(">", "&gt;")
        out.append(part)
    return "`".join(out)


def _text(text: str) -> str:
    """A description for a table cell: one line, no pipes, no markup."""
    return _cell(_prose(text))


def _docstring(text: str) -> str:
    """A model's docstring as Markdown."""
    return _prose(inspect.cleandoc(text))


# --- Configuration ------------------------------------------------------------------------------


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _optional(annotation: Any) -> tuple[Any, bool]:
    """The annotation without ``None``, and whether ``None`` was allowed."""
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0]), True
    return annotation, False


def _type_name(annotation: Any) -> str:
    annotation, _ = _optional(annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{json.dumps(a, ensure_ascii=False)}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"table of {_type_name(args[1])}"
    if _is_model(annotation):
        return "table"
    names: dict[Any, str] = {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        Path: "path",
        HttpUrl: "URL",
        SecretStr: "string (secret)",
    }
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _constraints(info: FieldInfo) -> str:
    out: list[str] = []
    for meta in info.metadata:
        for kind, attr, mark in (
            (annotated_types.Ge, "ge", "≥"),
            (annotated_types.Gt, "gt", ">"),
            (annotated_types.Le, "le", "≤"),
            (annotated_types.Lt, "lt", "<"),
        ):
            if isinstance(meta, kind):
                bound = getattr(meta, attr)
                out.append(f"{mark} {bound:,}" if isinstance(bound, int) else f"{mark} {bound}")
        if isinstance(meta, annotated_types.MinLen) and meta.min_length:
            out.append("not empty" if meta.min_length == 1 else f"at least {meta.min_length}")
    return ", ".join(out)


def _toml(value: Any) -> str:
    """A default as it would be written in memwarden.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Path):
        text = value.as_posix()
        return json.dumps(text if value.is_absolute() or text.startswith(".") else f"./{text}")
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


class _Section:
    def __init__(self, header: str, doc: str) -> None:
        self.header = header
        self.doc = doc
        self.rows: list[tuple[str, str, str, str, str]] = []
        self.long_defaults: list[tuple[str, str]] = []


def _walk(model: type[BaseModel], path: tuple[str, ...], header: str, env: bool, out: list[_Section]) -> None:
    """One section per model: its scalar keys as rows, its sub-tables as sections after it.

    ``env``: whether the keys have an environment spelling (not inside a list of tables)."""
    from memwarden.settings import ENV_PREFIX

    own_doc = model.__dict__.get("__doc__") or ""
    section = _Section(header, _docstring(own_doc) if own_doc else "")
    out.append(section)
    later: list[tuple[type[BaseModel], tuple[str, ...], str, bool]] = []
    for name, info in model.model_fields.items():
        annotation, _ = _optional(info.annotation)
        key = ".".join((*path, name))
        env_name = ENV_PREFIX + "__".join(p.upper() for p in (*path, name)) if env else None
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if _is_model(annotation):
            later.append((annotation, (*path, name), f"[{key}]", env))
            continue
        if origin is dict and _is_model(_unwrap(args[1])):
            placeholder = "<bank>" if name == "banks" else "<name>"
            later.append(
                (
                    _unwrap(args[1]),
                    (*path, name, placeholder),
                    f"[{key}.{placeholder}]",
                    env,
                )
            )
            continue
        if origin is list and _is_model(_unwrap(args[0])):
            section.rows.append(
                (
                    f"`{name}`",
                    f"list of tables (`[[{key}]]`, below)",
                    "`[]`",
                    f"`{env_name}` (JSON)" if env_name else "",
                    _text(info.description or ""),
                )
            )
            later.append((_unwrap(args[0]), (*path, name), f"[[{key}]]", False))
            continue
        if info.is_required():
            default = "required"
        else:
            value = info.get_default(call_default_factory=True)
            if value is None:
                default = "unset"
            else:
                text = _toml(value)
                if "\n" in text or len(text) > 60:
                    section.long_defaults.append((key, value if isinstance(value, str) else text))
                    default = "(below)"
                else:
                    default = f"`{_cell(text)}`"
        type_text = _type_name(info.annotation)
        limits = _constraints(info)
        if limits:
            type_text += f" ({limits})"
        env_text = ""
        if env_name:
            env_text = f"`{env_name}`" + (" (JSON)" if origin in (list, dict) else "")
        section.rows.append((f"`{name}`", type_text, default, env_text, _text(info.description or "")))
    for sub_model, sub_path, sub_header, sub_env in later:
        _walk(sub_model, sub_path, sub_header, sub_env, out)


def configuration_page() -> str:
    from memwarden.settings import ENV_PREFIX, ENV_RESERVED, Settings

    sections: list[_Section] = []
    _walk(Settings, (), "Top level", True, sections)
    reserved = ", ".join(f"`{name}`" for name in sorted(ENV_RESERVED))
    lines = [
        "# Configuration reference",
        "",
        GENERATED_NOTE,
        "memwarden reads one frozen settings object at start-up. Sources, later wins:",
        "",
        "1. the defaults below;",
        "2. the TOML file given with `--config FILE` (or named by the `MEMWARDEN_CONFIG` variable);",
        "3. `MEMWARDEN_*` environment variables;",
        "4. command-line flags (`memwarden serve --host/--port/--data-dir/--upstream/--allow-unauthenticated`).",
        "",
        "An unknown key or a value of the wrong type stops start-up with a one-line message that names"
        " the key. `config.example.toml` at the top of the repository lists every key with its default,"
        " ready to copy to `memwarden.toml`.",
        "",
        "## Environment variables",
        "",
        f"Every key has an environment spelling: `{ENV_PREFIX}`, then the key's path with `__` (two"
        " underscores) between the levels, e.g. `MEMWARDEN_SERVER__PORT=9000` for `server.port` and"
        " `MEMWARDEN_BACKENDS__HINDSIGHT__URL=http://127.0.0.1:8888` for `backends.hindsight.url`."
        " The name is read case-insensitively (it is lower-cased before it is matched, so a bank name"
        " in `MEMWARDEN_GOVERNANCE__BANKS__<BANK>__MODE` is lower-cased too).",
        "",
        "- Scalars are written as they are (`8890`, `true`, `json`); lists and tables are written as JSON"
        " (`MEMWARDEN_SERVER__ALLOWED_ORIGINS='[\"https://ops.example\"]'`).",
        f"- Every `{ENV_PREFIX}*` variable except {reserved} is read as a setting: an unknown one stops"
        " start-up (`unknown key …`). (`MEMWARDEN_API_KEY` is the command line's own key, not a setting.)",
        "- The LLM's key is never a setting: `llm.api_key_env` names the variable that holds it, and"
        " `llm.api_key` (or `MEMWARDEN_LLM__API_KEY`) is refused.",
        "",
        "```console",
        "$ MEMWARDEN_SERVER__PORT=many memwarden serve --upstream http://127.0.0.1:8888",
        "Error: invalid configuration (defaults + MEMWARDEN_* environment + command line): 'server.port':"
        " Input should be a valid integer, unable to parse string as an integer (got 'many')",
        "```",
        "",
    ]
    for section in sections:
        if not section.rows and not section.doc:
            continue
        lines += [f"## {section.header.replace('<', '&lt;').replace('>', '&gt;')}", ""]
        if section.doc:
            lines += [section.doc, ""]
        if section.rows:
            lines += [
                "| key | type | default | environment variable | description |",
                "|---|---|---|---|---|",
            ]
            lines += [f"| {' | '.join(row)} |" for row in section.rows]
            lines.append("")
        for key, text in section.long_defaults:
            lines += [f"Default of `{key}`:", "", "```text", text, "```", ""]
    return "\n".join(lines)


# --- Command line -------------------------------------------------------------------------------


def _commands(ctx: click.Context) -> Iterator[click.Context]:
    yield ctx
    command = ctx.command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _commands(click.Context(sub, info_name=name, parent=ctx))


def _help_markdown(text: str) -> list[str]:
    """A click help text: ``\\b`` paragraphs (examples) verbatim, the others as prose."""
    out: list[str] = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        if paragraph.startswith("\b"):
            out += ["```text", paragraph[1:].strip("\n"), "```", ""]
        elif paragraph.strip():
            out += [_prose(" ".join(paragraph.split())), ""]
    return out


def _default_text(param: click.Parameter) -> str:
    if param.required:
        return "required"
    default = param.default
    if default is None or type(default).__name__ == "Sentinel" or callable(default):
        return ""
    if isinstance(param, click.Option) and param.is_flag and default is False:
        return ""
    if isinstance(default, list | tuple):
        return "" if not default else f"`{' '.join(str(d) for d in default)}`"
    return f"`{default}`"


def cli_page() -> str:
    from memwarden.proxy.cli import main

    root = click.Context(main, info_name="memwarden")
    contexts = list(_commands(root))
    lines = [
        "# Command-line reference",
        "",
        GENERATED_NOTE,
        "One command, `memwarden`, with a subcommand per job. Every command's `--help` says the same"
        " as this page. The operator commands talk to a running memwarden (`--url`, by default"
        " `http://127.0.0.1:8890`) and send the key in `MEMWARDEN_API_KEY` when it is set; the pure"
        " reads of the ledger also open a data directory read-only with `--data-dir` when no server"
        " runs. Errors are one line with the HTTP status (`404: Memory 'x' not found in bank 'b'`)"
        " and exit 1.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for ctx in contexts[1:]:
        if isinstance(ctx.command, click.Group):
            continue
        anchor = ctx.command_path.replace(" ", "-")
        short = ctx.command.get_short_help_str(limit=120)
        lines.append(f"| [`{ctx.command_path}`](#{anchor}) | {_text(short)} |")
    lines.append("")
    for ctx in contexts:
        command = ctx.command
        depth = min(ctx.command_path.count(" ") + 1, 4)
        lines += [f"{'#' * (depth + 1)} {ctx.command_path} {{#{ctx.command_path.replace(' ', '-')}}}", ""]
        if command.help:
            lines += _help_markdown(command.help)
        usage = " ".join(command.collect_usage_pieces(ctx))
        lines += ["```text", f"{ctx.command_path} {usage}".rstrip(), "```", ""]
        if isinstance(command, click.Group):
            subcommands = [f"`{name}`" for name in command.list_commands(ctx)]
            lines += ["Subcommands: " + ", ".join(subcommands) + ".", ""]
        arguments = [p for p in command.params if isinstance(p, click.Argument)]
        if arguments:
            described = [f"`{p.make_metavar(ctx)}`" + ("" if p.required else " (optional)") for p in arguments]
            lines += ["Arguments: " + ", ".join(described) + ".", ""]
        options = [p for p in command.params if isinstance(p, click.Option) and not p.hidden]
        if options:
            lines += ["| option | value | default | description |", "|---|---|---|---|"]
            for option in options:
                names = ", ".join(f"`{o}`" for o in (*option.opts, *option.secondary_opts))
                value = "" if option.is_flag else f"`{option.make_metavar(ctx)}`"
                if option.multiple:
                    value += " (repeatable)"
                description = _text(option.help or "")
                lines.append(f"| {names} | {value} | {_default_text(option)} | {description} |")
            lines.append("")
    return "\n".join(lines)


# --- HTTP API -----------------------------------------------------------------------------------

METHODS = ("get", "put", "post", "patch", "delete", "head", "options")


def _operations_table(rows: list[tuple[str, str, dict[str, Any]]]) -> list[str]:
    lines = ["| method | path | what it does | answers | API key |", "|---|---|---|---|---|"]
    for method, path, op in rows:
        codes = sorted(op.get("responses", {}), key=lambda c: (not c.isdigit(), c))
        key = "never" if op.get("security") == [] else "once keys exist"
        summary = op.get("summary") or op.get("description", "").split("\n")[0]
        lines.append(f"| `{method.upper()}` | `{path}` | {_cell(summary)} | {_cell(' '.join(codes))} | {key} |")
    lines.append("")
    return lines


def http_api_page(document: bytes) -> str:
    doc = json.loads(document)
    warden: list[tuple[str, str, dict[str, Any]]] = []
    mem0: list[tuple[str, str, dict[str, Any]]] = []
    hindsight: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, item in doc["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            if path.startswith("/warden"):
                warden.append((method, path, op))
            elif path.startswith("/mem0"):
                mem0.append((method, path, op))
            else:
                tag = "MCP" if path.startswith("/mcp") else (op.get("tags") or ["Other"])[0]
                hindsight.setdefault(tag, []).append((method, path, op))
    total = len(warden) + len(mem0) + sum(len(v) for v in hindsight.values())
    info = doc["info"]
    lines = [
        "# HTTP API",
        "",
        GENERATED_NOTE,
        f"memwarden {info['version']} serves {total} operations on {len(doc['paths'])} paths. The OpenAPI"
        " 3.1 document of all of them is served by memwarden itself at `GET /warden/openapi.json`"
        " (open, like the health probes) and is [downloadable here](openapi.json). Three groups:",
        "",
        f"- [memwarden's own API](#memwardens-own-api-warden) under `/warden` ({len(warden)} operations);",
        f"- [Hindsight's API](#hindsights-api) ({sum(len(v) for v in hindsight.values())} operations):"
        " every route of Hindsight 1.1.0, governed or passed through, plus memwarden's own MCP server at"
        " `/mcp` and `/mcp/{bank}/`, each tool call governed like its HTTP twin"
        " ([Connect MCP agents](../guides/mcp.md));",
        f"- [Mem0's API](#mem0s-api-mem0) under `/mem0` ({len(mem0)} operations): the platform's paths"
        " (the official `mem0ai` client) and the self-hosted REST server's.",
        "",
        "*answers* lists the status codes the document declares for the operation (memwarden adds its"
        " own to Hindsight's: 400 for a bank id or path id it refuses, 401/403 for API keys, 502 when"
        " the backend fails, and the governed routes' 409/413). *API key*: the probes and the"
        " dashboard's files never need one; every other route does once any key exists"
        " ([API keys and scopes](../guides/api-keys.md)).",
        "",
        "## memwarden's own API (/warden)",
        "",
    ]
    lines += _operations_table(warden)
    lines += ["## Hindsight's API", ""]
    for tag in sorted(hindsight, key=lambda t: (t == "MCP", t)):
        lines += [f"### {tag}", ""]
        lines += _operations_table(hindsight[tag])
    lines += ["## Mem0's API (/mem0)", ""]
    lines += _operations_table(mem0)
    return "\n".join(lines)


# --- The hook -----------------------------------------------------------------------------------


def _add(files: Files, config: MkDocsConfig, uri: str, content: str | bytes) -> None:
    existing = files.get_file_from_path(uri)
    if existing is not None:
        files.remove(existing)
    files.append(File.generated(config, uri, content=content))


def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    from memwarden.fronts.openapi import document

    openapi = document()
    pages: dict[str, Callable[[], str]] = {
        "reference/configuration.md": configuration_page,
        "reference/cli.md": cli_page,
        "reference/http-api.md": lambda: http_api_page(openapi),
    }
    for uri, make in pages.items():
        _add(files, config, uri, make())
    _add(files, config, "reference/openapi.json", openapi)
    return files
