"""What the self-hosted store answers for a request none of its routes serves, as Hindsight 1.1.0's
router would answer it (FastAPI over starlette):

* a documented operation the store does not build (Hindsight's OpenAPI document,
  ``backends/hindsight_openapi.json``): ``501``, saying what it needs — an LLM (reflect, mental
  models, observations …) or what the store does not keep — and how to get it (memwarden in front
  of a Hindsight server);
* a path of Hindsight's asked with a method it does not take: ``405 {"detail": "Method Not
  Allowed"}`` with Hindsight's ``Allow`` (the methods of the first of its routes the path matches:
  one route a method there, so one method, ``GET`` for a ``HEAD``);
* a path that matches once its trailing slash is dropped (or one is added): ``307`` to it, with a
  relative ``Location`` (Hindsight's is absolute, with its own address; the store does not know the
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
from dataclasses import dataclass
from importlib import resources

from starlette.routing import Match, Route
from starlette.types import Receive, Scope, Send

from memwarden.wire.asgi import send_json

PATH = "/{rest:path}"  # the store app's last route: everything its other routes do not serve
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
UPSTREAM = "Run memwarden in front of a Hindsight server (memwarden serve --upstream URL) for it."

# Why a documented operation is not built here, by the pattern of its path: ("llm", what needs
# the LLM) or ("store", what the store does not keep or do). The first pattern that matches wins.
WHY: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern), kind, why)
    for pattern, kind, why in (
        (r"/reflect$", "llm", "Hindsight answers reflect with its LLM"),
        (r"/mental-models", "llm", "mental models are written and refreshed by an LLM"),
        (r"/directives", "llm", "directives steer reflect, which needs an LLM"),
        (r"/knowledge-base/", "llm", "knowledge-base pages are written by an LLM"),
        (r"/memories/dry-run-extract$", "llm", "fact extraction is an LLM's"),
        (r"/prompts/preview$", "llm", "it previews the prompts sent to an LLM"),
        (r"/health/llm$", "llm", "it checks the bank's LLM"),
        (r"/documents/\{document_id\}/reprocess$", "llm", "reprocessing re-extracts facts with an LLM"),
        (r"/observations|/consolidat", "llm", "observations are consolidated by an LLM"),
        (r"/llm-requests", "store", "the store makes no LLM requests to trace"),
        (r"/audit-logs", "store", "memwarden keeps its own audit log instead: GET /warden/v1/audit"),
        (r"^/metrics$", "store", "memwarden's Prometheus metrics are GET /warden/metrics"),
        (r"/graph$", "store", "the store keeps no memory or entity graph"),
        (r"/memories-timeseries$", "store", "the store keeps no time series"),
        (r"/operations/\{operation_id\}", "store", "the store's async retains cannot be cancelled, retried or deleted"),
        (r"/aliases", "store", "the store has no bank aliases"),
        (r"/webhooks", "store", "the store sends no webhooks"),
        (r"/files/retain$", "store", "uploaded files are made text by Hindsight's file parsers, which the store lacks"),
        (r"/files/", "store", "the store keeps no stored files"),
        (r"/document-transfer|/transfer/|/clone$", "store", "bank and document transfer are not built"),
        (r"/import$|/export$|bank-template-schema", "store", "bank templates are not built"),
    )
)


def not_built_reason(template: str) -> tuple[str, str]:
    """Why a documented path is not built here: ``("llm" | "store", why)``."""
    return next(((k, w) for p, k, w in WHY if p.search(template)), ("store", "it is not built yet"))


def not_built_detail(method: str, template: str) -> str:
    """The ``501``'s words for a documented operation the store does not build."""
    kind, why = not_built_reason(template)
    if kind == "llm":
        return (
            f"{method} {template} needs an LLM ({why}), and memwarden's self-hosted mode has none. "
            "Run memwarden in front of a Hindsight server that has one (memwarden serve --upstream URL) for it."
        )
    return f"{method} {template} is not built in memwarden's self-hosted mode ({why}). {UPSTREAM}"


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
    """The store app's last route (:data:`PATH`, any method): Hindsight's answer to what the store's
    other routes do not serve."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        partial = None
        for route in hindsight_routes():
            match = route.match(method, path)
            if match == Match.FULL:
                if route.template is None:  # FastAPI's own pages (/docs …): not memwarden's
                    break
                await send_json(send, 501, {"detail": not_built_detail(method, route.template)})
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


def fallback_route() -> Route:
    """The route that answers what the store's others do not: add it last."""
    return Route(PATH, HindsightFallback())


def not_built(path: str, methods: list[str]) -> Route:
    """A route that hands a path the store does not build to the fallback before a route of the
    store's would take it (Hindsight matches it first: ``…/entities/graph`` before
    ``…/entities/{entity_id}``)."""
    return Route(path, HindsightFallback(), methods=methods)
