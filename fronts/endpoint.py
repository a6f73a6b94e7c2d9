"""A route's endpoint, shared by every front's route table: the bank id and the path's ids checked
(``policies/ids.py``), the caller's key asked whether it grants what the route needs
(``fronts/auth.py``), the key made the actor of every audit event the request makes, then the
front's handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memwarden.db.audit import ACTOR
from memwarden.fronts import auth
from memwarden.governance.state import AppState
from memwarden.policies.ids import bank_id_problem, id_secret_problem
from memwarden.wire.asgi import send_json

Handler = Callable[[AppState, Scope, Receive, Send], Awaitable[None]]


BANK_PREFIX = "/v1/default/banks/"


def bank_of(path: str) -> str | None:
    """The bank a Hindsight path is about, for the log line of routes without a bank parameter."""
    if not path.startswith(BANK_PREFIX):
        return None
    return path[len(BANK_PREFIX) :].split("/", 1)[0] or None


class Endpoint:
    """An ASGI endpoint bound to the app state; starlette treats it as a raw ASGI app. ``need``: what
    the caller's key must grant (``fronts/auth.py``), from the request and its bank."""

    def __init__(self, name: str, handler: Handler, need: auth.Rule) -> None:
        self.__name__ = name
        self.handler = handler
        self.need = need

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state: AppState = scope["app"].state.warden
        bank_id = scope.get("path_params", {}).get("bank_id") or bank_of(scope["path"])
        info = scope.setdefault("state", {})
        info["route"] = self.__name__  # the metrics' route label
        if bank_id is not None:
            problem = bank_id_problem(bank_id, _raw_bank_segment(scope))
            if problem is not None:  # before anything is read, written or forwarded
                await send_json(send, 400, {"detail": problem})
                return
            info["bank_id"] = bank_id
        for name, value in scope.get("path_params", {}).items():  # document, operation, memory … ids
            if name == "path":  # the pass-through: any segment of the backend's path is an id of its own
                problem = next(
                    (p for part in value.split("/") if (p := id_secret_problem("A path segment", part))), None
                ) or id_secret_problem("A path segment", value)
            elif name.endswith("_id") and name != "bank_id":
                problem = id_secret_problem(name, value)
            else:
                problem = None
            if problem is not None:
                await send_json(send, 400, {"detail": problem})
                return
        if not await auth.authorize(state.keys, scope, send, self.need(scope, bank_id)):
            return
        key = auth.key_of(scope)
        if key is None:
            await self.handler(state, scope, receive, send)
            return
        acting = ACTOR.set(key.id)  # the actor of every audit event the request makes
        try:
            await self.handler(state, scope, receive, send)
        finally:
            ACTOR.reset(acting)


def _raw_bank_segment(scope: Scope) -> str | None:
    """The bank's path segment as sent (still percent-encoded)."""
    raw = (scope.get("raw_path") or b"").decode("latin-1")
    for prefix in (BANK_PREFIX, "/warden/v1/banks/"):
        if raw.startswith(prefix):
            return raw[len(prefix) :].split("/", 1)[0]
    return None


def route(path: str, name: str, handler: Handler, need: auth.Rule, methods: list[str] | None, *, exact: bool) -> Route:
    """A route of ``handler`` at ``path``; ``exact``: it takes exactly ``methods`` (Starlette adds
    HEAD beside a GET — a dialect whose server answers HEAD with 405 does not want it)."""
    made = Route(path, Endpoint(name, handler, need), methods=methods)
    if exact and methods is not None:
        made.methods = set(methods)
    return made
