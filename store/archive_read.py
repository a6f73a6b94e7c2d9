"""A transfer archive read back (:mod:`store.archive` has its layout): checked through — the ZIP,
the versions, memwarden's checksums or, in an archive Hindsight wrote, its document count and each
ledger block's checksum, every entry's fields — into an :class:`Archive`, or refused with an
:class:`~store.archive.ArchiveError` saying what is wrong and where. :func:`refusal` is what an
import adds: no secret comes into memwarden.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError

from memwarden.policies.ids import id_secret_problem
from memwarden.policies.secrets import find_secrets
from memwarden.store.archive import (
    FORMAT_VERSION,
    LEDGER_KEY,
    MAX_EXPANDED,
    NOT_RESTORED,
    SCHEMA_VERSION,
    ArchiveError,
    Document,
    LedgerBlock,
    LedgerRow,
    Manifest,
    canonical,
    first_error,
    read_block,
    sha256,
)


@dataclass(frozen=True)
class Archive:
    """An archive, checked. ``documents`` are the bank's (the carrier left out); ``blocks`` their
    ledger blocks, by document id; ``carried``: the rows of no document; ``bank_row``: banks.json's
    row; ``not_restored``: what Hindsight's sections hold that memwarden has no place for."""

    manifest: Manifest
    documents: list[Document]
    blocks: dict[str, LedgerBlock]
    carried: list[LedgerRow]
    bank_row: dict[str, Any] | None
    not_restored: dict[str, int]
    checked: Literal["memwarden", "hindsight"]
    sha256: str

    @property
    def ledger_rows(self) -> int:
        return len(self.carried) + sum(len(b.memories) for b in self.blocks.values())


def _entry(zf: zipfile.ZipFile, name: str) -> bytes:
    try:
        return zf.read(name)
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise ArchiveError(f"{name} is corrupt: {exc}") from None  # a bad CRC, a cut or garbled entry


def _json(zf: zipfile.ZipFile, name: str) -> Any:
    try:
        return json.loads(_entry(zf, name))
    except ValueError as exc:
        raise ArchiveError(f"{name} is not JSON ({exc})") from None


def _open(data: bytes) -> zipfile.ZipFile:
    if not data:
        raise ArchiveError("the file is empty: not a transfer archive")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise ArchiveError(
            f"the file is not a complete .zip archive: it is truncated, or not a transfer archive ({exc})"
        ) from None
    names = [i.filename for i in zf.infolist()]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ArchiveError(f"the archive holds {twice[0]} twice: it was edited")
    expanded = sum(i.file_size for i in zf.infolist())
    if expanded > MAX_EXPANDED:
        raise ArchiveError(f"the archive expands to {expanded} bytes, more than the {MAX_EXPANDED} memwarden takes")
    if "manifest.json" not in names:
        raise ArchiveError("manifest.json is missing: not a transfer archive of Hindsight's (or memwarden's)")
    return zf


def _verify_memwarden(zf: zipfile.ZipFile, manifest: dict[str, Any]) -> None:
    section = manifest[LEDGER_KEY]
    if not isinstance(section, dict):
        raise ArchiveError("manifest.json: memwarden's section is not an object: the manifest was edited")
    version = section.get("format_version")
    if version != FORMAT_VERSION:
        raise ArchiveError(
            f"the archive is memwarden's transfer format version {version!r}; this memwarden reads version"
            f" {FORMAT_VERSION}"
        )
    claimed = section.get("checksum")
    unsigned = {**manifest, LEDGER_KEY: {k: v for k, v in section.items() if k != "checksum"}}
    if claimed != sha256(canonical(unsigned)):
        raise ArchiveError("manifest.json was edited: its checksum does not match")
    listed = section.get("entries")
    if not isinstance(listed, dict):
        raise ArchiveError("manifest.json lists no entries: it was edited")
    present = [n for n in zf.namelist() if n != "manifest.json"]
    for name in present:
        if name not in listed:
            raise ArchiveError(f"{name} is not listed in the manifest: an entry was added to the archive")
    for name, digest in listed.items():
        if name not in present:
            raise ArchiveError(f"{name} is missing: the archive is incomplete")
        if sha256(_entry(zf, name)) != digest:
            raise ArchiveError(f"{name} was edited: its checksum does not match the manifest's")


def read(data: bytes) -> Archive:
    """``data`` as an archive, checked through (see the module); :class:`ArchiveError` otherwise."""
    with _open(data) as zf:
        raw = _json(zf, "manifest.json")
        if not isinstance(raw, dict):
            raise ArchiveError("manifest.json is not a JSON object")
        if raw.get("schema_version") != SCHEMA_VERSION:
            raise ArchiveError(
                f"the archive is transfer schema version {raw.get('schema_version')!r}; memwarden reads version"
                f" {SCHEMA_VERSION} (Hindsight 1.1.0's)"
            )
        checked: Literal["memwarden", "hindsight"] = "hindsight"
        if raw.get(LEDGER_KEY) is not None:
            _verify_memwarden(zf, raw)
            checked = "memwarden"
        try:
            manifest = Manifest.model_validate(raw)
        except ValidationError as exc:
            raise ArchiveError(f"manifest.json: {first_error(exc)}") from None
        names = sorted(n for n in zf.namelist() if n.startswith("documents/") and n.endswith(".json"))
        if len(names) != manifest.document_count:
            raise ArchiveError(
                f"the manifest counts {manifest.document_count} documents but the archive holds {len(names)}:"
                " entries are missing or were added"
            )
        documents, blocks, carried = _documents(zf, names)
        bank_row = None
        if "banks.json" in zf.namelist():
            rows = _json(zf, "banks.json")
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise ArchiveError("banks.json is not a list of bank rows")
            bank_row = next((r for r in rows if r.get("bank_id") == manifest.source_bank_id), None)
        not_restored = {}
        for name, what in NOT_RESTORED.items():
            if name in zf.namelist():
                rows = _json(zf, name)
                if isinstance(rows, list) and rows:
                    not_restored[what] = len(rows)
    return Archive(manifest, documents, blocks, carried, bank_row, not_restored, checked, sha256(data))


def _documents(
    zf: zipfile.ZipFile, names: Iterable[str]
) -> tuple[list[Document], dict[str, LedgerBlock], list[LedgerRow]]:
    documents: list[Document] = []
    blocks: dict[str, LedgerBlock] = {}
    carried: list[LedgerRow] = []
    seen_docs: set[str] = set()
    seen_rows: dict[str, str] = {}
    for name in names:
        try:
            document = Document.model_validate_json(_entry(zf, name))
        except ValidationError as exc:
            raise ArchiveError(f"{name}: {first_error(exc)}") from None
        raw_block = (document.retain_params or {}).get(LEDGER_KEY)
        block = read_block(raw_block, name) if raw_block is not None else None
        if block is not None:
            for row in block.memories:
                if row.id in seen_rows:
                    raise ArchiveError(f"{name}: memory {row.id} is also in {seen_rows[row.id]}")
                seen_rows[row.id] = name
        if block is not None and block.carrier:
            carried += block.memories
            continue
        if document.id in seen_docs:
            raise ArchiveError(f"{name}: document {document.id!r} is in the archive twice")
        seen_docs.add(document.id)
        documents.append(document)
        if block is not None:
            blocks[document.id] = block
    return documents, blocks, carried


def refusal(archive: Archive) -> str | None:
    """Why memwarden does not take ``archive`` in (None: it does): an id or a text that holds what
    looks like a secret. An import never brings a secret into memwarden's store or ledger."""
    for document in archive.documents:
        problem = id_secret_problem(f"Document id {document.id[:40]!r}", document.id)
        if problem:
            return problem
        block = archive.blocks.get(document.id)
        texts = [
            ("its text", document.original_text or ""),
            *((f"fact {n}", f.text) for n, f in enumerate(document.facts)),
            *(
                (f"fact {n}'s metadata", json.dumps(f.metadata, ensure_ascii=False))
                for n, f in enumerate(document.facts)
            ),
            *((f"chunk {c.chunk_index}", c.chunk_text) for c in document.chunks),
            *((f"archived fact {n}", u.text) for n, u in enumerate(block.archived_units if block else ())),
        ]
        for where, text in texts:
            found = find_secrets(text)
            if found:
                return f"document {document.id!r}: {where} holds what looks like a secret ({found[0].kind})"
    for row in [*archive.carried, *(r for b in archive.blocks.values() for r in b.memories)]:
        found = find_secrets(row.content)
        if found:
            return f"memory {row.id}: its content holds what looks like a secret ({found[0].kind})"
    return None
