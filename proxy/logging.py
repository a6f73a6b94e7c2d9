"""structlog set-up: configured once at start-up; JSON lines off a TTY, console on a TTY.

Request-scoped fields (``request_id``) are bound with contextvars by the request middleware, so
every line logged while serving a request carries them.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog

from memwarden.settings import ServerSettings


def configure_logging(settings: ServerSettings, *, stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger (uvicorn's loggers go through it)."""
    out = stream or sys.stderr
    level = getattr(logging, settings.log_level.upper())
    use_json = settings.log_format == "json" or (settings.log_format == "auto" and not out.isatty())
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # httpx logs every backend call at info; memwarden's request line already carries the outcome.
    logging.getLogger("httpx").setLevel(max(level, logging.WARNING))
    # The MCP SDK logs each stateless call's session ending at info: noise beside the request line.
    logging.getLogger("mcp").setLevel(max(level, logging.WARNING))
    # uvicorn's own access log would duplicate memwarden's canonical request line.
    logging.getLogger("uvicorn.access").disabled = True
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
