"""Who is calling, and may they: the API key a request presents, checked against what its route
needs (``policies/keys.py`` says what each level allows).

A key is presented as ``Authorization: Bearer <token>`` (what the official ``hindsight-client``
sends for its ``api_key``), ``Authorization: <token>`` or ``Token <token>`` (Hindsight accepts the
bare form; Mem0's clients send ``Token``), or ``X-API-Key: <token>``. Answers, in Hindsight's
shape: ``401 {"detail": "Authentication failed: …"}`` with ``WWW-Authenticate: Bearer`` when a key
is required and none usable was presented; ``403`` naming the key, the level and the bank when the
key's scopes do not reach. Both before the body is read: nothing is written, forwarded or audited.

A request that presented a memwarden key goes on without it (the header that carried it removed):
the backend never sees memwarden's keys, and gets memwarden's own credentials (or, with
``forward_client_authorization``, the client's other credential header).
The key's id becomes the actor of everything the request does (``memwarden.db.audit.ACTOR``, set
by the route's endpoint for the handler's run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from starlette.types import Scope, Send

from memwarden.db.keys import KeyRecord
from memwarden.db.records import Provenance
from memwarden.fronts.query import query_params
from memwarden.governance.keys import KeyRing
from memwarden.policies.keys import Level, split_token
from memwarden.wire.asgi import send_json

# What a route needs: a level on a bank (None: on every bank), or nothing ("open": the health probes).
Need = tuple[Level, str | None] | None
Rule = Callable[[Scope, str | None], Need]
CREDENTIAL_HEADERS = (b"authorization", b"x-api-key")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
BANK_PATH = re.compile(r"^/v1/default/banks/[^/]+(/.*)?$")
# The backend's routes under a bank, by what they do (Hindsight 1.1.0's table). Deny by default:
# a changing route not listed here needs ``admin`` (config-like: webhooks, directives, imports,
# deletions …).
READ_ROUTES = re.compile(  # POSTs that only read (a bank's export is an admin's: fronts/hindsight/routes.py)
    r"^/(?:reflect|memories/recall|memories/dry-run-extract"
    r"|consolidation-strategies/preview|prompts/preview|mental-models/[^/]+/dry-run-refresh)/?$"
)
WRITE_ROUTES = re.compile(  # POST/PUT/PATCH an agent writing its memory makes
    r"^/(?:memories|memories/[^/]+|files/retain|documents/.+|mental-models(?:/[^/]+(?:/refresh)?)?"
    r"|knowledge-base/.+|consolidate|entities/[^/]+/regenerate|operations/[^/]+/retry)/?$"
)
OTHER_BANKS = re.compile(r"^/(?:aliases(?:/.*)?|clone|transfer/import)/?$")  # they name another bank


def open_route(scope: Scope, bank: str | None) -> Need:
    return None


def read(scope: Scope, bank: str | None) -> Need:
    return "read", bank


def write(scope: Scope, bank: str | None) -> Need:
    return "write", bank


def admin(scope: Scope, bank: str | None) -> Need:
    return "admin", bank


def by_method(scope: Scope, bank: str | None) -> Need:
    """The pass-through: ``GET`` needs ``read``; a changing request ``read``, ``write`` or
    ``admin`` by the route (:data:`READ_ROUTES`, :data:`WRITE_ROUTES`, everything else); a route
    that names another bank (an alias, a clone's or an import's target) ``admin`` on every bank, as
    does a changing request about no bank (the backend's global routes)."""
    method = scope["method"]
    if method in READ_METHODS:
        return "read", bank
    found = BANK_PATH.match(scope["path"])
    if bank is None or found is None:
        return "admin", None
    rest = found.group(1) or "/"
    if OTHER_BANKS.match(rest):
        return "admin", None
    if method == "POST" and READ_ROUTES.match(rest):
        return "read", bank
    if method in ("POST", "PUT", "PATCH") and WRITE_ROUTES.match(rest):
        return "write", bank
    return "admin", bank


def admin_of_query_bank(scope: Scope, bank: str | None) -> Need:
    """memwarden's audit: ``admin`` on the bank its ``bank`` query parameter names, else on every bank."""
    query = query_params(scope)  # as the audit reads it
    return "admin", query.get("bank") or None


def _credential(name: bytes, value: bytes) -> str:
    text = value.decode("latin-1").strip()
    if name == b"authorization":
        scheme, _, rest = text.partition(" ")
        return rest.strip() if rest and scheme.lower() in ("bearer", "token") else text
    return text


def presented(scope: Scope) -> tuple[str | None, bytes | None]:
    """The credential the request presents to memwarden, and the header it came in: a
    memwarden-shaped token in either header first (the other may carry the client's credential for
    the backend, ``forward_client_authorization``), else the first credential (None: none)."""
    first: tuple[str | None, bytes | None] = (None, None)
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name in CREDENTIAL_HEADERS:
            token = _credential(name, value)
            if split_token(token) is not None:
                return token, name
            if first[0] is None:
                first = (token, name)
    return first


def key_of(scope: Scope) -> KeyRecord | None:
    """The key the request authenticated with (None: none was needed or presented)."""
    key: KeyRecord | None = scope.get("state", {}).get("key")
    return key


def provenance_of(scope: Scope, channel: str) -> Provenance:
    """Who writes through this request, as memwarden saw it: the key it authenticated with (its id
    and scopes; ``anonymous`` without one) and the channel — ``mcp`` when the request is an MCP tool's
    twin (marked in its ASGI scope, which no client can set), else the front's ``channel``."""
    key = key_of(scope)
    via = scope.get("state", {}).get("via")
    scopes = json.dumps(key.scopes.as_json(), separators=(",", ":"), sort_keys=True) if key is not None else None
    return Provenance(key.id if key is not None else "anonymous", scopes, via if via == "mcp" else channel)


def writes_as_admin(scope: Scope, bank: str) -> bool:
    """Whether this request may write what a bank reserves to admin keys (its protected tags): its
    key is an admin of ``bank``, or the request needed no key (none are configured)."""
    return key_of(scope) is None or key_allows(scope, "admin", bank)


def key_allows(scope: Scope, level: Level, bank: str | None) -> bool:
    """Whether the request's key grants ``level`` on ``bank`` (False without a key)."""
    key = key_of(scope)
    return key is not None and key.scopes.allows(level, bank)


async def authorize(keys: KeyRing, scope: Scope, send: Send, need: Need) -> bool:
    """Whether the request may go on; otherwise it has been answered (401/403)."""
    if need is None:
        return True
    token, header = presented(scope)
    key = await keys.find(token) if token else None
    if key is None and not await keys.required():
        if token is not None and header is not None and split_token(token) is not None:
            _drop(scope, header)  # a memwarden key that is not one: not passed on
        return True
    if key is None:
        await _unauthenticated(send, token)
        return False
    level, bank = need
    state = scope.setdefault("state", {})
    state["key_id"] = key.id  # the log line names who asked, refused or not
    if not key.scopes.allows(level, bank):
        where = f"bank '{bank}'" if bank is not None else "every bank (the pattern '*')"
        await send_json(send, 403, {"detail": f"Key {key.id} ({key.name}) may not {level} {where}"})
        return False
    state["key"] = key
    if header is not None:
        _drop(scope, header)
    return True


async def authenticated(keys: KeyRing, scope: Scope, send: Send) -> bool:
    """Whether the request presents a usable key, or needs none; otherwise it has been answered
    (401). For a door whose calls each ask their own scope later (the MCP server's): the key's
    header stays on the request."""
    token, _ = presented(scope)
    if (token and await keys.find(token)) or not await keys.required():
        return True
    await _unauthenticated(send, token)
    return False


async def _unauthenticated(send: Send, token: str | None) -> None:
    said = "an API key is required (Authorization: Bearer <key>)" if not token else "Invalid API key"
    await send_json(send, 401, {"detail": f"Authentication failed: {said}"}, headers=[(b"www-authenticate", b"Bearer")])


def _drop(scope: Scope, header: bytes) -> None:
    """The request without the header that carried memwarden's key: the backend never sees it (the
    other credential header, if any, is the client's for the backend)."""
    scope["headers"] = [(k, v) for k, v in scope["headers"] if k != header]
