"""The ``memwarden`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from memwarden.proxy import __version__
from memwarden.settings import Settings, SettingsError, load_settings


def _settings(config: Path | None, overrides: dict[str, Any]) -> Settings:
    try:
        return load_settings(config_file=config, overrides=overrides)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memwarden")
def main() -> None:
    """memwarden: a governance proxy for AI-agent memory."""


@main.command()
@click.option("--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG).")
@click.option("--host", help="Address to listen on [default: 127.0.0.1].")
@click.option("--port", type=int, help="Port to listen on [default: 8890].")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Data directory [default: ./memwarden-data].")
@click.option("--upstream", help="Govern the Hindsight server at this URL (no config file needed).")
def serve(config: Path | None, host: str | None, port: int | None, data_dir: Path | None, upstream: str | None) -> None:
    """Run the memwarden server: with no backend configured, memwarden is the memory server itself
    (Hindsight's API on its own store in the data directory); with --upstream, it governs a Hindsight.

    \b
    Examples:
        memwarden serve                                      # self-hosted, 127.0.0.1:8890
        memwarden serve --upstream http://127.0.0.1:8888     # in front of Hindsight
    Point clients at http://127.0.0.1:8890.
    """
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides.setdefault("server", {})["host"] = host
    if port is not None:
        overrides.setdefault("server", {})["port"] = port
    if data_dir is not None:
        overrides["data_dir"] = str(data_dir)
    if upstream is not None:
        overrides["backend"] = "hindsight"
        overrides["backends"] = {"hindsight": {"url": upstream}}
    settings = _settings(config, overrides)

    import uvicorn

    from memwarden.db.database import Database, DatabaseError
    from memwarden.proxy.app import check_runnable, create_app
    from memwarden.proxy.logging import configure_logging

    try:
        check_runnable(settings)
        ledger = Database.open(settings.data_dir)  # a corrupt or unusable data directory: say so now
    except (SettingsError, DatabaseError) as exc:
        raise click.ClickException(str(exc)) from None
    configure_logging(settings.server)
    app = create_app(settings, ledger=ledger)
    uvicorn.run(
        app,
        host=settings.server.host,
        port=settings.server.port,
        loop="uvloop" if sys.platform != "win32" else "asyncio",
        http="httptools",
        log_config=None,
        access_log=False,
        server_header=False,
        date_header=False,
    )


def _data_dir(config: Path | None, data_dir: Path | None) -> Path:
    settings = _settings(config, {"data_dir": str(data_dir)} if data_dir else {})
    return settings.data_dir


def _open_readonly(data_dir: Path) -> Any:
    import sqlite3

    path = data_dir / "memwarden.db"
    if not path.exists():
        raise click.ClickException(f"no memwarden database in {data_dir} (use --data-dir, or --url for a server)")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        db.execute("SELECT 1 FROM audit_events LIMIT 1")
    except sqlite3.DatabaseError as exc:
        raise click.ClickException(f"{path} cannot be read as memwarden's database: {exc}") from None
    return db


@main.command()
@click.argument("source", default="-", type=click.Path(allow_dash=True, dir_okay=False, path_type=str))
@click.option("--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG).")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Accepted for symmetry; classify reads no data.")
@click.option("--bank", default="", help="Judge as this bank would (per-bank secrets mode).")
def classify(source: str, config: Path | None, data_dir: Path | None, bank: str) -> None:
    """Judge memory candidates with the retain pipeline, no server needed.

    Reads FILE (or standard input with -): JSON lines with "text" or "content" (and optional
    "tags"), or plain lines. Prints one JSON object per input line: verdict, rule, reason, topic,
    stage, topic_key, tags, content_hash. Duplicates and topic-key conflicts are judged within
    the input, as if it were one retain request.

    \b
    Example:
        printf '默认模型：gpt-4.1\\nstill broken\\n' | memwarden classify -
    """
    import json

    from memwarden.policies.pipeline import resolve
    from memwarden.proxy.state import build_pipeline

    settings = _settings(config, {})
    pipeline = build_pipeline(settings.governance)
    secrets = settings.governance.secrets_for(bank)
    stream = click.open_file(source, "rb")
    entries: list[tuple[Any, list[str]]] = []
    with stream:
        for number, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                raise click.ClickException(f"line {number} is not valid UTF-8") from None
            if not line:
                continue
            content: Any = line
            tags: list[str] = []
            if line.startswith("{"):
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = None
                if isinstance(obj, dict) and ("text" in obj or "content" in obj):
                    content = obj.get("text", obj.get("content"))
                    tags = [t for t in obj.get("tags") or [] if isinstance(t, str)]
                    if not isinstance(content, str | list):
                        raise click.ClickException(f"line {number}: text/content must be a string or a block list")
            entries.append((content, tags))
    judged = [pipeline.judge(i, content, tags, secrets=secrets) for i, (content, tags) in enumerate(entries)]
    for j in resolve(judged, active_hashes={}, key_holders={}):
        out = {
            "verdict": j.verdict,
            "rule": j.rule,
            "reason": j.reason,
            "topic": j.topic,
            "stage": j.stage,
            "topic_key": j.topic_key,
            "tags": list(j.tags),
            "content_hash": j.content_hash or None,
        }
        click.echo(json.dumps(out, ensure_ascii=False))


@main.group()
def audit() -> None:
    """Read, follow and verify the audit log (hash-chained, append-only)."""


def _format_event(event: dict[str, Any], as_json: bool) -> str:
    import json

    if as_json:
        return json.dumps(event, ensure_ascii=False, sort_keys=True)
    memory = f" mem={str(event['memory_id'])[:12]}" if event.get("memory_id") else ""
    rule = f" rule={event['rule']}" if event.get("rule") else ""
    reason = f"  {event['reason']}" if event.get("reason") else ""
    return f"#{event['seq']} {event['ts'][:19]} {event['action']:<14} {event.get('bank') or '-'}{memory}{rule}{reason}"


@audit.command("tail")
@click.option("--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG).")
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
        _tail_url(url.rstrip("/"), follow, bank, action, as_json, lines)
    else:
        _tail_db(_data_dir(config, data_dir), follow, bank, action, as_json, lines)


def _tail_db(data_dir: Path, follow: bool, bank: str | None, action: str | None, as_json: bool, lines: int) -> None:
    import time

    from memwarden.db.audit import event_from_row

    db = _open_readonly(data_dir)
    where, params = ["1 = 1"], []
    if bank:
        where.append("bank = ?")
        params.append(bank)
    if action:
        acts = [a for a in action.split(",") if a]
        where.append(f"action IN ({','.join('?' * len(acts))})")
        params.extend(acts)
    clause = " AND ".join(where)
    rows = db.execute(f"SELECT * FROM audit_events WHERE {clause} ORDER BY seq DESC LIMIT ?", (*params, lines))  # noqa: S608
    last = 0
    for row in reversed(rows.fetchall()):
        click.echo(_format_event(event_from_row(row), as_json))
        last = row["seq"]
    if not follow:
        return
    last = max(last, db.execute("SELECT COALESCE(MAX(seq), 0) FROM audit_events").fetchone()[0])
    try:
        while True:
            time.sleep(0.5)
            for row in db.execute(
                f"SELECT * FROM audit_events WHERE {clause} AND seq > ? ORDER BY seq",  # noqa: S608
                (*params, last),
            ):
                click.echo(_format_event(event_from_row(row), as_json))
                last = row["seq"]
            last = max(last, db.execute("SELECT COALESCE(MAX(seq), 0) FROM audit_events").fetchone()[0])
    except KeyboardInterrupt:
        return


def _tail_url(url: str, follow: bool, bank: str | None, action: str | None, as_json: bool, lines: int) -> None:
    import json

    import httpx

    params = {k: v for k, v in {"bank": bank, "action": action, "tail": str(lines)}.items() if v}
    try:
        r = httpx.get(f"{url}/warden/v1/audit", params=params, timeout=30)
        r.raise_for_status()
        events = r.json()["events"]
        for event in events:
            click.echo(_format_event(event, as_json))
        if not follow:
            return
        last = str(events[-1]["seq"]) if events else ""
        stream_params = {k: v for k, v in params.items() if k != "tail"}
        headers = {"last-event-id": last} if last else {}
        if not last:
            stream_params["since"] = str(r.json().get("last_seq") or 0)
        with httpx.stream(
            "GET",
            f"{url}/warden/v1/audit/stream",
            params=stream_params,
            headers=headers,
            timeout=httpx.Timeout(30, read=None),
        ) as stream:
            for line in stream.iter_lines():
                if line.startswith("data: "):
                    click.echo(_format_event(json.loads(line[6:]), as_json))
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot read the audit log from {url}: {exc}") from None
    except KeyboardInterrupt:
        return


@audit.command("verify")
@click.option("--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG).")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Check this data directory directly.")
@click.option("--url", help="Ask a running memwarden instead.")
def audit_verify(config: Path | None, data_dir: Path | None, url: str | None) -> None:
    """Check the audit log's hash chain: exit 0 when intact, 1 naming each edited or deleted event.

    \b
    Example:
        memwarden audit verify --data-dir ./memwarden-data
    """
    import json

    if url:
        import httpx

        try:
            result = httpx.get(f"{url.rstrip('/')}/warden/v1/audit/verify", timeout=120).json()
        except (httpx.HTTPError, ValueError) as exc:
            raise click.ClickException(f"cannot verify through {url}: {exc}") from None
        count, problems = result["events"], result["problems"]
    else:
        from memwarden.db.audit import verify_chain

        directory = _data_dir(config, data_dir)
        db = _open_readonly(directory)
        rows = db.execute("SELECT * FROM audit_events ORDER BY seq").fetchall()
        count = len(rows)
        problems = [{"seq": p.seq, "problem": p.problem} for p in verify_chain(rows)]
        mirror = directory / "audit.jsonl"
        if mirror.exists():
            mirrored = 0
            for line in mirror.read_text(encoding="utf-8").splitlines():
                try:
                    mirrored = max(mirrored, int(json.loads(line)["seq"]))
                except (ValueError, KeyError):
                    continue
            last = rows[-1]["seq"] if rows else 0
            if mirrored > last:
                span = f"{last + 1}" if mirrored == last + 1 else f"{last + 1}-{mirrored}"
                problems.append(
                    {"seq": last + 1, "problem": f"event(s) {span} deleted from the end (still in audit.jsonl)"}
                )
    if problems:
        for p in problems:
            click.echo(f"event {p['seq']}: {p['problem']}", err=True)
        raise SystemExit(1)
    click.echo(f"audit log intact: {count} events, hash chain verified")


@main.group("config")
def config_group() -> None:
    """Bank config snapshots and rollbacks (the config guard)."""


def _snapshot_line(s: dict[str, Any]) -> str:
    counts = " ".join(f"{k}={v}" for k, v in sorted((s.get("counts") or {}).items()))
    settled = "" if s.get("settled") else " (unsettled)"
    return (
        f"{s['id']}  {s['created_at'][:19]}  {s['reason']:<15} {s.get('outcome') or '-'!s:<19}"
        f" {counts}  memories={s.get('memories')} documents={s.get('documents')}{settled}"
    )


@config_group.command("snapshots")
@click.argument("bank")
@click.option("--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG).")
@click.option("--data-dir", type=click.Path(path_type=Path), help="Read this data directory directly.")
@click.option("--url", help="Ask a running memwarden instead, e.g. http://127.0.0.1:8890.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def config_snapshots(bank: str, config: Path | None, data_dir: Path | None, url: str | None, as_json: bool) -> None:
    """List BANK's config snapshots, newest first: why each was taken, counts, outcome.

    \b
    Example:
        memwarden config snapshots team-a --url http://127.0.0.1:8890
    """
    import json

    if url:
        import httpx

        try:
            r = httpx.get(f"{url.rstrip('/')}/warden/v1/banks/{bank}/snapshots", timeout=30)
            r.raise_for_status()
        except httpx.HTTPError as exc:
            raise click.ClickException(f"cannot list snapshots through {url}: {exc}") from None
        items = r.json()["items"]
    else:
        from memwarden.proxy.config_guard import list_snapshots

        db = _open_readonly(_data_dir(config, data_dir))
        items = [s.summary() for s in list_snapshots(db, bank)]
    if not items and not as_json:
        click.echo(f"no snapshots for bank {bank}")
    for item in items:
        click.echo(json.dumps(item, ensure_ascii=False, sort_keys=True) if as_json else _snapshot_line(item))


@config_group.command("rollback")
@click.argument("bank")
@click.argument("snapshot_id")
@click.option("--url", default="http://127.0.0.1:8890", show_default=True, help="The running memwarden.")
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
    import json

    import httpx

    base = f"{url.rstrip('/')}/warden/v1/banks/{bank}/snapshots/{snapshot_id}/rollback"
    try:
        r = httpx.post(base, params={"preview": "true"}, timeout=300)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach memwarden at {url}: {exc}") from None
    if r.status_code != 200:
        raise click.ClickException(f"preview failed ({r.status_code}): {r.json().get('detail', r.text)}")
    plan = r.json()["plan"]
    if as_json:
        click.echo(json.dumps({"preview": plan}, ensure_ascii=False))
    else:
        overrides = ", ".join(sorted(plan["restore_overrides"])) or "none (already as in the snapshot)"
        click.echo(f"Rollback of bank {bank} to snapshot {snapshot_id}:")
        click.echo(f"  config overrides to restore: {overrides}")
        click.echo(f"  memories missing since:      {plan['missing_memories']} ({plan['missing_documents']} documents)")
        documents = len(plan["documents_to_restore"])
        click.echo(f"  memories to re-create:       {plan['memories_to_restore']} in {documents} documents")
        if plan["unrestorable"]:
            click.echo(f"  not in the ledger (cannot be re-created): {len(plan['unrestorable'])}")
    nothing = not plan["restore_overrides"] and not plan["memories_to_restore"]
    if nothing:
        click.echo("Nothing to do: the bank already matches the snapshot.")
        return
    if not yes and not click.confirm("Apply this rollback?", default=False):
        click.echo("Not applied.")
        raise SystemExit(1)
    try:
        r = httpx.post(base, timeout=httpx.Timeout(30, read=3600))  # a big restore takes a while
    except httpx.HTTPError as exc:
        raise click.ClickException(f"rollback request failed: {exc}; run the command again to resume") from None
    result = r.json().get("result") or {}
    if as_json:
        click.echo(json.dumps({"result": result, "status": r.status_code}, ensure_ascii=False))
    else:
        restored = ", ".join(result.get("overrides_restored") or []) or "none"
        click.echo(
            f"Restored {result.get('memories_restored', 0)} memories in {result.get('documents_restored', 0)}"
            f" documents; overrides restored: {restored}."
        )
    if r.status_code != 200 or not result.get("complete"):
        raise click.ClickException(
            f"rollback incomplete: {result.get('error') or r.text}; run the command again to resume"
        )


@main.group("store")
def store_group() -> None:
    """The self-hosted store (backend = "local")."""


@store_group.command("reembed")
@click.argument("bank")
@click.option("--url", default="http://127.0.0.1:8890", show_default=True, help="The running memwarden.")
def store_reembed(bank: str, url: str) -> None:
    """Re-embed BANK's memories with the configured embedder, after a change of local.embedder.

    Until it is done the bank refuses writes (409) and recall leaves its old vectors out (keyword
    retrieval only); run it again to resume an interrupted one.

    \b
    Example:
        memwarden store reembed team-a
    """
    import httpx

    try:
        r = httpx.post(f"{url.rstrip('/')}/warden/v1/banks/{bank}/reembed", timeout=httpx.Timeout(30, read=None))
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach memwarden at {url}: {exc}") from None
    body = r.json()
    if r.status_code != 200:
        raise click.ClickException(str(body.get("detail", body)))
    click.echo(
        f"bank {bank}: {body['reembedded']} memories re-embedded with {body['embedder']}"
        f" (was {body['previous_embedder'] or 'none'})"
    )


def _call(method: str, url: str, path: str, *, expect: int = 200, ok: tuple[int, ...] = (), **kwargs: Any) -> Any:
    """One request to a running memwarden; its JSON answer (status ``expect``, or one of ``ok``),
    or a one-line error."""
    import httpx

    try:
        r = httpx.request(method, f"{url.rstrip('/')}{path}", timeout=120, **kwargs)
    except httpx.HTTPError as exc:
        raise click.ClickException(f"cannot reach memwarden at {url}: {exc}") from None
    try:
        body = r.json()
    except ValueError:
        raise click.ClickException(f"memwarden answered {r.status_code}: {r.text[:200]}") from None
    if r.status_code != expect and r.status_code not in ok:
        detail = body.get("detail", body) if isinstance(body, dict) else body
        raise click.ClickException(f"{r.status_code}: {detail if isinstance(detail, str) else json.dumps(detail)}")
    return body


URL_OPTION = click.option("--url", default="http://127.0.0.1:8890", show_default=True, help="The running memwarden.")
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="JSON instead of text.")
DATA_DIR_OPTION = click.option(
    "--data-dir", type=click.Path(path_type=Path), help="Read this data directory directly (no server needed)."
)
CONFIG_OPTION = click.option(
    "--config", "config", type=click.Path(path_type=Path), help="memwarden.toml (or MEMWARDEN_CONFIG); its data_dir."
)


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
        lines.append(f"full-text query: {account.get('fts_query') or '(none: every term too common)'}")
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


@main.command("explain")
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
@click.option("--url", default="http://127.0.0.1:8890", show_default=True, help="The running memwarden.")
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
    account = _call("POST", url, f"/warden/v1/banks/{bank}/explain", json=body)
    click.echo(json.dumps(account, ensure_ascii=False, indent=2) if as_json else _explain_text(account, limit))


@main.group("memories")
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
    """
    params: list[tuple[str, str]] = [("limit", str(limit)), ("offset", str(offset))]
    for key, value in (("status", status), ("topic", topic), ("stage", stage), ("topic_key", topic_key), ("q", q)):
        if value:
            params.append((key, value))
    params += [("tag", t) for t in tags]
    if data_dir is not None or config is not None:
        from memwarden.db.memories import FilterError, list_memories

        try:
            page = list_memories(_open_readonly(_data_dir(config, data_dir)), bank, params)
        except FilterError as exc:
            raise click.ClickException(f"{exc.loc}: {exc}") from None
    else:
        page = _call("GET", url, f"/warden/v1/banks/{bank}/memories", params=params)
    if as_json:
        click.echo(json.dumps(page, ensure_ascii=False, indent=2))
        return
    for m in page["items"]:
        click.echo(_memory_line(m))
    click.echo(f"{len(page['items'])} of {page['total']}")


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
        from memwarden.db.memories import memory_account

        m = memory_account(_open_readonly(_data_dir(config, data_dir)), bank, memory_id)
        if m is None:
            raise click.ClickException(f"Memory '{memory_id}' not found in bank '{bank}'")
    else:
        m = _call("GET", url, f"/warden/v1/banks/{bank}/memories/{memory_id}")
    if as_json:
        click.echo(json.dumps(m, ensure_ascii=False, indent=2))
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
    body = _call("POST", url, f"/warden/v1/banks/{bank}/memories/{memory_id}/archive", json={"reason": reason})
    click.echo(f"{memory_id} archived ({len(body['backend']['invalidated'])} backend facts invalidated)")


@memories_group.command("restore")
@click.argument("bank")
@click.argument("memory_id")
@URL_OPTION
def memories_restore(bank: str, memory_id: str, url: str) -> None:
    """Put an archived memory back in the backend (re-created from the ledger if it is gone)."""
    body = _call("POST", url, f"/warden/v1/banks/{bank}/memories/{memory_id}/restore")
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
    path = f"/warden/v1/banks/{bank}/memories/{memory_id}/feedback"
    _call("POST", url, path, json={"score": value, "reason": reason})
    click.echo(f"{memory_id}: feedback {score} recorded")


@main.group("retention")
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
    result = _call("POST", url, "/warden/v1/retention/run", params=params)
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    for m in result["due"]:
        mark = "due" if dry_run else ("archived" if m["id"] in result["archived"] else "skipped")
        age = f"{m['age_days']:>6} d > {m['period_days']} d"
        click.echo(f"{mark:<9} {m['bank']}/{m['id']}  {m['stage']:<10} {age}  {m['content'][:60]}")
    for s in result["skipped"]:
        click.echo(f"  skipped {s['id']}: {s['reason']}")
    verb = "would be archived" if dry_run else "archived"
    click.echo(f"{len(result['due'])} due; {len(result['archived']) if not dry_run else len(result['due'])} {verb}")


@main.group("plan")
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
    plan = _call("POST", url, f"/warden/v1/banks/{bank}/plans", json=body, expect=201)
    click.echo(json.dumps(plan, ensure_ascii=False, indent=2) if as_json else _plan_text(plan))


@plan_group.command("list")
@click.argument("bank")
@URL_OPTION
@JSON_OPTION
def plan_list(bank: str, url: str, as_json: bool) -> None:
    """BANK's plans, newest first."""
    page = _call("GET", url, f"/warden/v1/banks/{bank}/plans")
    if as_json:
        click.echo(json.dumps(page, ensure_ascii=False, indent=2))
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
    plan = _call("GET", url, f"/warden/v1/banks/{bank}/plans/{plan_id}")
    click.echo(json.dumps(plan, ensure_ascii=False, indent=2) if as_json else _plan_text(plan))


@plan_group.command("apply")
@click.argument("bank")
@click.argument("plan_id")
@click.option("--phrase", help="The plan's confirmation phrase (asked for when not given).")
@URL_OPTION
def plan_apply(bank: str, plan_id: str, phrase: str | None, url: str) -> None:
    """Apply a plan once its confirmation phrase is typed exactly."""
    plan = _call("GET", url, f"/warden/v1/banks/{bank}/plans/{plan_id}")
    click.echo(_plan_text(plan))
    if phrase is None:
        phrase = click.prompt("type the confirmation phrase", prompt_suffix=": ")
    result = _call(
        "POST", url, f"/warden/v1/banks/{bank}/plans/{plan_id}/apply", json={"phrase": phrase}, ok=(200, 502)
    )
    applied = result["result"]["applied"]
    click.echo(f"plan {plan_id}: {result['status']}; {len(applied)} of {len(result['operations'])} operations applied")
    failed = result["result"]["failed"]
    if failed:
        click.echo(f"failed: {failed['op']} {failed['memory_id']}: {failed['detail']}", err=True)
        click.echo(f"not attempted: {len(result['result']['not_attempted'])}", err=True)
        raise SystemExit(1)


@main.group("report")
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
    report = _call("GET", url, f"/warden/v1/banks/{bank}/reports/cleanup")
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
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
    report = _call("GET", url, f"/warden/v1/banks/{bank}/reports/health", params={"days": days})
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
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
