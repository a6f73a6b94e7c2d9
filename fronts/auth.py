"""Who is calling, and may they: the API key a request presents, checked against what its route
needs (``policies/keys.py`` says what each level allows).

A key is presented as ``Authorization: Bearer <token>`` (what the official ``hindsight-client``
sends for its ``api_key``), ``Authorization: <token>`` or ``Token <token>`` (Hindsight accepts the
bare form; Mem0's clients send ``Token``), or ``X-API-Key: <token>``. Answers, in Hindsight's
shape: ``401 {"detail": "Authentication failed: …"}`` with ``WWW-Authenticate: Bearer`` when a key
is required and none usable was presented; ``403`` naming the key, the level and the bank when the
key's scopes do not reach. Both before the body is read: nothing is written, forwarded or audited.

A request that presented a memwarden key goes on without it (its ``Authorization`` / ``X-API-Key``
header removed): the backend never sees memwarden's keys, and gets memwarden's own credentials.
The key's id becomes the actor of everything the request does (``memwarden.db.audit.ACTOR``, set
by the route's endpoint for the handler's run).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from starlette.types import Scope, Send

from memwarden.db.keys import KeyRecord
from memwarden.fronts.asgi import send_json
from memwarden.governance.keys import KeyRing
from memwarden.policies.keys import Level, split_token

# What a route needs: a level on a bank (None: on every bank), or nothing ("open": the health probes).
Need = tuple[Level, str | None] | None
Rule = Callable[[Scope, str | None], Need]
CREDENTIAL_HEADERS = (b"authorization", b"x-api-key")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
READ_POSTS = ("/reflect", "/recall")  # POSTs of the backend's API that only read


def open_route(scope: Scope, bank: str | None) -> Need:
    return None


def read(scope: Scope, bank: str | None) -> Need:
    return "read", bank


def write(scope: Scope, bank: str | None) -> Need:
    return "write", bank


def admin(scope: Scope, bank: str | None) -> Need:
    return "admin", bank


def by_method(scope: Scope, bank: str | None) -> Need:
    """The pass-through: reads need ``read``; other methods ``write`` on a bank's path, ``admin``
    on a path about no bank (the backend's global routes)."""
    method = scope["method"]
    if method in READ_METHODS or (method == "POST" and scope["path"].rstrip("/").endswith(READ_POSTS)):
        return "read", bank
    return ("write", bank) if bank is not None else ("admin", None)


def admin_of_query_bank(scope: Scope, bank: str | None) -> Need:
    """memwarden's audit: ``admin`` on the bank its ``bank`` query parameter names, else on every bank."""
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    return "admin", query.get("bank") or None


def presented(scope: Scope) -> str | None:
    """The credential the request carries, without its scheme word (None: none)."""
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"authorization":
            text = value.decode("latin-1").strip()
            scheme, _, rest = text.partition(" ")
            return rest.strip() if rest and scheme.lower() in ("bearer", "token") else text
        if name == b"x-api-key":
            return value.decode("latin-1").strip()
    return None


def key_of(scope: Scope) -> KeyRecord | None:
    """The key the request authenticated with (None: none was needed or presented)."""
    key: KeyRecord | None = scope.get("state", {}).get("key")
    return key


def key_allows(scope: Scope, level: Level, bank: str | None) -> bool:
    """Whether the request's key grants ``level`` on ``bank`` (False without a key)."""
    key = key_of(scope)
    return key is not None and key.scopes.allows(level, bank)


async def authorize(keys: KeyRing, scope: Scope, send: Send, need: Need) -> bool:
    """Whether the request may go on; otherwise it has been answered (401/403)."""
    if need is None:
        return True
    token = presented(scope)
    key = await keys.find(token) if token else None
    if key is None and not await keys.required():
        if token is not None and split_token(token) is not None:  # a memwarden key that is not one: not passed on
            _drop_credentials(scope)
        return True
    if key is None:
        said = "an API key is required (Authorization: Bearer <key>)" if not token else "Invalid API key"
        await send_json(
            send, 401, {"detail": f"Authentication failed: {said}"}, headers=[(b"www-authenticate", b"Bearer")]
        )
        return False
    level, bank = need
    state = scope.setdefault("state", {})
    state["key_id"] = key.id  # the log line names who asked, refused or not
    if not key.scopes.allows(level, bank):
        where = f"bank '{bank}'" if bank is not None else "every bank (the pattern '*')"
        await send_json(send, 403, {"detail": f"Key {key.id} ({key.name}) may not {level} {where}"})
        return False
    state["key"] = key
    _drop_credentials(scope)
    return True


def _drop_credentials(scope: Scope) -> None:
    scope["headers"] = [(k, v) for k, v in scope["headers"] if k not in CREDENTIAL_HEADERS]
