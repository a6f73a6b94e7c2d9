"""The one HTTP client of the command line: a running memwarden's ``/warden/v1`` API.

Paths are built from segments, each quoted whole (``urllib.parse.quote(segment, safe="")``): a bank
or memory id holding ``/``, ``?``, ``#``, a space or ``%`` reaches the server as the one segment it
is. Every failure is a one-line :class:`click.ClickException` (exit code 1); the wording is the
caller's where a command has its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import click

if TYPE_CHECKING:  # httpx is imported when a command talks to a server, not for every command
    import httpx

DEFAULT_URL = "http://127.0.0.1:8890"
API = "/warden/v1"
TIMEOUT = 120.0
URL_OPTION = click.option("--url", default=DEFAULT_URL, show_default=True, help="The running memwarden.")

Params = Mapping[str, Any] | list[tuple[str, Any]] | None


def api_path(*segments: str) -> str:
    """``/warden/v1/<segment>/…``, each segment quoted whole."""
    return "/".join((API, *(quote(segment, safe="") for segment in segments)))


def body_of(response: httpx.Response) -> Any:
    """The answer's JSON, or None when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def answer(response: httpx.Response) -> Any:
    """The answer's JSON; a one-line error when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        raise click.ClickException(f"memwarden answered {response.status_code}: {response.text[:200]}") from None


def detail(response: httpx.Response) -> Any:
    """What a refusal says: its JSON ``detail``, else its text."""
    body = body_of(response)
    return body.get("detail", response.text) if isinstance(body, dict) else response.text


KEY_VARIABLE = "MEMWARDEN_API_KEY"


class Client:
    """A running memwarden at ``url`` (as the user gave it; it names the server in messages). The key
    in ``MEMWARDEN_API_KEY``, when set, goes with every request (``Authorization: Bearer``)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.base = url.rstrip("/")
        key = os.environ.get(KEY_VARIABLE, "").strip()
        self.auth = {"authorization": f"Bearer {key}"} if key else {}

    def _headers(self, headers: Mapping[str, str] | None) -> dict[str, str]:
        return {**self.auth, **(headers or {})}

    def endpoint(self, *segments: str) -> str:
        return self.base + api_path(*segments)

    def request(
        self,
        method: str,
        *segments: str,
        params: Params = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout = TIMEOUT,
        failure: str | None = None,
        hint: str | None = None,
    ) -> httpx.Response:
        """One request, whatever its status. Not reaching the server is ``"{failure}: {error}"``
        (default: ``cannot reach memwarden at URL``), then ``"; {hint}"`` if given."""
        import httpx

        try:
            return httpx.request(
                method,
                self.endpoint(*segments),
                params=params,
                json=json,
                headers=self._headers(headers),
                timeout=timeout,
            )
        except httpx.HTTPError as exc:
            raise self._failure(exc, failure, hint) from None

    def call(self, method: str, *segments: str, expect: int = 200, ok: tuple[int, ...] = (), **kwargs: Any) -> Any:
        """One request; its JSON answer (status ``expect``, or one of ``ok``), or a one-line error:
        ``"{status}: {detail}"``."""
        r = self.request(method, *segments, **kwargs)
        body = answer(r)
        if r.status_code != expect and r.status_code not in ok:
            said = body.get("detail", body) if isinstance(body, dict) else body
            raise click.ClickException(f"{r.status_code}: {said if isinstance(said, str) else json.dumps(said)}")
        return body

    def read(
        self, *segments: str, failure: str, params: Params = None, timeout: float | httpx.Timeout = TIMEOUT
    ) -> Any:
        """GET a 2xx JSON answer; anything else (unreachable, an error status, not JSON) is
        ``"{failure}: {error}"``."""
        import httpx

        try:
            r = httpx.get(self.endpoint(*segments), params=params, headers=self._headers(None), timeout=timeout)
            r.raise_for_status()
            return r.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise self._failure(exc, failure) from None

    def stream_lines(
        self,
        *segments: str,
        failure: str,
        params: Params = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
    ) -> Iterator[str]:
        """GET a streamed answer, line by line as they come (no read timeout unless ``timeout``);
        failing at any point is ``"{failure}: {error}"``."""
        import httpx

        timeout = timeout if timeout is not None else httpx.Timeout(30, read=None)
        try:
            with httpx.stream(
                "GET", self.endpoint(*segments), params=params, headers=self._headers(headers), timeout=timeout
            ) as r:
                r.raise_for_status()
                yield from r.iter_lines()
        except httpx.HTTPError as exc:
            raise self._failure(exc, failure) from None

    def _failure(self, exc: Exception, failure: str | None, hint: str | None = None) -> click.ClickException:
        message = f"{failure or f'cannot reach memwarden at {self.url}'}: {exc}"
        return click.ClickException(f"{message}; {hint}" if hint else message)
