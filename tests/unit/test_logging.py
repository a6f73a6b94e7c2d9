"""proxy/logging.py: JSON lines off a TTY, console on a TTY, request context on every line."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from memwarden.proxy.logging import configure_logging
from memwarden.settings import ServerSettings


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.reset_defaults()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_lines_off_a_tty_with_the_bound_request_id() -> None:
    out = io.StringIO()
    configure_logging(ServerSettings(), stream=out)  # type: ignore[call-arg]
    structlog.contextvars.bind_contextvars(request_id="r-1")
    try:
        structlog.get_logger("t").info("request", status=200)
        logging.getLogger("uvicorn.error").warning("from the stdlib")
    finally:
        structlog.contextvars.clear_contextvars()
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["event"] == "request"
    assert lines[0]["request_id"] == "r-1"
    assert lines[0]["status"] == 200
    assert lines[1]["event"] == "from the stdlib"
    assert lines[1]["level"] == "warning"


def test_console_on_a_tty() -> None:
    out = FakeTTY()
    configure_logging(ServerSettings(), stream=out)  # type: ignore[call-arg]
    structlog.get_logger("t").info("request", status=200)
    text = out.getvalue()
    assert "request" in text
    assert "status" in text
    with pytest.raises(json.JSONDecodeError):
        json.loads(text.splitlines()[0])


def test_level_filters_and_httpx_chatter_is_quiet() -> None:
    out = io.StringIO()
    configure_logging(ServerSettings(log_level="warning", log_format="json"), stream=out)  # type: ignore[call-arg]
    structlog.get_logger("t").info("hidden")
    logging.getLogger("httpx").info("HTTP Request: GET ...")
    structlog.get_logger("t").warning("shown")
    assert [json.loads(line)["event"] for line in out.getvalue().splitlines()] == ["shown"]
