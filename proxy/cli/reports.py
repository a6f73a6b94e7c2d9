"""``memwarden report``: pure reads, text for people, --json for machines."""

from __future__ import annotations

import json

import click

from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.common import JSON_OPTION, echo_json


@click.group("report")
def report_group() -> None:
    """Reports: pure reads, text for people, --json for machines."""


@report_group.command("cleanup")
@click.argument("bank")
@URL_OPTION
@JSON_OPTION
def report_cleanup(bank: str, url: str, as_json: bool) -> None:
    """Active memories worth archiving: noise by today's rules, expired, duplicates, stale active_context.

    \b
    Example:
        memwarden report cleanup team-a            # then: memwarden plan create team-a --from-cleanup
    """
    report = Client(url).call("GET", "banks", bank, "reports", "cleanup")
    if as_json:
        echo_json(report)
        return
    click.echo(f"bank {bank}: {len(report['candidates'])} of {report['active']} active memories are cleanup candidates")
    for c in report["candidates"]:
        mark = "" if c["plannable"] else f"  (not plannable: {c['note']})"
        click.echo(f"  {c['id']}  {'+'.join(c['kinds']):<22} {c['content'][:60]}{mark}")
        for why in c["reasons"]:
            click.echo(f"      {why}")


@report_group.command("health")
@click.argument("bank")
@click.option("--days", type=click.IntRange(1, 3650), default=7, show_default=True, help="The window.")
@URL_OPTION
@JSON_OPTION
def report_health(bank: str, days: int, url: str, as_json: bool) -> None:
    """ok / attention / critical, with the reasons: consistency, review queue, conflicts, cleanup."""
    report = Client(url).call("GET", "banks", bank, "reports", "health", params={"days": days})
    if as_json:
        echo_json(report)
        return
    click.echo(f"bank {bank}: {report['status']}")
    for reason in report["reasons"]:
        click.echo(f"  - {reason}")
    click.echo(f"memories: {json.dumps(report['memories'])}; new in {days} days: {json.dumps(report['new_in_window'])}")
    c = report["consistency"]
    click.echo(f"documents: {c['active_documents']} active in the ledger, {c['backend_documents']} in the backend")
    if c["store"]:
        s = c["store"]
        click.echo(f"store: {s['rows']} rows, {s['vectors']} vectors ({s['embedder']})")
    if report["status"] == "critical":
        raise SystemExit(2)
