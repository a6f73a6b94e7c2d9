"""``memwarden memories``: the ledger's memories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.common import CONFIG_OPTION, DATA_DIR_OPTION, JSON_OPTION, echo_json
from memwarden.proxy.cli.offline import open_data_dir


@click.group("memories")
def memories_group() -> None:
    """The ledger's memories: list, show, archive, restore, feedback."""


def _memory_line(m: dict[str, Any]) -> str:
    labels = f"{m.get('topic') or '-'}/{m.get('stage') or '-'}"
    text = m["content"].replace("\n", " ")
    return f"{m['id']}  {m['status']:<10} {labels:<22} {text[:80]}"


@memories_group.command("list")
@click.argument("bank")
@click.option("--status", help="Comma-separated: active, review, archived, superseded, rejected, pending, failed.")
@click.option("--topic")
@click.option("--stage")
@click.option(
    "--tag", "tags", multiple=True, help="Either spelling, key:value or key=value (repeatable: all must hold)."
)
@click.option("--topic-key")
@click.option("--text", "q", help="Substring of the content (case-insensitive).")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@click.option("--after", help="The page after this cursor (the `next:` a page prints): deep pages stay fast.")
@URL_OPTION
@DATA_DIR_OPTION
@CONFIG_OPTION
@JSON_OPTION
def memories_list(
    bank: str,
    status: str | None,
    topic: str | None,
    stage: str | None,
    tags: tuple[str, ...],
    topic_key: str | None,
    q: str | None,
    limit: int,
    offset: int,
    after: str | None,
    url: str,
    data_dir: Path | None,
    config: Path | None,
    as_json: bool,
) -> None:
    """List BANK's memories as the ledger holds them, newest first (from a running memwarden, or
    with --data-dir straight from its database, read-only).

    \b
    Example:
        memwarden memories list team-a --status active --tag topic=infra
        memwarden memories list team-a --after eyIyMDI2…   # the page after the one that printed it
    """
    params: list[tuple[str, str]] = [("limit", str(limit)), ("offset", str(offset))]
    named = (
        ("status", status),
        ("topic", topic),
        ("stage", stage),
        ("topic_key", topic_key),
        ("q", q),
        ("after", after),
    )
    for key, value in named:
        if value:
            params.append((key, value))
    params += [("tag", t) for t in tags]
    if data_dir is not None or config is not None:
        from memwarden.db.memory_reads import list_memories
        from memwarden.fronts.admin.memories import ledger_query
        from memwarden.fronts.query import QueryProblem

        try:
            query = ledger_query(params)
        except QueryProblem as exc:
            raise click.ClickException(str(exc)) from None  # it names the parameter
        page = list_memories(open_data_dir(config, data_dir), bank, query)
    else:
        page = Client(url).call("GET", "banks", bank, "memories", params=params)
    if as_json:
        echo_json(page)
        return
    for m in page["items"]:
        click.echo(_memory_line(m))
    click.echo(f"{len(page['items'])} of {page['total']}")
    if page.get("next"):
        click.echo(f"next: --after {page['next']}")


@memories_group.command("show")
@click.argument("bank")
@click.argument("memory_id")
@URL_OPTION
@DATA_DIR_OPTION
@CONFIG_OPTION
@JSON_OPTION
def memories_show(
    bank: str, memory_id: str, url: str, data_dir: Path | None, config: Path | None, as_json: bool
) -> None:
    """One memory with its event timeline."""
    if data_dir is not None or config is not None:
        from memwarden.db.memory_reads import memory_account

        m = memory_account(open_data_dir(config, data_dir), bank, memory_id)
        if m is None:
            raise click.ClickException(f"Memory '{memory_id}' not found in bank '{bank}'")
    else:
        m = Client(url).call("GET", "banks", bank, "memories", memory_id)
    if as_json:
        echo_json(m)
        return
    click.echo(_memory_line(m))
    click.echo(
        f"tags {', '.join(m['tags']) or '-'}; topic key {m.get('topic_key') or '-'}; document {m.get('document_id')}"
    )
    click.echo(f"hits {m['hit_count']}; feedback {m['feedback']['score']:+d} ({m['feedback']['count']})")
    for e in m["events"]:
        why = f" — {e['reason']}" if e.get("reason") else ""
        click.echo(f"  {e['ts']}  {e['action']:<12} {e['source']:<10}{why}")


@memories_group.command("archive")
@click.argument("bank")
@click.argument("memory_id")
@click.option("--reason", help="Why (kept in the audit log).")
@URL_OPTION
def memories_archive(bank: str, memory_id: str, reason: str | None, url: str) -> None:
    """Take a memory out of the backend (recall stops returning it); the ledger keeps it."""
    body = Client(url).call("POST", "banks", bank, "memories", memory_id, "archive", json={"reason": reason})
    click.echo(f"{memory_id} archived ({len(body['backend']['invalidated'])} backend facts invalidated)")


@memories_group.command("restore")
@click.argument("bank")
@click.argument("memory_id")
@URL_OPTION
def memories_restore(bank: str, memory_id: str, url: str) -> None:
    """Put an archived memory back in the backend (re-created from the ledger if it is gone)."""
    body = Client(url).call("POST", "banks", bank, "memories", memory_id, "restore")
    how = (
        "re-created"
        if body["backend"].get("recreated")
        else f"{len(body['backend']['revalidated'])} facts re-validated"
    )
    click.echo(f"{memory_id} restored ({how})")


@memories_group.command("feedback")
@click.argument("bank")
@click.argument("memory_id")
@click.argument("score", type=click.Choice(["up", "down", "+1", "-1"]))
@click.option("--reason")
@URL_OPTION
def memories_feedback(bank: str, memory_id: str, score: str, reason: str | None, url: str) -> None:
    """Record feedback on a memory: up (+1) or down (-1, or ``-- -1``). Audited.

    \b
    Example:
        memwarden memories feedback team-a 3f2a9c… down --reason "outdated port"
    """
    value = 1 if score in ("up", "+1") else -1
    Client(url).call("POST", "banks", bank, "memories", memory_id, "feedback", json={"score": value, "reason": reason})
    click.echo(f"{memory_id}: feedback {score} recorded")
