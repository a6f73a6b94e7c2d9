"""``memwarden classify``: the retain pipeline's verdicts on candidates, no server needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import click

from memwarden.proxy.cli.common import CONFIG_FILE_OPTION, settings


@click.command()
# A missing SOURCE is a usage error naming it (a text given in its place, too: it is read as a path).
@click.argument(
    "source", default="-", type=click.Path(exists=True, allow_dash=True, dir_okay=False, readable=True, path_type=str)
)
@CONFIG_FILE_OPTION
@click.option("--data-dir", type=click.Path(path_type=Path), help="Accepted for symmetry; classify reads no data.")
@click.option("--bank", default="", help="Judge as this bank would (per-bank secrets mode).")
@click.option(
    "--segments",
    "forward",
    type=click.Choice(["whole", "trim"]),
    default="whole",
    help="What a kept item of several segments would send on (trim: its text without the noise).",
)
@click.option(
    "--conversation",
    is_flag=True,
    help="The lines are one chat's turns in order: each judged after the one before it, as a chat "
    "retained turn by turn into a bank is (a short reply that answers a question is a fact).",
)
def classify(
    source: str, config: Path | None, data_dir: Path | None, bank: str, forward: str, conversation: bool
) -> None:
    """Judge memory candidates with the retain pipeline, no server needed.

    Reads FILE (or standard input with -): JSON lines with "text" or "content" (and optional
    "tags"), or plain lines. Prints one JSON object per input line: verdict, rule, reason, topic,
    stage, topic_key, tags, content_hash; injection (severity, rules, the bank's action) when the text
    holds instructions aimed at the agent; and for an item of several segments (a transcript, a
    paragraph of sentences) each segment with its text, speaker and verdict, and the text that
    would be stored. Duplicates and topic-key conflicts are judged within the input, as if it were
    one retain request.

    \b
    Example (a text to judge is piped, not given as an argument):
        printf '默认模型：gpt-4.1\\nstill broken\\n' | memwarden classify -
        printf 'how old is your son now?\\n27\\n' | memwarden classify --conversation -
    """
    from memwarden.governance.state import build_pipeline
    from memwarden.policies.defense import defend
    from memwarden.policies.resolve import resolve
    from memwarden.proxy.app import classifier_embedder

    loaded = settings(config, {})
    governance = loaded.governance
    # The server's judge: the learned layer too when it is on (labels.learned, the e5 embedder).
    pipeline = build_pipeline(governance, loaded.labels, classifier_embedder(loaded, None))
    secrets = governance.secrets_for(bank)
    entries = _read_entries(source)
    mode: Literal["whole", "trim"] = "trim" if forward == "trim" else "whole"
    before: list[str | None] | None = None
    if conversation:
        texts = [c if isinstance(c, str) else None for c, _ in entries]
        before = [None, *texts[:-1]] if texts else []
    judged = pipeline.judge_many(entries, secrets=secrets, forward=mode, before=before)
    actions, sep = governance.injection_for(bank), governance.tag_separator
    judged = [defend(j, {"content": entries[j.position][0]}, actions, sep) for j in judged]
    for j in resolve(judged, active_hashes={}, key_holders={}):
        out: dict[str, Any] = {
            "verdict": j.verdict,
            "rule": j.rule,
            "reason": j.reason,
            "topic": j.topic,
            "stage": j.stage,
            "topic_key": j.topic_key,
            "tags": list(j.tags),
            "content_hash": j.content_hash or None,
        }
        if j.threat is not None:
            out["injection"] = j.threat.summary()
        if j.segments:
            out["segments"] = [{**s.summary(), "text": s.text} for s in j.segments]
            if j.verdict != "reject":
                out["stored"] = j.text
        click.echo(json.dumps(out, ensure_ascii=False))


def _read_entries(source: str) -> list[tuple[Any, list[str]]]:
    """The candidates in ``source``: (content, tags) of each non-blank line."""
    entries: list[tuple[Any, list[str]]] = []
    try:
        stream = click.open_file(source, "rb")
    except OSError as exc:  # gone or unreadable since the argument was checked
        raise click.ClickException(f"cannot read {source}: {exc.strerror}") from None
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
    return entries
