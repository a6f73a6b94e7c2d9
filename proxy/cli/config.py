"""``memwarden config``: bank config snapshots and rollbacks (the config guard)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memwarden.proxy.cli.client import URL_OPTION, Client, answer, body_of, detail
from memwarden.proxy.cli.common import CONFIG_FILE_OPTION
from memwarden.proxy.cli.offline import open_data_dir


@click.group("config")
def config_group() -> None:
    """Bank config snapshots and rollbacks (the config guard)."""


def snapshot_line(s: dict[str, Any]) -> str:
    counts = " ".join(f"{k}={v}" for k, v in sorted((s.get("counts") or {}).items()))
    settled = "" if s.get("settled") else " (unsettled)"
    return (
        f"{s['id']}  {s['created_at'][:19]}  {s['reason']:<15} {s.get('outcome') or '-'!s:<19}"
        f" {counts}  memories={s.get('memories')} documents={s.get('documents')}{settled}"
    )


@config_group.command("snapshots")
@click.argument("bank")
@CONFIG_FILE_OPTION
@click.option("--data-dir", type=click.Path(path_type=Path), help="Read this data directory directly.")
@click.option("--url", help="Ask a running memwarden instead, e.g. http://127.0.0.1:8890.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def config_snapshots(bank: str, config: Path | None, data_dir: Path | None, url: str | None, as_json: bool) -> None:
    """List BANK's config snapshots, newest first: why each was taken, counts, outcome.

    \b
    Example:
        memwarden config snapshots team-a --url http://127.0.0.1:8890
    """
    if url:
        failure = f"cannot list snapshots through {url}"
        items = Client(url).read("banks", bank, "snapshots", failure=failure, timeout=30)["items"]
    else:
        from memwarden.db.snapshots import snapshot_summaries

        items = snapshot_summaries(open_data_dir(config, data_dir), bank)
    if not items and not as_json:
        click.echo(f"no snapshots for bank {bank}")
    for item in items:
        click.echo(json.dumps(item, ensure_ascii=False, sort_keys=True) if as_json else snapshot_line(item))


@config_group.command("rollback")
@click.argument("bank")
@click.argument("snapshot_id")
@URL_OPTION
@click.option("--yes", is_flag=True, help="Apply without asking (the preview is still printed).")
@click.option("--json", "as_json", is_flag=True, help="Print the preview and the result as JSON.")
def config_rollback(bank: str, snapshot_id: str, url: str, yes: bool, as_json: bool) -> None:
    """Return BANK to SNAPSHOT_ID: its config overrides exactly, and every memory that has gone
    since re-created from the ledger. Shows what it would do first and asks; run it again to resume
    a rollback a failing backend interrupted.

    \b
    Example:
        memwarden config rollback team-a 3f2a9c0d1e2b4a5f
    """
    run_rollback(Client(url), bank, snapshot_id, yes=yes, as_json=as_json)


def run_rollback(client: Client, bank: str, snapshot_id: str, *, yes: bool, as_json: bool) -> None:
    """Preview the rollback of ``bank`` to ``snapshot_id``, ask (unless ``yes``), apply, say what came back."""
    path = ("banks", bank, "snapshots", snapshot_id, "rollback")
    r = client.request("POST", *path, params={"preview": "true"}, timeout=300)
    if r.status_code != 200:
        raise click.ClickException(f"preview failed ({r.status_code}): {detail(r)}")
    plan = answer(r)["plan"]
    if as_json:
        click.echo(json.dumps({"preview": plan}, ensure_ascii=False))
    else:
        _print_preview(bank, snapshot_id, plan)
    if not plan["restore_overrides"] and not plan["memories_to_restore"]:
        click.echo("Nothing to do: the bank already matches the snapshot.")
        return
    if not yes and not click.confirm("Apply this rollback?", default=False):
        click.echo("Not applied.")
        raise SystemExit(1)
    import httpx

    resume = "run the command again to resume"
    r = client.request(  # a big restore takes a while
        "POST", *path, timeout=httpx.Timeout(30, read=3600), failure="rollback request failed", hint=resume
    )
    body = body_of(r)
    result = (body.get("result") if isinstance(body, dict) else None) or {}
    if as_json:
        click.echo(json.dumps({"result": result, "status": r.status_code}, ensure_ascii=False))
    else:
        restored = ", ".join(result.get("overrides_restored") or []) or "none"
        click.echo(
            f"Restored {result.get('memories_restored', 0)} memories in {result.get('documents_restored', 0)}"
            f" documents; overrides restored: {restored}."
        )
    if r.status_code != 200 or not result.get("complete"):
        raise click.ClickException(f"rollback incomplete: {result.get('error') or r.text}; {resume}")


def _print_preview(bank: str, snapshot_id: str, plan: dict[str, Any]) -> None:
    overrides = ", ".join(sorted(plan["restore_overrides"])) or "none (already as in the snapshot)"
    click.echo(f"Rollback of bank {bank} to snapshot {snapshot_id}:")
    click.echo(f"  config overrides to restore: {overrides}")
    click.echo(f"  memories missing since:      {plan['missing_memories']} ({plan['missing_documents']} documents)")
    documents = len(plan["documents_to_restore"])
    click.echo(f"  memories to re-create:       {plan['memories_to_restore']} in {documents} documents")
    if plan["unrestorable"]:
        click.echo(f"  not in the ledger (cannot be re-created): {len(plan['unrestorable'])}")
