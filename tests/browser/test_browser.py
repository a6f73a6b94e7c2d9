"""No writes from web pages, proven in a real browser: Debian's Chromium, headless, driven by
Playwright for Python (no browser download: ``executable_path=/usr/bin/chromium``; ``.ci/run``
installs the package). memwarden runs self-hosted on one loopback port; the pages come from a real
server on another (another origin), or — for DNS rebinding — a script running in the origin of a
name that resolves to 127.0.0.1 (``--host-resolver-rules``) at memwarden's port, its requests
same-origin, going over the network to memwarden."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from testing.loopback import serve_in_thread
from tests.conftest import running_warden
from tests.loopback.test_hostile import counts
from tests.loopback.test_local_store import local_settings

FACT = json.dumps({"items": [{"content": "The staging cluster has 3 nodes with 16 GB RAM each."}]})


def page_app() -> Starlette:
    """Another site: an empty page its scripts run in, and a form that posts to ``?to=``."""

    async def home(request: Request) -> HTMLResponse:
        return HTMLResponse("<!doctype html><title>another site</title><p>hello</p>")

    async def form(request: Request) -> HTMLResponse:
        target = request.query_params["to"]
        return HTMLResponse(
            f'<!doctype html><form id="f" method="POST" action="{target}" enctype="text/plain">'
            f'<input name=\'{{"items":[{{"content":"Posted by a form: the VPN password rotates monthly.","x":"\' '
            "value='\"}]}'></form>"
        )

    return Starlette(routes=[Route("/", home), Route("/form", form)])


@pytest.fixture
def site() -> Iterator[str]:
    with serve_in_thread(page_app()) as url:
        yield url


def run(page: Page, script: str, *args: Any) -> Any:
    return page.evaluate(script, list(args))


POST_NO_CORS = """async ([url, body]) => {
  await fetch(url, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body});
  return "sent";
}"""
POST_JSON = """async ([url, body]) => {
  try {
    const r = await fetch(url, {method: "POST", headers: {"Content-Type": "application/json"}, body});
    return {status: r.status, body: await r.text()};
  } catch (e) { return {error: String(e)}; }
}"""


def test_a_page_on_another_site_cannot_write_by_script_or_by_form(browser: Browser, site: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_warden(local_settings(data)) as warden:
        page = browser.new_page()
        try:
            page.goto(site)
            target = f"{warden}/v1/default/banks/web/memories"
            assert run(page, POST_NO_CORS, target, FACT) == "sent"  # a "simple" request: no preflight
            blocked = run(page, POST_JSON, target, FACT)  # with a preflight: refused, so never sent
            assert "error" in blocked
            page.goto(f"{site}/form?to={target}")
            with page.expect_navigation():
                page.evaluate("document.getElementById('f').submit()")
            assert "is not allowed" in page.content()  # the 403, as the browser shows it
        finally:
            page.close()
        assert counts(data) == (0, 0)  # nothing stored, nothing audited


def test_a_rebound_name_is_refused_even_from_its_own_origin(browser: Browser, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_warden(local_settings(data)) as warden:
        port = warden.rsplit(":", 1)[1]
        rebound = f"http://rebound.example:{port}"
        page = browser.new_page()
        try:
            # A document of the origin rebound.example:<memwarden's port> — where the attacker's script
            # runs once the name points at 127.0.0.1 (memwarden's own 403 is the document here; the
            # script evaluated in it is the attacker's).
            first = page.goto(f"{rebound}/")
            assert first is not None
            assert first.status == 403
            answer = run(page, POST_JSON, f"{rebound}/v1/default/banks/web/memories", FACT)  # same origin now
            assert answer["status"] == 403, answer
            assert "Host 'rebound.example:" in answer["body"]
        finally:
            page.close()
        assert counts(data) == (0, 0)


def test_a_configured_origin_may_call_with_cors(browser: Browser, tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serve_in_thread(page_app()) as site:
        settings = local_settings(data)
        server = settings.server.model_copy(update={"allowed_origins": [site]})
        with running_warden(settings.model_copy(update={"server": server})) as warden:
            page = browser.new_page()
            try:
                page.goto(site)
                answer = run(page, POST_JSON, f"{warden}/v1/default/banks/web/memories", FACT)
                assert answer.get("status") == 200, answer
                assert json.loads(answer["body"])["success"] is True
            finally:
                page.close()
    assert counts(data)[0] == 1
