"""Hindsight 1.1.0's router, for a server that speaks Hindsight's API over something else (the
self-hosted store, memwarden in front of Mem0): what it answers to a request none of the server's
routes serves, as Hindsight's router (FastAPI over starlette) would answer it:

* a documented operation (Hindsight's OpenAPI document, ``backends/hindsight_openapi.json``) the
  server does not build: ``501``, with the server's words for why (``detail``);
* a path of Hindsight's asked with a method it does not take: ``405 {"detail": "Method Not
  Allowed"}`` with Hindsight's ``Allow`` (the methods of the first of its routes the path matches:
  one route a method there, so one method, ``GET`` for a ``HEAD``);
* a path that matches once its trailing slash is dropped (or one is added): ``307`` to it, with a
  relative ``Location`` (Hindsight's is absolute, with its own address; the server does not know the
  address the client used, and a relative one resolves against it);
* anything else: ``404 {"detail": "Not Found"}``.

Hindsight's route table is its OpenAPI document's paths in order (the order its routes were
declared: the first route of each path is the first one listed for it), the ids that may hold a
``/`` as starlette ``path`` parameters, and the routes it hides from the document.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from memwarden.wire.asgi import send_json

PATH_IDS = ("document_id", "chunk_id", "key")  # Hindsight's {…:path} parameters
# Routes Hindsight serves and does not document (FastAPI's own pages answer GET and HEAD; their Allow,
# a set's order in Hindsight's process, was seen as "HEAD, GET").
PAGE = ("HEAD", "GET")
HIDDEN: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("/openapi.json", PAGE),
    ("/docs", PAGE),
    ("/docs/oauth2-redirect", PAGE),
    ("/redoc", PAGE),
    ("/v1/version", ("GET",)),
)


@dataclass(frozen=True)
class HindsightRoute:
    """One route of Hindsight's router: its documented path (None: hidden) and its methods."""

    route: Route
    template: str | None
    allow: str

    def match(self, method: str, path: str) -> Match:
        return self.route.matches({"type": "http", "method": method, "path": path})[0]


def _route(template: str, methods: tuple[str, ...], *, hidden: bool = False) -> HindsightRoute:
    path = re.sub(r"\{(%s)\}" % "|".join(PATH_IDS), r"{\1:path}", template)  # noqa: UP031
    route = Route(path, _never, methods=list(methods))
    route.methods = set(methods)  # FastAPI's routes take exactly their method (starlette adds HEAD to a GET)
    return HindsightRoute(route, None if hidden else template, ", ".join(methods))


async def _never(scope: Scope, receive: Receive, send: Send) -> None:  # pragma: no cover - only matched
    raise AssertionError("Hindsight's table is matched, never served")


@functools.cache
def hindsight_routes() -> tuple[HindsightRoute, ...]:
    """Hindsight 1.1.0's routes in its router's order, one a method."""
    text = resources.files("memwarden.backends").joinpath("hindsight_openapi.json").read_text(encoding="utf-8")
    routes = [_route(p, m, hidden=True) for p, m in HIDDEN]
    for template, item in json.loads(text)["paths"].items():
        routes += [_route(template, (method.upper(),)) for method in item]
    return tuple(routes)


def documented(method: str, path: str) -> str | None:
    """The documented path of the Hindsight operation a request is (None: none)."""
    found = next((r for r in hindsight_routes() if r.match(method, path) == Match.FULL), None)
    return None if found is None else found.template


class HindsightFallback:
    """A Hindsight-speaking app's last route (any method): Hindsight's router's answer to what its
    other routes do not serve; ``detail(method, template)`` says why a documented one is not built."""

    def __init__(self, detail: Callable[[str, str], str]) -> None:
        self.detail = detail

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        partial = None
        for route in hindsight_routes():
            match = route.match(method, path)
            if match == Match.FULL:
                if route.template is None:  # FastAPI's own pages (/docs …): not served
                    break
                await send_json(send, 501, {"detail": self.detail(method, route.template)})
                return
            if match == Match.PARTIAL and partial is None:
                partial = route
        else:
            if partial is not None:
                allow = partial.allow.encode()
                await send_json(send, 405, {"detail": "Method Not Allowed"}, headers=[(b"allow", allow)])
                return
            location = _slash_toggled(scope)
            if location is not None:
                headers = [(b"location", location.encode("latin-1")), (b"content-length", b"0")]
                await send({"type": "http.response.start", "status": 307, "headers": headers})
                await send({"type": "http.response.body", "body": b""})
                return
        await send_json(send, 404, {"detail": "Not Found"})


def _slash_toggled(scope: Scope) -> str | None:
    """starlette's ``redirect_slashes``: the target with its trailing slashes dropped (or one added)
    when that is a route's path; None otherwise."""
    path: str = scope["path"]
    if path == "/":
        return None
    toggled = path.rstrip("/") if path.endswith("/") else path + "/"
    if all(r.match(scope["method"], toggled) == Match.NONE for r in hindsight_routes()):
        return None
    raw = (scope.get("raw_path") or path.encode()).decode("latin-1")
    target = raw.rstrip("/") if path.endswith("/") else raw + "/"
    query: bytes = scope.get("query_string", b"")
    return target + ("?" + query.decode("latin-1") if query else "")
