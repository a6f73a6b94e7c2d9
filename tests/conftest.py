from __future__ import annotations

import contextlib
import inspect
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import Any

import httpx
import pytest

from memwarden.proxy.app import create_app
from memwarden.settings import Settings, load_settings
from testing.hindsight import HindsightUnavailable, start_hindsight, stop_hindsight
from testing.loopback import serve_in_thread
from testing.postgres import PostgresUnavailable, drop_database, fresh_database, start_postgres, stop_postgres
from tests.servers import DATABASE_URL
from tests.services import begin_run, end_run, shared_server
from tests.upstream import UpstreamProbe, create_upstream

# Data directories of tests that do not pass their own live under one root, removed when the test
# session's interpreter exits (before, each run left ~200 directories behind in the temp dir).
_SCRATCH = tempfile.TemporaryDirectory(prefix="memwarden-tests-", ignore_cleanup_errors=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# The database engine of the test running (tests/servers.DATABASE_URL): None (SQLite in the data
# folder, the default), or the URL of a PostgreSQL database made for it — set by the ``engine``
# fixture, read by make_settings and by the processes tests/servers.py starts.


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A PostgreSQL 18 server (scripts/postgres-up), stopped at the end of the session if the session
    started it. ``MEMWARDEN_TEST_POSTGRES`` points the tests at one someone already runs instead."""
    try:
        with shared_server("postgres", start_postgres, stop_postgres) as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """The suite's test once per engine of memwarden's own state: SQLite (None), then a fresh
    PostgreSQL database (its URL). Modules opt in with ``pytestmark = pytest.mark.usefixtures("engine")``;
    make_settings and :func:`database_url` give the engine to what the test starts."""
    if request.param == "sqlite":
        yield None
        return
    url = fresh_database(request.getfixturevalue("postgres_server"))
    DATABASE_URL[0] = url
    try:
        yield url
    finally:
        DATABASE_URL[0] = None
        drop_database(url)


def database_url() -> str | None:
    """The running test's engine (see :func:`engine`): what ``Database.open(..., url=)`` takes."""
    return DATABASE_URL[0]


def ledger_db(data_dir: Path) -> Any:
    """A connection to the ledger of the memwarden whose data folder is ``data_dir``, on the running
    test's engine: to look at what it wrote (``?`` parameters, rows by index or name, on both)."""
    url = database_url()
    if url is None:
        import sqlite3

        return sqlite3.connect(data_dir / "memwarden.db")
    from memwarden.db.postgres import connect

    return connect(url)


def make_settings(
    url: str,
    *,
    data_dir: Path | None = None,
    governance: dict[str, Any] | None = None,
    config_guard: dict[str, Any] | None = None,
    labels: dict[str, Any] | None = None,
    outbox: dict[str, Any] | None = None,
    server: dict[str, Any] | None = None,
    database: dict[str, Any] | None = None,
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
            # The rules alone, as the tests of other features expect (tests/loopback/test_learned.py turns the
            # learned layer on).
            "labels": labels if labels is not None else {"learned": "off"},
            "outbox": outbox or {},
            "server": server or {},
            "database": database if database is not None else {"url": database_url()},
        },
    )


@contextlib.asynccontextmanager
async def asgi_warden(settings: Settings, backend_client: httpx.AsyncClient) -> AsyncIterator[httpx.AsyncClient]:
    """memwarden in process (lifespan run), reached through ASGITransport: no sockets."""
    app = create_app(settings, backend_client=backend_client)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
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
def mem0_server() -> Iterator[tuple[str, Any]]:
    """Mem0's REST server over Mem0's real ``Memory`` engine (``testing/mem0.py``: local qdrant,
    SQLite history, the offline OpenAI stand-in as its LLM and embedder): its URL and the rig."""
    from testing.mem0 import serve_mem0
    from tests.fake_openai import serve_fake_llm

    with serve_fake_llm() as (llm_url, llm), serve_mem0(llm_url) as (url, rig):
        rig.llm_seen = llm.seen  # what Mem0's engine asked its LLM (its extraction, infer: true)
        yield url, rig


@pytest.fixture(scope="session")
def hindsight_url() -> Iterator[str]:
    """The real Hindsight 1.1.0 server, started by scripts/hindsight-up (installed on first use) and
    stopped at the end of the session if the session started it (one already running is left
    running). ``HINDSIGHT_URL`` points the tests at a server someone already runs instead."""
    try:
        with shared_server("hindsight", start_hindsight, stop_hindsight) as url:
            yield url
    except HindsightUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless (``tests/chromium.py``; Playwright imported only when a browser
    test runs)."""
    from tests.chromium import launched_chromium

    with launched_chromium() as launched:
        yield launched


# -- slow: every test that starts a server --------------------------------------------------------
# A test is marked ``slow`` when its code, the code of the fixtures it uses, or the code of the
# suite's own functions these call names one of these: a server on a loopback port (uvicorn in a
# thread), a process (memwarden as a user runs it), the real Hindsight. ``interop`` implies slow.
# ``pytest -m "not slow"`` is then the fast loop (tests/loopback/test_markers.py checks the marking).
SERVER_STARTERS = frozenset(
    {
        "serve_in_thread",
        "running_warden",
        "running_standin",
        "spawn_memwarden",
        "subprocess",
        "start_hindsight",
        "start_postgres",
        "serve_fake_llm",
    }
)


def _names(code: CodeType) -> Iterator[str]:
    """The global and attribute names ``code`` and the functions nested in it use."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _names(const)


def starts_servers(fn: Callable[..., Any], seen: set[CodeType] | None = None) -> bool:
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    seen = set() if seen is None else seen
    if code is None or code in seen:
        return False
    seen.add(code)
    names = set(_names(code))
    if names & SERVER_STARTERS:
        return True
    scope = getattr(fn, "__globals__", {})
    return any(
        starts_servers(scope[name], seen)
        for name in names
        if inspect.isfunction(inspect.unwrap(scope.get(name)))
        and inspect.unwrap(scope[name]).__module__.startswith("tests.")  # the suite's own helpers
    )


def _engine(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("engine") if callspec is not None else None


def pytest_configure(config: pytest.Config) -> None:
    begin_run(config)  # the servers the run's workers start, stopped once at its end (tests/services.py)


def pytest_unconfigure(config: pytest.Config) -> None:
    end_run(config, {"postgres": stop_postgres, "hindsight": stop_hindsight})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # A test of what only SQLite has (its file, its mirror, the self-hosted store) runs on SQLite alone.
    sqlite_only = [i for i in items if _engine(i) == "postgresql" and i.get_closest_marker("sqlite_only")]
    if sqlite_only:
        config.hook.pytest_deselected(items=sqlite_only)
        items[:] = [i for i in items if i not in set(sqlite_only)]
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        if _engine(item) == "postgresql":
            item.add_marker(pytest.mark.slow)  # it starts a PostgreSQL server
            item.add_marker(pytest.mark.postgresql)
            continue
        definitions = item._fixtureinfo.name2fixturedefs  # the fixtures this test uses, by name
        fixtures = [defs[-1].func for name in item.fixturenames for defs in [definitions.get(name)] if defs]
        if item.get_closest_marker("interop") or any(starts_servers(fn) for fn in [item.obj, *fixtures]):
            item.add_marker(pytest.mark.slow)
