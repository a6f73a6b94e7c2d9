"""``memwarden bank``: a bank as a whole, in Hindsight 1.1.0's transfer archive — exported to a file,
imported from one — so that a bank moves between memwarden's self-hosted store and a Hindsight.

Both commands speak Hindsight's transfer routes (``POST …/transfer/export``, the operation, the
download; ``POST …/transfer/import``), which memwarden serves as Hindsight does: ``--url`` /
``--into`` may name a memwarden or a Hindsight. ``export --data-dir`` reads a self-hosted
memwarden's database directly, read-only. A file is checked before it is written and before it
is sent (:mod:`memwarden.store.archive`): a truncated or edited archive never goes anywhere.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

from memwarden.proxy.cli.client import DEFAULT_URL, URL_OPTION, Client, body_of, detail
from memwarden.proxy.cli.common import CONFIG_OPTION, DATA_DIR_OPTION, JSON_OPTION, echo_json

if TYPE_CHECKING:
    import httpx

    from memwarden.store.archive_read import Archive

TIMEOUT_OPTION = click.option(
    "--timeout", type=click.FloatRange(1), default=600, show_default=True, help="Seconds to wait for the operation."
)


@click.group("bank")
def bank_group() -> None:
    """A bank as a whole: export it to a file (Hindsight's transfer archive), import one."""


def _bank_path(bank: str, *rest: str) -> str:
    return "/".join(("/v1/default/banks", quote(bank, safe=""), *rest))


def _send(client: Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One request to the server's Hindsight API (the key in ``MEMWARDEN_API_KEY`` goes with it)."""
    import httpx

    try:
        return httpx.request(method, client.base + path, headers=dict(client.auth), timeout=120, **kwargs)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach {client.url}: {exc}") from None


def _refused(what: str, response: httpx.Response) -> click.ClickException:
    said = detail(response)
    text = said if isinstance(said, str) else json.dumps(said)
    return click.ClickException(f"{what}: {response.status_code}: {text}")


def _finished(client: Client, bank: str, operation_id: str, timeout: float) -> dict[str, Any]:
    """The operation once it is over: its answer when completed, a one-line error otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        r = _send(client, "GET", _bank_path(bank, "operations", operation_id))
        status = body_of(r)
        if r.status_code != 200 or not isinstance(status, dict):
            raise _refused(f"operation {operation_id}", r)
        if status.get("status") == "completed":
            return status
        if status.get("status") in ("failed", "cancelled", "not_found"):
            raise click.ClickException(f"operation {operation_id} {status['status']}: {status.get('error_message')}")
        if time.monotonic() > deadline:
            raise click.ClickException(f"operation {operation_id} did not finish within {timeout:g} s")
        time.sleep(0.5)


def _checked(data: bytes, where: str) -> Archive:
    from memwarden.store.archive import ArchiveError
    from memwarden.store.archive_read import read

    try:
        return read(data)
    except ArchiveError as exc:
        raise click.ClickException(f"{where} is refused: {exc}") from None


def _exported(client: Client, bank: str, timeout: float) -> bytes:
    import httpx

    r = _send(client, "POST", _bank_path(bank, "transfer", "export"))
    answer = body_of(r)
    if r.status_code != 202 or not isinstance(answer, dict):
        raise _refused(f"exporting bank '{bank}'", r)
    status = _finished(client, bank, answer["operation_id"], timeout)
    url = (status.get("result_metadata") or {}).get("download_url")
    if not url:
        raise click.ClickException(f"the export of bank '{bank}' finished without an archive to download")
    try:  # an object store's signed URL gets no credentials; the server's own path gets the key
        r = httpx.get(url if "://" in url else client.base + url, headers={} if "://" in url else dict(client.auth))
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot download the archive: {exc}") from None
    if r.status_code != 200:
        raise _refused("downloading the archive", r)
    return r.content


@bank_group.command("export")
@click.argument("bank")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@URL_OPTION
@DATA_DIR_OPTION
@CONFIG_OPTION
@TIMEOUT_OPTION
@JSON_OPTION
def bank_export(
    bank: str, file: Path, url: str, data_dir: Path | None, config: Path | None, timeout: float, as_json: bool
) -> None:
    """Export BANK to FILE: Hindsight 1.1.0's transfer archive (documents with their text, tags,
    metadata and timestamps; the bank's config), memwarden's ledger rows (labels, hashes,
    statuses) inside it, and checksums. From a running memwarden or a Hindsight (--url), or with
    --data-dir from a self-hosted memwarden's database, read-only. The file is checked before it
    is written.

    \b
    Example:
        memwarden bank export team-a team-a.zip
    """
    if data_dir is not None or config is not None:
        from memwarden import __version__
        from memwarden.proxy.cli.offline import open_data_dir
        from memwarden.store.archive import Scope
        from memwarden.store.transfer import archive_of, dump

        db = open_data_dir(config, data_dir)
        try:
            d = dump(db, bank)
        finally:
            db.close()
        if d is None:
            raise click.ClickException(f"Bank '{bank}' not found in the self-hosted store of that data directory")
        data, _ = archive_of(d, archive_type="bank", scope=Scope(), whole_bank=True, version=__version__)
    else:
        data = _exported(Client(url), bank, timeout)
    arc = _checked(data, "the exported archive")
    part = file.with_name(file.name + ".part")
    part.write_bytes(data)
    os.replace(part, file)  # a file at FILE is a whole archive
    summary = {
        "bank": bank,
        "file": str(file),
        "bytes": len(data),
        "sha256": arc.sha256,
        "documents": len(arc.documents),
        "facts": sum(len(d.facts) for d in arc.documents),
        "ledger_rows": arc.ledger_rows,
    }
    if as_json:
        echo_json(summary)
        return
    click.echo(
        f"bank {bank}: {summary['documents']} documents, {summary['facts']} facts, {arc.ledger_rows} ledger rows"
        f" → {file} ({len(data)} bytes, sha256 {arc.sha256[:16]}…)"
    )


def _apply_config(client: Client, bank: str, row: dict[str, Any]) -> list[str]:
    """The archive's bank profile and config on the new bank; what was applied."""
    from memwarden.store.banks import bank_fields
    from memwarden.store.errors import StoreError

    try:
        fields = bank_fields(row)
    except StoreError as exc:
        raise click.ClickException(f"the documents are imported, but not the bank's config: {exc.detail}") from None
    profile = {"name": fields["name"], "mission": fields["mission"], "disposition": fields["disposition"]}
    r = _send(client, "PUT", _bank_path(bank), json={k: v for k, v in profile.items() if v is not None})
    if r.status_code != 200:
        raise _refused("the documents are imported, but not the bank's profile", r)
    applied = ["profile"]
    if fields["overrides"]:
        r = _send(client, "PATCH", _bank_path(bank, "config"), json={"updates": fields["overrides"]})
        if r.status_code != 200:
            raise _refused("the documents are imported, but not the bank's config", r)
        applied.append("config")
    return applied


@bank_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--into", "url", default=DEFAULT_URL, show_default=True, help="The memwarden or Hindsight to import into."
)
@click.option("--bank", help="The bank to import into (default: the archive's own).")
@click.option("--merge", is_flag=True, help="Fold the archive's documents into a bank that exists already.")
@click.option(
    "--on-conflict",
    type=click.Choice(["skip", "replace", "new-id"]),
    default="skip",
    show_default=True,
    help="With --merge: what becomes of a document id the bank holds already.",
)
@TIMEOUT_OPTION
@JSON_OPTION
def bank_import(
    file: Path, url: str, bank: str | None, merge: bool, on_conflict: str, timeout: float, as_json: bool
) -> None:
    """Import FILE, a transfer archive of memwarden's or Hindsight's, into a bank at --into: a new
    bank gets the archive's documents and facts, memwarden's ledger rows (on a memwarden) and the
    bank's profile and config; with --merge a bank that exists gets the documents. FILE is checked
    first (format version, checksums): a truncated or edited file is refused and nothing is sent.
    On a memwarden the import is one transaction, audited.

    \b
    Example:
        memwarden bank import team-a.zip --into http://127.0.0.1:8888 --bank team-a
    """
    arc = _checked(file.read_bytes(), str(file))
    target = bank or arc.manifest.source_bank_id
    client = Client(url)
    r = _send(client, "GET", _bank_path(target, "config"))
    if r.status_code not in (200, 404):
        raise _refused(f"looking up bank '{target}'", r)
    exists = r.status_code == 200
    if exists and not merge:
        raise click.ClickException(
            f"bank '{target}' already exists at {url}: import into a new one (--bank NAME), or pass --merge to"
            " fold the archive's documents into it"
        )
    params = {"mode": "merge", "document_conflict": on_conflict}
    files = {"file": (file.name, file.read_bytes(), "application/zip")}
    r = _send(client, "POST", _bank_path(target, "transfer", "import"), params=params, files=files)
    answer = body_of(r)
    if r.status_code != 202 or not isinstance(answer, dict):
        raise _refused(f"importing {file} into bank '{target}'", r)
    status = _finished(client, target, answer["operation_id"], timeout)
    applied = _apply_config(client, target, arc.bank_row) if not exists and arc.bank_row else []
    result = status.get("result_metadata") or {}
    if as_json:
        echo_json({"bank": target, "operation_id": answer["operation_id"], "result": result, "applied": applied})
        return
    ledger = (result.get("memwarden") or {}).get("memories_imported")
    rows = f", {ledger} ledger rows" if ledger is not None else ""
    config = f"; bank {' and '.join(applied)} applied" if applied else ""
    click.echo(
        f"bank {target} at {url}: {result.get('documents_imported', 0)} documents imported"
        f" ({result.get('documents_skipped', 0)} skipped), {result.get('facts_imported', 0)} facts{rows}{config}"
    )
