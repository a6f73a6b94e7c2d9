"""``memwarden audit``: read, follow and verify the audit log."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

import click

from memwarden.db.common import Connection
from memwarden.proxy.cli.client import Client
from memwarden.proxy.cli.common import CONFIG_FILE_OPTION, settings
from memwarden.proxy.cli.offline import database_url, open_data_dir, open_readonly


@click.group("audit")
def audit_group() -> None:
    """Read, follow and verify the audit log (hash-chained, append-only)."""


def _format_event(event: dict[str, Any], as_json: bool) -> str:
    if as_json:
        return json.dumps(event, ensure_ascii=False, sort_keys=True)
    memory = f" mem={str(event['memory_id'])[:12]}" if event.get("memory_id") else ""
    rule = f" rule={event['rule']}" if event.get("rule") else ""
    reason = f"  {event['reason']}" if event.get("reason") else ""
    return f"#{event['seq']} {event['ts'][:19]} {event['action']:<14} {event.get('bank') or '-'}{memory}{rule}{reason}"


@audit_group.command("tail")
@CONFIG_FILE_OPTION
@click.option("--data-dir", type=click.Path(path_type=Path), help="Read this data directory directly.")
@click.option("--url", help="Read from a running memwarden instead, e.g. http://127.0.0.1:8890.")
@click.option("-f", "--follow", is_flag=True, help="Keep printing new events as they come.")
@click.option("--bank", help="Only this bank's events.")
@click.option("--action", help="Only these actions (comma-separated), e.g. reject,review.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("-n", "--lines", default=20, show_default=True, type=click.IntRange(1, 1000), help="How many to show.")
def audit_tail(
    config: Path | None,
    data_dir: Path | None,
    url: str | None,
    follow: bool,
    bank: str | None,
    action: str | None,
    as_json: bool,
    lines: int,
) -> None:
    """Print the latest audit events, and with -f follow new ones.

    \b
    Examples:
        memwarden audit tail -n 50 --action reject,review
        memwarden audit tail -f --url http://127.0.0.1:8890 --json
    """
    if url:
        _tail_url(Client(url), follow, bank, action, as_json, lines)
    else:
        _tail_db(open_data_dir(config, data_dir), follow, bank, action, as_json, lines)


def _tail_db(db: Connection, follow: bool, bank: str | None, action: str | None, as_json: bool, lines: int) -> None:
    from memwarden.db.audit import event_filter, events_after, last_seq, latest_events

    where = event_filter(bank=bank, actions=[a for a in action.split(",") if a] if action else None)
    last = 0
    for event in latest_events(db, where, lines):
        click.echo(_format_event(event, as_json))
        last = event["seq"]
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends a follow
        while follow:
            last = max(last, last_seq(db))
            time.sleep(0.5)
            while page := events_after(db, where, last, 1000):
                for event in page:
                    click.echo(_format_event(event, as_json))
                last = page[-1]["seq"]


def _tail_url(client: Client, follow: bool, bank: str | None, action: str | None, as_json: bool, lines: int) -> None:
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends a follow
        _print_url(client, follow, bank, action, as_json, lines)


def _print_url(client: Client, follow: bool, bank: str | None, action: str | None, as_json: bool, lines: int) -> None:
    failure = f"cannot read the audit log from {client.base}"
    params = {k: v for k, v in {"bank": bank, "action": action, "tail": str(lines)}.items() if v}
    page = client.read("audit", params=params, failure=failure, timeout=30)
    events = page["events"]
    for event in events:
        click.echo(_format_event(event, as_json))
    if not follow:
        return
    last = str(events[-1]["seq"]) if events else ""
    stream_params = {k: v for k, v in params.items() if k != "tail"}
    headers = {"last-event-id": last} if last else {}
    if not last:
        stream_params["since"] = str(page.get("last_seq") or 0)
    for line in client.stream_lines("audit", "stream", params=stream_params, headers=headers, failure=failure):
        if line.startswith("data: "):
            click.echo(_format_event(json.loads(line[6:]), as_json))


@audit_group.command("verify")
@CONFIG_FILE_OPTION
@click.option("--data-dir", type=click.Path(path_type=Path), help="Check this data directory directly.")
@click.option("--url", help="Ask a running memwarden instead.")
@click.option(
    "--checkpoint", help="Also check against this checkpoint (its JSON, e.g. from an audit_checkpoint log line)."
)
def audit_verify(config: Path | None, data_dir: Path | None, url: str | None, checkpoint: str | None) -> None:
    """Check the audit log: its keyed hash chain, and the chain against its last signed checkpoint
    (and --checkpoint): exit 0 when intact, 1 naming each edited, re-chained or deleted event.

    \b
    Examples:
        memwarden audit verify --data-dir ./memwarden-data
        memwarden audit verify --data-dir ./memwarden-data --checkpoint '{"seq": 812, "hash": "…", …}'
    """
    if url:
        params = {"checkpoint": checkpoint} if checkpoint else None
        result = Client(url).read("audit", "verify", params=params, failure=f"cannot verify through {url}")
        count, problems = result["events"], result["problems"]
    else:
        resolved = settings(config, {"data_dir": str(data_dir)} if data_dir else {})
        count, problems = _verify_db(
            resolved.data_dir, resolved.audit.checkpoint_dir, checkpoint, url=database_url(resolved)
        )
    if problems:
        for p in problems:
            click.echo(f"event {p['seq']}: {p['problem']}", err=True)
        raise SystemExit(1)
    click.echo(f"audit log intact: {count} events, hash chain verified")


@audit_group.command("acknowledge")
@CONFIG_FILE_OPTION
@click.option("--reason", required=True, help="What was looked at (audited).")
@click.option(
    "--data-dir", type=click.Path(path_type=Path), help="Acknowledge in this data directory (memwarden stopped)."
)
@click.option("--url", help="Acknowledge through a running memwarden (admin on every bank).")
def audit_acknowledge(config: Path | None, reason: str, data_dir: Path | None, url: str | None) -> None:
    """End the audit chain's alarms once you have looked at them: until then health is critical
    and every start repeats them. The acknowledgement is an audit event of its own.

    \b
    Examples:
        memwarden audit acknowledge --url http://127.0.0.1:8890 --reason "restored events 40-52 from backup"
        memwarden audit acknowledge --data-dir ./memwarden-data --reason "old ledger, key made anew"
    """
    from memwarden.db.database import Database, DatabaseError
    from memwarden.policies.field_secrets import masked

    if not reason.strip() or len(reason) > 2000:
        raise click.ClickException("--reason: what was looked at, 1 to 2000 characters")
    if url:
        result = Client(url).call("POST", "audit", "acknowledge", json={"reason": reason})
        count = result["acknowledged"]
    else:
        resolved = settings(config, {"data_dir": str(data_dir)} if data_dir else {})
        try:
            ledger = Database.open(
                resolved.data_dir, checkpoint_dir=resolved.audit.checkpoint_dir, url=database_url(resolved)
            )
        except DatabaseError as exc:
            raise click.ClickException(f"{exc} (a running memwarden: use --url)") from None
        try:
            count = ledger.acknowledge(masked(reason.strip()))
        finally:
            ledger.close()
    click.echo(f"acknowledged {count} audit alarm(s)")


def _verify_db(
    directory: Path, checkpoint_dir: Path | None, checkpoint: str | None, *, url: str | None
) -> tuple[int, list[dict[str, Any]]]:
    """The number of events and the chain's problems (keyed, against the checkpoints), with events
    deleted from its end that ``audit.jsonl`` still mirrors."""
    from memwarden.db import checkpoints
    from memwarden.db.audit import last_seq
    from memwarden.db.installation import read_installation_key, recorded_chain_start

    try:
        given = checkpoints.parse(checkpoint) if checkpoint else None
    except checkpoints.CheckpointError as exc:
        raise click.ClickException(f"--checkpoint: {exc}") from None
    db = open_readonly(directory, url)
    found = checkpoints.verify_all(
        db,
        installation_key=read_installation_key(directory),
        folder=checkpoint_dir or directory / "checkpoints",
        given=given,
        recorded=recorded_chain_start(directory),
    )
    problems = [{"seq": p.seq, "problem": p.problem} for p in found]
    count = last_seq(db)
    mirror = directory / "audit.jsonl"
    if mirror.exists() and url is None:  # SQLite's mirror (on PostgreSQL a leftover names nothing)
        mirrored = 0
        for line in mirror.read_text(encoding="utf-8").splitlines():
            try:
                mirrored = max(mirrored, int(json.loads(line)["seq"]))
            except (ValueError, KeyError):
                continue
        last = count
        if mirrored > last:
            span = f"{last + 1}" if mirrored == last + 1 else f"{last + 1}-{mirrored}"
            problems.append(
                {"seq": last + 1, "problem": f"event(s) {span} deleted from the end (still in audit.jsonl)"}
            )
    return count, problems
