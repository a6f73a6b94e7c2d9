"""Secrets outside the memory text: every other field of a request, scanned with the same
detectors (``policies/secrets.py``).

* **A retain's fields** — each item's ``context``, ``metadata`` (keys and values), ``tags``,
  ``document_id``, ``entities``, ``timestamp`` and any other field, and the request's own fields
  (``document_tags``, ``operation_id`` …): a secret anywhere refuses the request (422, the field's
  location named, the value never echoed). The memory text itself is the pipeline's: rejected or
  redacted per ``governance.secrets``.
* **Ids** (bank ids, document and operation ids, request ids, tags, any field named ``*_id``) are
  scanned without the random-token detectors: an id may be random by design. A metadata key that
  names a credential (``password``, ``api_key``, ``*_token``, ``secret`` …) with a value that is not
  a placeholder is a secret whatever the value looks like.
* **Config** (a bank's config changes and its profile: missions, names, any string): secrets are
  redacted in place (``[REDACTED:<kind>]``) before the change is snapshotted, forwarded or audited;
  the answer names the keys.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memwarden.policies.secret_prefilter import may_hold_secrets
from memwarden.policies.secrets import PLACEHOLDER, find_secrets, mask

Loc = tuple[str | int, ...]
ID_NAMES = frozenset({"document_id", "operation_id", "id", "tags", "document_tags", "request_id", "bank_id"})
_ID_KEY = re.compile(r"(?i)(?:^|[_\-.])(?:id|ids|uuid|guid|hash|sha\d*|digest|etag|checksum)$")
_CREDENTIAL_KEY = re.compile(
    r"(?i)(?:^|[_\-.\s])(?:password|passwd|passphrase|secret|secret[_\-]?key|api[_\-]?key|access[_\-]?key"
    r"|private[_\-]?key|client[_\-]?secret|auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|token"
    r"|credentials?|cookie)$"
)
# Names that say "token" or "secret" without holding one: pagination cursors, counts, flags.
_NOT_CREDENTIAL_KEY = re.compile(
    r"(?i)(?:^|[_\-.])(?:next|page|sync|continuation|cursor|max|min|num|total|prompt|completion|input|output)"
    r"[_\-.]?tokens?$|^(?:is|has)[_\-]"
)
# A value a credential's name holds when it holds one: 8+ characters, one word, with a digit or 16+
# long, not a path or a URL ("cookie": "accepted", "credentials": "provided by ops" are not).
_CREDENTIAL_VALUE = re.compile(r"^(?![/~.])(?!.*://)(?:(?=\S*\d)\S{8,}|\S{16,})$")


@dataclass(frozen=True)
class FieldSecret:
    """A secret found in a field: where (the request's JSON path) and what kind."""

    loc: Loc
    kind: str

    def detail(self, prefix: Loc = ("body",)) -> dict[str, Any]:
        """One entry of a 422's ``detail`` list, in the shape of Hindsight's validation errors;
        the value is never echoed."""
        return {
            "type": "secret",
            "loc": [*prefix, *self.loc],
            "msg": f"Holds what looks like a secret ({self.kind}); memwarden stores no secrets outside"
            " the memory text (remove it, or put the value in the backend's credentials)",
            "input": "[REDACTED]",
        }


def is_identifier(name: str | int | None) -> bool:
    return isinstance(name, str) and (name in ID_NAMES or _ID_KEY.search(name) is not None)


def secret_kind(text: str, *, identifier: bool = False) -> str | None:
    """The kind of the first secret in ``text`` (None: none). ``identifier``: without the
    random-token detectors."""
    found = find_secrets(text, random_tokens=not identifier)
    return found[0].kind if found else None


def field_secrets(value: Any, *, skip: Callable[[Loc], bool] = lambda loc: False) -> list[FieldSecret]:
    """Every secret in the strings of ``value`` (JSON: dicts, lists, strings), keys included, but
    under the locations ``skip`` says to leave (the memory text). One prefilter over all the strings
    first: a request whose fields hold nothing any detector could match (most) costs one scan."""
    strings: list[str] = []
    _collect(value, (), skip, strings)
    scan = may_hold_secrets("\n".join(strings).casefold())
    return list(_walk(value, (), None, skip, scan))


def _collect(value: Any, loc: Loc, skip: Callable[[Loc], bool], out: list[str]) -> None:
    if skip(loc):
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            out.append(str(key))
            _collect(item, (*loc, str(key)), skip, out)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _collect(item, (*loc, i), skip, out)


def _walk(
    value: Any, loc: Loc, name: str | int | None, skip: Callable[[Loc], bool], scan: bool
) -> Iterator[FieldSecret]:
    if skip(loc):
        return
    if isinstance(value, str):
        kind = secret_kind(value, identifier=is_identifier(name)) if scan else None
        if kind is not None:
            yield FieldSecret(loc, kind)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            key_text = str(key)
            if skip((*loc, key_text)):  # a field left alone is left alone whatever its name says
                continue
            kind = secret_kind(key_text, identifier=True) if scan else None
            if kind is not None:  # the key itself: named masked, in the answer and the log
                yield FieldSecret((*loc, "[REDACTED]"), kind)
                continue
            if (
                isinstance(item, str)
                and _CREDENTIAL_KEY.search(key_text)
                and not _NOT_CREDENTIAL_KEY.search(key_text)
                and _CREDENTIAL_VALUE.match(item.strip())
                and not PLACEHOLDER.match(item.strip())  # empty, none, n/a: too short for the value rule
                and not item.strip().isdigit()
            ):
                yield FieldSecret((*loc, key_text), "credential_field")
                continue
            yield from _walk(item, (*loc, key_text), key_text, skip, scan)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _walk(item, (*loc, i), name, skip, scan)


def retain_secrets(payload: Mapping[str, Any]) -> list[FieldSecret]:
    """The secrets in a retain request's fields — everything but each item's ``content`` (the
    memory text, which the pipeline judges)."""

    def memory_text(loc: Loc) -> bool:
        return len(loc) == 3 and loc[0] == "items" and loc[2] == "content"

    return field_secrets(payload, skip=memory_text)


class AttachmentTextTooLong(ValueError):
    """The text attachments of a request hold more characters than one request may have judged."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"the attachments that are text hold {size} characters, more than {limit} in all")
        self.size, self.limit = size, limit


_PROBE = 8192  # bytes read to tell text from binary


def _as_text(data: bytes) -> str | None:
    """``data`` as text when it is text (UTF-8, UTF-16 with its byte-order mark, or a single-byte
    encoding), else None (an image, an archive: NUL bytes or many control bytes in its first 8 KB)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    probe = data[:_PROBE]
    control = sum(b < 9 or 13 < b < 32 for b in probe)
    if b"\x00" in probe or control > len(probe) // 50:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:  # not UTF-8 throughout (a Latin-1 byte, a cut character): read as such
        return data.decode("latin-1")


def attachment_secrets(payload: Mapping[str, Any], *, limit: int) -> list[FieldSecret]:
    """The secrets in a retain's image and file blocks: their file names, and the whole of any
    whose bytes are text (a ``.env``, a config, a script, an SVG) — memwarden stores an attachment as
    it is, so it stores none that holds a secret. Bytes that are not text (a PNG) are not read.
    Raises :class:`AttachmentTextTooLong` past ``limit`` characters of such text in all: the work
    one request may ask of the detectors, as its memory text."""
    items = payload.get("items")
    found: list[FieldSecret] = []
    texts: list[tuple[Loc, str]] = []
    size = 0
    for i, item in enumerate(items if isinstance(items, list) else ()):
        blocks = item.get("content") if isinstance(item, Mapping) else None
        for j, block in enumerate(blocks if isinstance(blocks, list) else ()):
            if not isinstance(block, Mapping) or block.get("type") not in ("image", "file"):
                continue
            name = block.get("filename")
            if isinstance(name, str) and (kind := secret_kind(name)):
                found.append(FieldSecret(("items", i, "content", j, "filename"), kind))
            source = block.get("source")
            data = source.get("data") if isinstance(source, Mapping) else None
            if not isinstance(data, str):
                continue
            try:
                head = base64.b64decode(data[: _PROBE // 3 * 4], validate=True)
            except (binascii.Error, ValueError):  # not base64: the model refuses it
                continue
            if _as_text(head) is None:
                continue
            size += len(data) * 3 // 4
            if size > limit:
                raise AttachmentTextTooLong(size, limit)
            try:
                text = _as_text(base64.b64decode(data, validate=True))
            except (binascii.Error, ValueError):
                continue
            if text is not None:
                texts.append((("items", i, "content", j, "source", "data"), text))
    for loc, text in texts:
        if kind := secret_kind(text):
            found.append(FieldSecret(loc, kind))
    return found


def redact_config(value: Any) -> tuple[Any, list[str]]:
    """``value`` with every secret in its strings masked, and the keys (top level) where one was."""
    if not isinstance(value, Mapping):
        return value, []
    out: dict[str, Any] = {}
    touched: list[str] = []
    for key, item in value.items():
        redacted, changed = _redact(item)
        out[key] = redacted
        if changed:
            touched.append(str(key))
    return out, touched


def _redact(value: Any) -> tuple[Any, bool]:
    if isinstance(value, str):
        found = find_secrets(value)
        return (mask(value, found), True) if found else (value, False)
    if isinstance(value, Mapping):
        changed = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            name, named = _redact(str(key))  # a secret used as a key (a strategy's name) masked too
            out[name], one = _redact(item)
            changed = changed or one or named
        return out, changed
    if isinstance(value, list):
        items = [_redact(item) for item in value]
        return [item for item, _ in items], any(one for _, one in items)
    return value, False


def masked(text: str) -> str:
    """``text`` with its secrets masked (a reason, a note: free text an operator writes)."""
    found = find_secrets(text)
    return mask(text, found) if found else text


MAX_NAME_PART = 64  # characters of a field name kept in a message or the audit (the names are the client's)


def field_name(loc: Loc) -> str:
    """A field's path as text (``items[0].metadata.api_key``), each name cut to ``MAX_NAME_PART``
    and masked when it looks like a secret itself (a random token used as a key: keys are scanned
    without the random-token detectors, which would refuse every random id)."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        name = "[REDACTED]" if secret_kind(part) else part[:MAX_NAME_PART]
        text += f".{name}" if text else name
    return text


def locations(found: Sequence[FieldSecret]) -> str:
    """The fields, for a message: ``items[0].metadata.api_key, document_tags[1]``."""
    return ", ".join(field_name(f.loc) for f in found)
