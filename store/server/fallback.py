"""What the self-hosted store answers for a request none of its routes serves: Hindsight 1.1.0's
router's answer (``backends/hindsight_router.py``: 405, 307, 404), and for a documented operation
the store does not build a ``501`` saying what it needs — an LLM (reflect, mental models,
observations …) or what the store does not keep — and how to get it (memwarden in front of a
Hindsight server).
"""

from __future__ import annotations

import re

from starlette.routing import Route

from memwarden.backends.hindsight_router import HindsightFallback

PATH = "/{rest:path}"  # the store app's last route: everything its other routes do not serve
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


def fallback_route() -> Route:
    """The route that answers what the store's others do not: add it last."""
    return Route(PATH, HindsightFallback(not_built_detail))


def not_built(path: str, methods: list[str]) -> Route:
    """A route that hands a path the store does not build to the fallback before a route of the
    store's would take it (Hindsight matches it first: ``…/entities/graph`` before
    ``…/entities/{entity_id}``)."""
    return Route(path, HindsightFallback(not_built_detail), methods=methods)
