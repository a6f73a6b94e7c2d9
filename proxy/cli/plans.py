"""``memwarden plan``: operations prepared as a dry run, applied with a confirmation phrase."""

from __future__ import annotations

import json
from typing import Any

import click

from memwarden.proxy.cli.client import URL_OPTION, Client
from memwarden.proxy.cli.common import JSON_OPTION, echo_json


@click.group("plan")
def plan_group() -> None:
    """Plans: operations prepared as a dry run, applied with the plan's confirmation phrase."""


def _plan_text(plan: dict[str, Any]) -> str:
    lines = [f"plan {plan['id']} ({plan['status']}) in bank {plan['bank']}, expires {plan['expires_at']}"]
    if plan.get("reason"):
        lines.append(f"reason: {plan['reason']}")
    for op in plan["operations"]:
        lines.append(f"  {op['op']:<8} {op['memory_id']}  {op['content'][:60]}")
        lines.append(f"           now {op['expected']['status']}; will be {op['effect']}")
    if plan.get("result"):
        lines.append(f"result: {json.dumps(plan['result'], ensure_ascii=False)}")
    if plan["status"] == "planned":
        lines.append(f"to apply, confirm with: {plan['phrase']}")
    return "\n".join(lines)


def _echo_plan(plan: dict[str, Any], as_json: bool) -> None:
    if as_json:
        echo_json(plan)
    else:
        click.echo(_plan_text(plan))


@plan_group.command("create")
@click.argument("bank")
@click.option("--archive", "archive_ids", multiple=True, help="A memory to archive (repeatable).")
@click.option("--restore", "restore_ids", multiple=True, help="A memory to restore (repeatable).")
@click.option("--approve", "approve_ids", multiple=True, help="A review item to approve (repeatable).")
@click.option("--reject", "reject_ids", multiple=True, help="A review item to reject (repeatable).")
@click.option("--from-cleanup", is_flag=True, help="Archive what the cleanup report lists.")
@click.option("--reason")
@URL_OPTION
@JSON_OPTION
def plan_create(
    bank: str,
    archive_ids: tuple[str, ...],
    restore_ids: tuple[str, ...],
    approve_ids: tuple[str, ...],
    reject_ids: tuple[str, ...],
    from_cleanup: bool,
    reason: str | None,
    url: str,
    as_json: bool,
) -> None:
    """Make a plan (a dry run: nothing changes until it is applied).

    \b
    Examples:
        memwarden plan create team-a --archive 3f2a… --archive 9b1c… --reason "stale infra notes"
        memwarden plan create team-a --from-cleanup
    """
    ops = [("archive", archive_ids), ("restore", restore_ids), ("approve", approve_ids), ("reject", reject_ids)]
    body: dict[str, Any] = {"operations": [{"op": op, "memory_id": m} for op, ids in ops for m in ids]}
    if from_cleanup:
        body = {"from": "cleanup"}
    if reason:
        body["reason"] = reason
    _echo_plan(Client(url).call("POST", "banks", bank, "plans", json=body, expect=201), as_json)


@plan_group.command("list")
@click.argument("bank")
@URL_OPTION
@JSON_OPTION
def plan_list(bank: str, url: str, as_json: bool) -> None:
    """BANK's plans, newest first."""
    page = Client(url).call("GET", "banks", bank, "plans")
    if as_json:
        echo_json(page)
        return
    for p in page["items"]:
        click.echo(f"{p['id']}  {p['status']:<18} {p['operations']:>4} operations  made {p['created_at']}")


@plan_group.command("show")
@click.argument("bank")
@click.argument("plan_id")
@URL_OPTION
@JSON_OPTION
def plan_show(bank: str, plan_id: str, url: str, as_json: bool) -> None:
    """One plan: its operations, each target's state when planned, and the result once applied."""
    _echo_plan(Client(url).call("GET", "banks", bank, "plans", plan_id), as_json)


@plan_group.command("apply")
@click.argument("bank")
@click.argument("plan_id")
@click.option("--phrase", help="The plan's confirmation phrase (asked for when not given).")
@URL_OPTION
def plan_apply(bank: str, plan_id: str, phrase: str | None, url: str) -> None:
    """Apply a plan once its confirmation phrase is typed exactly."""
    client = Client(url)
    click.echo(_plan_text(client.call("GET", "banks", bank, "plans", plan_id)))
    if phrase is None:
        phrase = click.prompt("type the confirmation phrase", prompt_suffix=": ")
    result = client.call("POST", "banks", bank, "plans", plan_id, "apply", json={"phrase": phrase}, ok=(200, 502))
    applied = result["result"]["applied"]
    click.echo(f"plan {plan_id}: {result['status']}; {len(applied)} of {len(result['operations'])} operations applied")
    failed = result["result"]["failed"]
    if failed:
        click.echo(f"failed: {failed['op']} {failed['memory_id']}: {failed['detail']}", err=True)
        click.echo(f"not attempted: {len(result['result']['not_attempted'])}", err=True)
        raise SystemExit(1)
