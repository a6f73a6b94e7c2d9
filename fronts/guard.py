"""No requests from web pages that do not belong: the ``Host`` a request names and the ``Origin`` a
browser sends, checked before any route runs.

* **Host** (DNS rebinding: a page on ``evil.example`` whose name resolves to 127.0.0.1 reaches a
  local server with ``Host: evil.example``): the host name must be one of ``server.allowed_hosts``
  — by default the loopback names (``localhost``, ``127.0.0.1``, ``::1``) and the address memwarden
  is bound to; bound to every address (``0.0.0.0``/``::``, as in a container), the loopback names
  and any IP address (rebinding needs a DNS name; other names must be listed); ``*``: any.
  Otherwise ``403``. A request with no ``Host`` (HTTP/1.0, a health probe) is answered. A ``Host``
  that is not a host name or address with an optional port (``127.0.0.1:8890@evil.example``), or
  more than one ``Host`` header, is refused (``400``): what is checked is what every reader sees.
* **Query strings** where a parameter that takes one value is given more than once are refused
  (``400``, ``fronts/query.py``): the key check and the handler must never read two values; a
  ``limit``/``offset``/``min_count`` past PostgreSQL's integer on Hindsight's routes (``/v1/``) is a ``422``
  (it was the backend's 500).
* **Header values** must be ASCII (``400``): a value in another encoding broke the pass-through
  (a 500, the value in the log); browsers and HTTP clients encode such values themselves.
* **Paths** with a ``.`` or ``..`` segment anywhere are refused (``400``): a normalising HTTP
  client would send them to another route than the one memwarden judged.
* **Origin** (a page on another site posting to a local memwarden: a ``text/plain`` POST is a
  "simple" request, sent without a preflight): a request that carries an ``Origin`` must come from
  memwarden's own origin or one of ``server.allowed_origins``; otherwise ``403``, and nothing runs.
  Clients that are not browsers send no ``Origin`` and are not affected.
* **CORS** headers only for the allowed origins: a preflight (``OPTIONS`` with
  ``Access-Control-Request-Method``) from one is answered ``204``; their responses carry
  ``Access-Control-Allow-Origin`` with ``Vary: Origin``.

The JSON routes also refuse a body whose ``Content-Type`` is not JSON (``wire/asgi.py``), as
Hindsight does: with ``Origin`` refused and no ``text/plain`` JSON, a page's simple request cannot
write.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memwarden.fronts import query
from memwarden.wire.asgi import send_json

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})  # noqa: S104 - names, compared with the bound address
# A host name (letters, digits, ``.``, ``-``, ``_``) or a bracketed IPv6 address, with an optional port.
HOST_HEADER = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::[0-9]{1,5})?$")
EXPOSED = b"x-request-id, x-warden-decisions, x-warden-outbox, x-warden-snapshot, x-warden-excluded, retry-after"


def host_name(value: str) -> str:
    """The host of a ``Host`` header, without its port (``[::1]:8890`` → ``::1``), lowercased."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def allowed_host_names(bound: str, configured: Iterable[str]) -> frozenset[str] | None:
    """The host names memwarden answers to; None: any. Bound to every address with none configured:
    the loopback names (and, see :func:`host_allowed`, any IP address: rebinding needs a name)."""
    names = {host_name(h) if h != "*" else "*" for h in configured}
    if "*" in names:
        return None
    if names:
        return frozenset(names)
    return frozenset(LOOPBACK if bound in WILDCARD else {*LOOPBACK, host_name(bound)})


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def host_allowed(host: str, allowed: frozenset[str] | None, *, any_ip: bool) -> bool:
    """Whether a request naming ``host`` is answered. No ``Host`` at all (HTTP/1.0, a health probe)
    is: a browser always sends one."""
    if allowed is None or not host:
        return True
    name = host_name(host)
    return name in allowed or (any_ip and _is_ip(name))


def has_dot_segment(path: str) -> bool:
    """A ``.`` or ``..`` segment anywhere in the (decoded) path: what a client of a normalising HTTP
    library would send to a route other than the one memwarden judged."""
    return any(segment in (".", "..") for segment in path.split("/"))


def request_shape_problem(scope: Scope, host: str) -> str | None:
    """Why a request is refused before its Host is even compared (None: it is not): two ``Host``
    headers, a ``Host`` that is not a host with a port, a query parameter given twice."""
    hosts = 0
    for name, value in scope["headers"]:
        hosts += name == b"host"
        if not value.isascii():  # the value is neither echoed nor logged: it may be anything
            return f"Header {name.decode('latin-1')[:64]!r} must be ASCII (encode other characters, RFC 8187)"
    if hosts > 1:
        return "A request must carry one Host header"
    if host and not HOST_HEADER.match(host.strip()):
        return "The Host header must be a host name or address with an optional port"
    return query.problem(scope.get("query_string", b""))


class OriginGuard:
    def __init__(self, app: ASGIApp, *, bound: str, allowed_hosts: Iterable[str], allowed_origins: Iterable[str]):
        self.app = app
        configured = list(allowed_hosts)
        self.hosts = allowed_host_names(bound, configured)
        self.any_ip = bound in WILDCARD and not configured
        self.origins = frozenset(o.rstrip("/").lower() for o in allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode(): v.decode("latin-1") for k, v in scope["headers"] if k in (b"host", b"origin")}
        host = headers.get("host", "")
        refused = request_shape_problem(scope, host)
        if refused is not None:
            await send_json(send, 400, {"detail": refused})
            return
        # Hindsight's routes: a count it would take and PostgreSQL refuse (memwarden's own bound theirs).
        too_large = query.count_problem(scope.get("query_string", b"")) if scope["path"].startswith("/v1/") else None
        if too_large is not None:  # Hindsight's own 422 for a number out of range
            await send_json(send, 422, too_large)
            return
        if not host_allowed(host, self.hosts, any_ip=self.any_ip):
            await send_json(send, 403, {"detail": f"Host {host[:200]!r} is not allowed (server.allowed_hosts)"})
            return
        if has_dot_segment(scope["path"]):
            await send_json(send, 400, {"detail": "A path must not hold '.' or '..' segments"})
            return
        origin = headers.get("origin")
        if origin is None:
            await self.app(scope, receive, send)
            return
        normalized = origin.strip().rstrip("/").lower()
        own = normalized in (f"http://{host.lower()}", f"https://{host.lower()}")
        if not own and normalized not in self.origins:
            await send_json(
                send,
                403,
                {"detail": f"Origin {origin[:200]!r} is not allowed (server.allowed_origins); nothing was done"},
            )
            return
        if own:  # same origin: no CORS headers needed
            await self.app(scope, receive, send)
            return
        cors = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"vary", b"Origin"),
            (b"access-control-expose-headers", EXPOSED),
        ]
        requested = dict(scope["headers"]).get(b"access-control-request-method")
        if scope["method"] == "OPTIONS" and requested is not None:  # a preflight
            asked = dict(scope["headers"]).get(b"access-control-request-headers", b"")
            preflight = [
                *cors,
                (b"access-control-allow-methods", b"GET, POST, PUT, PATCH, DELETE, OPTIONS"),
                (b"access-control-allow-headers", asked),
                (b"access-control-max-age", b"600"),
                (b"content-length", b"0"),
            ]
            await send({"type": "http.response.start", "status": 204, "headers": preflight})
            await send({"type": "http.response.body", "body": b""})
            return

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *cors]
            await send(message)

        await self.app(scope, receive, with_cors)
