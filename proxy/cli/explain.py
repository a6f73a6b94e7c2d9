"""``memwarden explain``: why a recall returns what it returns."""

from __future__ import annotations

import json
from typing import Any

import click

from memwarden.proxy.cli.client import URL_OPTION, Client


def _score(part: dict[str, Any] | None) -> str:
    if not part or part.get("score") is None:
        return "-"
    rank = f" #{part['rank']}" if part.get("rank") else ""
    return f"{part['score']:.3g}{rank}"


def _explain_text(account: dict[str, Any], limit: int) -> str:
    lines = [f"explain {account['query']!r} in bank {account['bank_id']} (backend {account['backend']})"]
    tags = account["tag_filter"]
    if tags["sent"]:
        lines.append(f"tag filter: {json.dumps(tags['sent'], ensure_ascii=False)}")
        if tags["normalized"]:
            lines.append(f"  expanded to both spellings: {json.dumps(tags['expanded'], ensure_ascii=False)}")
    if account.get("embedder"):
        lines.append(f"embedder {account['embedder']}; query vector head {account['query_vector_head']}")
    if account.get("note"):
        lines.append(account["note"])
    if account.get("fts_query") is not None or account.get("arms"):
        lines.append(f"full-text query: {account.get('fts_query') or '(none: no term of the query is in the bank)'}")
    if account.get("arms"):
        arms = account["arms"]
        lines.append(f"candidates: vector {arms['semantic']}, full text {arms['keyword']}; {account.get('fusion', '')}")
    summary = account["summary"]
    excluded = ", ".join(f"{k} {v}" for k, v in summary["excluded"].items()) or "none"
    lines.append(f"{summary['candidates']} candidates: {summary['returned']} returned; excluded: {excluded}")
    lines.append("")
    lines.append(f"{'outcome':<9} {'fused':>7} {'semantic':>12} {'keyword':>12}  text / reason")
    for c in account["candidates"][:limit]:
        fused = f"{c['fused']:.4f}" if c.get("fused") is not None else "-"
        text = (c.get("text") or "").replace("\n", " ")
        text = text if len(text) <= 70 else text[:69] + "…"
        lines.append(
            f"{c['outcome']:<9} {fused:>7} {_score(c.get('semantic')):>12} {_score(c.get('keyword')):>12}  {text}"
        )
        if c.get("reason"):
            lines.append(f"{'':<9} {'':>7} {'':>12} {'':>12}  ↳ {c['reason']}")
    if len(account["candidates"]) > limit:
        lines.append(f"… {len(account['candidates']) - limit} more (--limit, or --json for all)")
    return "\n".join(lines)


@click.command("explain")
@click.argument("bank")
@click.argument("query")
@click.option("--tag", "tags", multiple=True, help="A tag filter value (repeatable), either spelling.")
@click.option(
    "--tags-match",
    type=click.Choice(["any", "all", "any_strict", "all_strict", "exact"]),
    default="any",
    show_default=True,
)
@click.option(
    "--type", "types", multiple=True, help="Only these fact types (repeatable): world, experience, observation."
)
@click.option("--budget", type=click.Choice(["low", "mid", "high"]), default="mid", show_default=True)
@click.option("--max-tokens", type=click.IntRange(1), default=4096, show_default=True)
@click.option("--limit", type=click.IntRange(1), default=20, show_default=True, help="Candidates to print.")
@URL_OPTION
@click.option("--json", "as_json", is_flag=True, help="The whole account as JSON.")
def explain_command(
    bank: str,
    query: str,
    tags: tuple[str, ...],
    tags_match: str,
    types: tuple[str, ...],
    budget: str,
    max_tokens: int,
    limit: int,
    url: str,
    as_json: bool,
) -> None:
    """Show why a recall returns what it returns: the tag filter as expanded, the query vector's
    head, each retriever's candidates with their scores, and every exclusion with its reason.

    \b
    Examples:
        memwarden explain team-a "which port does search use" --tag topic=infra
        memwarden explain team-a "部署" --tag user:alice --tags-match all_strict --json
    """
    body: dict[str, Any] = {"query": query, "budget": budget, "max_tokens": max_tokens}
    if tags:
        body["tags"], body["tags_match"] = list(tags), tags_match
    if types:
        body["types"] = list(types)
    account = Client(url).call("POST", "banks", bank, "explain", json=body)
    click.echo(json.dumps(account, ensure_ascii=False, indent=2) if as_json else _explain_text(account, limit))
