"""``memwarden retention``: the topic × stage lifecycle."""

from __future__ import annotations

import click

from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.common import JSON_OPTION, echo_json


@click.group("retention")
def retention_group() -> None:
    """The topic × stage lifecycle: process memories archived after 7 days, reference after 30."""


@retention_group.command("run")
@click.option("--dry-run", is_flag=True, help="List what is due; change nothing.")
@click.option("--bank", help="Only this bank.")
@URL_OPTION
@JSON_OPTION
def retention_run(dry_run: bool, bank: str | None, url: str, as_json: bool) -> None:
    """Archive the active memories older than their stage's period ([retention.periods]).

    \b
    Examples:
        memwarden retention run --dry-run
        memwarden retention run --bank team-a
    """
    params = {"dry_run": "true" if dry_run else "false", **({"bank": bank} if bank else {})}
    result = Client(url).call("POST", "retention", "run", params=params)
    if as_json:
        echo_json(result)
        return
    for m in result["due"]:
        mark = "due" if dry_run else ("archived" if m["id"] in result["archived"] else "skipped")
        age = f"{m['age_days']:>6} d > {m['period_days']} d"
        click.echo(f"{mark:<9} {m['bank']}/{m['id']}  {m['stage']:<10} {age}  {m['content'][:60]}")
    for s in result["skipped"]:
        click.echo(f"  skipped {s['id']}: {s['reason']}")
    for e in result.get("expired", []):
        mark = "would expire" if dry_run else "expired"
        gone = f"{e['memories']} memories no longer restorable"
        click.echo(f"{mark}: deletion {e['snapshot_id']} of bank {e['bank']} ({gone})")
    verb = "would be archived" if dry_run else "archived"
    click.echo(f"{len(result['due'])} due; {len(result['archived']) if not dry_run else len(result['due'])} {verb}")
