"""The dashboard's files: ``/warden/ui/`` (the page) and ``/warden/ui/{asset}`` (its CSS and
JavaScript modules), from ``fronts/ui/static/`` inside the package.

The files hold no data and need no key: the page asks the person for a memwarden key, keeps it in
the tab's ``sessionStorage`` and sends it as ``Authorization: Bearer`` on every call to
``/warden/v1`` — no cookie, so a page of another site cannot make the browser send a credential
(and the guard refuses a foreign ``Origin`` anyway). Every answer carries a strict
Content-Security-Policy (scripts, styles and connections from memwarden's own origin only, no
inline script, no framing), ``nosniff`` and ``no-referrer``.
"""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable

from starlette.routing import BaseRoute
from starlette.types import Receive, Scope, Send

from memwarden.fronts import auth
from memwarden.fronts.endpoint import route
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json

CSP = (
    b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
    b" font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
]
TYPES = {
    ".html": b"text/html; charset=utf-8",
    ".css": b"text/css; charset=utf-8",
    ".js": b"text/javascript; charset=utf-8",
    ".svg": b"image/svg+xml",
}


@functools.cache
def assets() -> dict[str, bytes]:
    """Every file the dashboard serves, by its path under ``static/`` (read once: the package's
    files do not change while it runs). Only these names are served: a path is looked up, never
    joined onto the file system."""
    found: dict[str, bytes] = {}

    def walk(folder: Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif any(entry.name.endswith(ext) for ext in TYPES):
                found[f"{prefix}{entry.name}"] = entry.read_bytes()

    walk(resources.files("memwarden.fronts.ui").joinpath("static"), "")
    return found


async def _send_file(send: Send, name: str, *, head: bool) -> None:
    body = assets()[name]
    content_type = TYPES[name[name.rfind(".") :]]
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-cache"),  # revalidated each time: an upgrade is seen at once
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def ui_redirect(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``/warden/ui`` → ``/warden/ui/``: the page's relative module paths resolve under it."""
    headers = [(b"location", b"/warden/ui/"), (b"content-length", b"0"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": 307, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


async def ui_page(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    await _send_file(send, "index.html", head=scope["method"] == "HEAD")


async def ui_asset(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    name: str = scope["path_params"]["asset"]
    if name not in assets():
        await send_json(send, 404, {"detail": f"No dashboard file {name[:200]!r}"}, headers=SECURITY_HEADERS)
        return
    await _send_file(send, name, head=scope["method"] == "HEAD")


def ui_routes() -> list[BaseRoute]:
    """The dashboard's route table: open (the page asks for a key; its calls to ``/warden/v1`` need one)."""
    get = ["GET"]
    return [
        route("/warden/ui", "warden_ui_redirect", ui_redirect, auth.open_route, get, exact=False),
        route("/warden/ui/", "warden_ui", ui_page, auth.open_route, get, exact=False),
        route("/warden/ui/{asset:path}", "warden_ui_asset", ui_asset, auth.open_route, get, exact=False),
    ]
