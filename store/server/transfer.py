"""Hindsight 1.1.0's bank and document transfer routes over the self-hosted store.

``POST …/transfer/export`` and ``…/document-transfer/export`` answer ``202`` with an operation
(already finished: the store builds the archive before it answers) whose ``result_metadata``
names the archive's ``download_url``; ``GET /v1/default/files/download/{key}`` serves it.
``POST …/transfer/import`` (``restore`` into a new bank, or ``merge``) and ``POST
…/document-transfer`` (a merge) take the archive as Hindsight does (multipart, field ``file``),
check it whole first (:mod:`store.archive`: checksums, versions, fields, and no secret) and
import it all or nothing (:mod:`store.transfer_import`). Query parameters and refusals are
Hindsight's (its 422s, its 400s' words); where Hindsight would accept an archive and fail later,
in the background, the store refuses it at once with a ``400`` saying why.
"""

from __future__ import annotations

import re
from email.parser import BytesHeaderParser
from typing import Any, Literal, cast

from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.responses import Response

from memwarden.policies.ids import bank_id_problem
from memwarden.store import archive, archive_read
from memwarden.store.errors import StoreError
from memwarden.store.local import LocalStore
from memwarden.store.transfer_import import Conflict, ImportRequest
from memwarden.wire.asgi import dumps, validation_detail

_BOOL: TypeAdapter[bool] = TypeAdapter(bool)
CONFLICTS = ("skip", "replace", "new-id")


def _accepted(operation_id: str) -> Response:
    # The operation is finished when this is sent; Hindsight's clients poll it either way.
    return Response(dumps({"operation_id": operation_id, "status": "completed"}), 202, media_type="application/json")


def _flags(request: Request, defaults: dict[str, bool | None], problems: list[dict[str, Any]]) -> dict[str, Any]:
    """Boolean query parameters, read as FastAPI reads them; a bad one is added to ``problems``."""
    out: dict[str, Any] = {}
    for name, default in defaults.items():
        raw = request.query_params.get(name)
        try:
            out[name] = default if raw is None else _BOOL.validate_python(raw)
        except ValidationError as exc:
            problems += validation_detail(exc, ("query", name))
    return out


def upload(body: bytes, content_type: str | None) -> bytes | str | None:
    """The ``file`` field of a ``multipart/form-data`` body: its bytes when it is a file, its text
    when it is a plain field, None when there is none (or the body is not multipart)."""
    kind, _, rest = (content_type or "").partition(";")
    if kind.strip().lower() != "multipart/form-data":
        return None
    boundary = next(
        (p.split("=", 1)[1].strip().strip('"') for p in rest.split(";") if p.strip().startswith("boundary=")), ""
    )
    if not boundary:
        return None
    for part in body.split(b"--" + boundary.encode("latin-1"))[1:]:
        if part.startswith(b"--"):
            break
        head, found, content = part.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        if not found:
            continue
        headers = BytesHeaderParser().parsebytes(head + b"\r\n\r\n")
        if headers.get_param("name", header="content-disposition") != "file":
            continue
        content = content.removesuffix(b"\r\n")
        if headers.get_filename() is None:
            return content.decode("utf-8", "replace")
        return content
    return None


def _file_problem(file: bytes | str | None) -> list[dict[str, Any]]:
    if file is None:
        return [{"type": "missing", "loc": ["body", "file"], "msg": "Field required", "input": None}]
    if isinstance(file, str):
        msg = "Value error, Expected UploadFile, received: <class 'str'>"
        return [{"type": "value_error", "loc": ["body", "file"], "msg": msg, "input": file, "ctx": {"error": {}}}]
    return []


async def _file(request: Request, problems: list[dict[str, Any]]) -> bytes:
    """The request's archive file; a 422 with every problem of the request (its query's too), as
    FastAPI answers before Hindsight's handler runs."""
    file = upload(await request.body(), request.headers.get("content-type"))
    problems += _file_problem(file)
    if problems or not isinstance(file, bytes):
        raise StoreError(422, problems)
    return file


def _checked(file: bytes) -> archive_read.Archive:
    """The archive, checked whole (400 saying what is wrong)."""
    try:
        checked = archive_read.read(file)
    except archive.ArchiveError as exc:
        raise StoreError(400, f"Invalid transfer archive: {exc}") from None
    refused = archive_read.refusal(checked)
    if refused:
        raise StoreError(400, f"Invalid transfer archive: {refused}")
    return checked


def _conflict(value: str, name: str) -> Conflict:
    if value not in CONFLICTS:
        raise StoreError(400, f"Invalid {name} '{value}' (expected skip|replace|new-id)")
    return cast(Conflict, value)


async def transfer_export(store: LocalStore, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    problems: list[dict[str, Any]] = []
    flags = _flags(request, {"include_data": True, "include_bank_config": True, "include_history": False}, problems)
    if problems:
        raise StoreError(422, problems)
    documents = request.query_params.getlist("document_id") or None
    if not any(flags.values()):
        raise StoreError(
            400, "Nothing to export: set at least one of include_data, include_bank_config, include_history"
        )
    await store.require_bank(bank)
    if documents and (flags["include_bank_config"] or flags["include_history"]):
        raise StoreError(
            400,
            "include_bank_config and include_history are only supported for a whole-bank export (omit document_id)",
        )
    scope = archive.Scope(
        data=flags["include_data"], bank_config=flags["include_bank_config"], history=flags["include_history"]
    )
    kind: Literal["documents", "bank"] = "documents" if documents else "bank"
    return _accepted(await store.export_bank(bank, archive_type=kind, scope=scope, document_ids=documents))


async def documents_export(store: LocalStore, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    problems: list[dict[str, Any]] = []
    flags = _flags(request, {"include_observations": False, "include_knowledge_base": False}, problems)
    if problems:
        raise StoreError(422, problems)
    documents = request.query_params.getlist("document_id") or None
    await store.require_bank(bank)
    if documents and any(flags.values()):
        raise StoreError(
            400,
            "include_observations and include_knowledge_base are only supported when exporting the whole bank"
            " (omit document_id)",
        )
    scope = archive.Scope(bank_config=False)
    return _accepted(await store.export_bank(bank, archive_type="documents", scope=scope, document_ids=documents))


async def transfer_import(store: LocalStore, request: Request) -> Any:
    bank, query = request.path_params["bank_id"], request.query_params
    problems: list[dict[str, Any]] = []
    flags = _flags(request, {"include_data": None, "include_bank_config": None, "include_history": None}, problems)
    file = await _file(request, problems)
    mode, target = query.get("mode", "restore"), query.get("target_bank_id")
    if mode not in ("restore", "merge"):
        raise StoreError(400, f"Invalid mode '{mode}' (expected restore|merge)")
    conflict = _conflict(query.get("document_conflict", "skip"), "document_conflict")
    if mode == "merge":
        if target:
            raise StoreError(400, "target_bank_id is only valid in restore mode; merge imports into {bank_id}")
        if any(v is not None for v in flags.values()):
            raise StoreError(
                400,
                "include_data / include_bank_config / include_history apply to mode=restore; a merge imports the"
                " archive's documents only",
            )
        req = ImportRequest(bank=bank, target=bank, mode="merge", conflict=conflict, kind="import_documents")
        return _accepted(await store.import_archive(req, _checked(file)))
    checked = _checked(file)
    target = target or checked.manifest.source_bank_id
    problem = bank_id_problem(target)
    if problem:
        raise StoreError(400, problem)
    scope = archive.Scope(
        data=flags["include_data"] is not False,
        bank_config=flags["include_bank_config"] is not False,
        history=flags["include_history"] is True,
    )
    return _accepted(await store.import_archive(ImportRequest(bank, target, "restore", scope=scope), checked))


async def documents_import(store: LocalStore, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    file = await _file(request, [])
    conflict = _conflict(request.query_params.get("on_conflict", "skip"), "on_conflict")
    req = ImportRequest(bank=bank, target=bank, mode="merge", conflict=conflict, kind="import_documents")
    return _accepted(await store.import_archive(req, _checked(file)))


async def documents_export_removed(store: LocalStore, request: Request) -> Any:
    bank = request.path_params["bank_id"]
    raise StoreError(
        410,
        "Synchronous document export has been removed because it could take down the shared API on large banks."
        f" Submit an async export via POST /v1/default/banks/{bank}/document-transfer/export, poll"
        f" GET /v1/default/banks/{bank}/operations/{{operation_id}}, then download the archive from the"
        " download_url in the operation's result_metadata.",
    )


async def download(store: LocalStore, request: Request) -> Any:
    found = await store.download(request.path_params["key"])
    if found is None:
        raise StoreError(404, "File not found")
    bank, data = found
    name = re.sub(r"[^A-Za-z0-9._-]", "_", bank)  # a header is latin-1: the bank's id as far as it is plain
    headers = {"Content-Disposition": f'attachment; filename="{name}-documents.zip"'}
    return Response(data, 200, headers, media_type="application/zip")


BANK = "/v1/default/banks/{bank_id}"
# (path, handler, methods): added to the store's app (store/server/app.py).
ROUTES = (
    (f"{BANK}/transfer/export", transfer_export, ["POST"]),
    (f"{BANK}/transfer/import", transfer_import, ["POST"]),
    (f"{BANK}/document-transfer/export", documents_export, ["POST"]),
    (f"{BANK}/document-transfer", documents_import, ["POST"]),
    (f"{BANK}/document-transfer", documents_export_removed, ["GET"]),
    ("/v1/default/files/download/{key:path}", download, ["GET"]),
)
