"""``memwarden store``: the self-hosted store."""

from __future__ import annotations

import click

from memwarden.proxy.cli.client import URL_OPTION, Client, answer


@click.group("store")
def store_group() -> None:
    """The self-hosted store (backend = "local")."""


@store_group.command("reembed")
@click.argument("bank")
@URL_OPTION
def store_reembed(bank: str, url: str) -> None:
    """Re-embed BANK's memories with the configured embedder, after a change of local.embedder.

    Until it is done the bank refuses writes (409) and recall leaves its old vectors out (keyword
    retrieval only); run it again to resume an interrupted one.

    \b
    Example:
        memwarden store reembed team-a
    """
    import httpx

    r = Client(url).request("POST", "banks", bank, "reembed", timeout=httpx.Timeout(30, read=None))
    body = answer(r)
    if r.status_code != 200:
        raise click.ClickException(str(body.get("detail", body) if isinstance(body, dict) else body))
    click.echo(
        f"bank {bank}: {body['reembedded']} memories re-embedded with {body['embedder']}"
        f" (was {body['previous_embedder'] or 'none'})"
    )
