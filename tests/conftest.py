from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.proxy.app import create_app
from memwarden.settings import Settings, load_settings
from tests.servers import serve_in_thread
from tests.upstream import UpstreamProbe, create_upstream

REPO = Path(__file__).resolve().parent.parent
# Data directories of tests that do not pass their own live under one root, removed when the test
# session's interpreter exits (before, each run left ~200 directories behind in the temp dir).
_SCRATCH = tempfile.TemporaryDirectory(prefix="memwarden-tests-", ignore_cleanup_errors=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_settings(
    url: str,
    *,
    data_dir: Path | None = None,
    governance: dict[str, Any] | None = None,
    config_guard: dict[str, Any] | None = None,
    **hindsight: Any,
) -> Settings:
    """Settings for memwarden in front of ``url``, from no file and no environment; a fresh data
    directory unless one is given. Missions are off unless ``config_guard`` says otherwise: tests
    of other features count the requests the backend sees, and seeding a bank adds some. The
    scheduled retention job is off too (tests run it by hand, at a moment they choose)."""
    return load_settings(
        environ={},
        overrides={
            "backend": "hindsight",
            "data_dir": str(data_dir or tempfile.mkdtemp(prefix="data-", dir=_SCRATCH.name)),
            "backends": {"hindsight": {"url": url, **hindsight}},
            "governance": governance or {},
            "config_guard": config_guard if config_guard is not None else {"missions": {"mode": "off"}},
            "retention": {"enabled": False},
        },
    )


@contextlib.asynccontextmanager
async def asgi_warden(settings: Settings, backend_client: httpx.AsyncClient) -> AsyncIterator[httpx.AsyncClient]:
    """memwarden in process (lifespan run), reached through ASGITransport: no sockets."""
    app = create_app(settings, backend_client=backend_client)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://warden") as client:
            yield client


@pytest.fixture
def probe() -> UpstreamProbe:
    return UpstreamProbe()


@pytest.fixture
def upstream_url(probe: UpstreamProbe) -> Iterator[str]:
    """The stand-in upstream on a real loopback port."""
    with serve_in_thread(create_upstream(probe)) as url:
        yield url


@contextlib.contextmanager
def running_warden(settings: Settings) -> Iterator[str]:
    """memwarden on a real loopback port, configured as ``memwarden serve`` configures it."""
    with serve_in_thread(create_app(settings), date_header=False) as url:
        yield url


@pytest.fixture(params=["aiohttp", "httpx"])
def warden_url(upstream_url: str, request: pytest.FixtureRequest) -> Iterator[str]:
    """memwarden on loopback in front of the stand-in upstream, once per HTTP transport."""
    with running_warden(make_settings(upstream_url, read_timeout=5.0, transport=request.param)) as url:
        yield url


@pytest.fixture(scope="session")
def hindsight_url() -> Iterator[str]:
    """The real Hindsight 1.1.0 server, started by scripts/hindsight-up (installed on first use).

    ``HINDSIGHT_URL`` points the tests at a server someone already runs instead.
    """
    if os.environ.get("HINDSIGHT_URL"):
        yield os.environ["HINDSIGHT_URL"].rstrip("/")
        return
    result = subprocess.run(
        [str(REPO / "scripts" / "hindsight-up")], capture_output=True, text=True, timeout=900, check=False
    )
    if result.returncode != 0:
        pytest.fail(f"scripts/hindsight-up failed:\n{result.stdout}\n{result.stderr}", pytrace=False)
    yield result.stdout.strip().splitlines()[-1]
