"""Attachments retained inline — ``image`` and ``file`` content blocks — kept as Hindsight 1.1.0
keeps them: the bytes under an id that is the first 12 hex digits of their sha256, and in the
document's and the chunk's text a placeholder ``⟦hs-att:ID⟧`` where the block stood (blocks joined
by a blank line). A memory's own text is the item's text blocks (memwarden extracts no fact from an
image); the document, its chunks and a recall's chunks list the attachments their text names, and
``GET …/attachments/{id}`` serves the bytes with the media type the client declared.

The bytes live in ``store_attachments``, one row per document that holds them: deleting a document
or a bank deletes its rows, and an id no remaining document names is gone with it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memwarden.store.errors import StoreError

PLACEHOLDER = "\u27e6hs-att:{}\u27e7"
_NAMED = re.compile("\u27e6hs-att:([0-9a-f]{12})\u27e7")
KINDS = ("image", "file")

SCHEMA = """
CREATE TABLE store_attachments (
    bank_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    id TEXT NOT NULL,
    hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    media_type TEXT NOT NULL,
    byte_size INTEGER NOT NULL,
    filename TEXT,
    data BLOB NOT NULL,
    PRIMARY KEY (bank_id, document_id, id)
);
CREATE INDEX store_attachments_id ON store_attachments (bank_id, id);
"""


@dataclass(frozen=True)
class Attachment:
    id: str
    hash: str
    kind: str
    media_type: str
    filename: str | None
    data: bytes


@dataclass(frozen=True)
class Content:
    """An item's content as the store keeps it: the memory's text, the document's text (with the
    placeholders), and the attachments."""

    text: str
    shown: str
    attachments: tuple[Attachment, ...] = ()


def decode(block: Mapping[str, Any], where: str) -> Attachment:
    """An ``image``/``file`` block's attachment; :class:`StoreError` 400 (Hindsight's words) when
    its data is not base64."""
    source = block.get("source") or {}
    try:
        data = base64.b64decode(str(source.get("data", "")), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise StoreError(400, f"{where}: attachment source data is not valid base64: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    filename = block.get("filename")
    return Attachment(
        id=digest[:12],
        hash=digest,
        kind=str(block.get("type")),
        media_type=str(source.get("media_type") or "application/octet-stream"),
        filename=filename if isinstance(filename, str) else None,
        data=data,
    )


def content_of(content: str | Sequence[Mapping[str, Any]], where: str) -> Content:
    """``content`` (a string, or Hindsight's blocks) as the store keeps it; ``where`` names the item
    in an error (``items[0]``)."""
    if isinstance(content, str):
        return Content(content, content)
    texts: list[str] = []
    shown: list[str] = []
    found: list[Attachment] = []
    for j, block in enumerate(content):
        if block.get("type") in KINDS:
            attachment = decode(block, f"{where}.content[{j}]")
            found.append(attachment)
            shown.append(PLACEHOLDER.format(attachment.id))
        elif isinstance(block.get("text"), str):
            texts.append(block["text"])
            shown.append(block["text"])
    if not found:  # text blocks only: one text, as the rest of memwarden reads it
        return Content("\n".join(texts), "\n".join(texts))
    text = "\n".join(texts) or " ".join(PLACEHOLDER.format(a.id) for a in found)
    return Content(text, "\n\n".join(shown), tuple(found))


# -- the table ------------------------------------------------------------------------------------


def insert(db: sqlite3.Connection, bank: str, held: Iterable[tuple[str, Attachment]]) -> None:
    """Documents' attachments, (document id, attachment) each (the caller deleted those they had)."""
    db.executemany(
        "INSERT INTO store_attachments (bank_id, document_id, id, hash, kind, media_type, byte_size,"
        " filename, data) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
        [(bank, doc, a.id, a.hash, a.kind, a.media_type, len(a.data), a.filename, a.data) for doc, a in held],
    )


def delete(db: sqlite3.Connection, bank: str, document_id: str | None = None) -> None:
    """A document's attachments (every one of the bank's when ``document_id`` is None)."""
    if document_id is None:
        db.execute("DELETE FROM store_attachments WHERE bank_id = ?", (bank,))
    else:
        db.execute("DELETE FROM store_attachments WHERE bank_id = ? AND document_id = ?", (bank, document_id))


def shape(bank: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """Hindsight's ``ChunkAttachment``."""
    return {
        "id": row["id"],
        "hash": row["hash"],
        "kind": row["kind"],
        "media_type": row["media_type"],
        "byte_size": row["byte_size"],
        "filename": row["filename"],
        "url": f"/v1/default/banks/{bank}/attachments/{row['id']}",
    }


def named_in(db: sqlite3.Connection, bank: str, document_id: str, text: str) -> list[dict[str, Any]] | None:
    """The attachments ``text`` (the document's or one chunk's) names, by id (Hindsight's order varies);
    None when it names none (Hindsight's ``null``)."""
    ids = sorted(set(_NAMED.findall(text)))
    if not ids:
        return None
    rows = {
        r["id"]: r
        for r in db.execute(
            "SELECT id, hash, kind, media_type, byte_size, filename FROM store_attachments"
            " WHERE bank_id = ? AND document_id = ?",
            (bank, document_id),
        )
    }
    return [shape(bank, rows[i]) for i in ids if i in rows] or None


def read(db: sqlite3.Connection, bank: str, attachment_id: str) -> tuple[str, bytes] | None:
    """An attachment's media type and bytes."""
    row = db.execute(
        "SELECT media_type, data FROM store_attachments WHERE bank_id = ? AND id = ? LIMIT 1", (bank, attachment_id)
    ).fetchone()
    return None if row is None else (row["media_type"], bytes(row["data"]))
