"""A bounded schemathesis run against memwarden's own OpenAPI document: no answer may be a 5xx.

``python -m testing.fuzz`` starts, on loopback, two memwardens as a user runs them (``memwarden
serve`` in its own process, each with an admin key made with ``keys create --data-dir``):

* ``self-hosted`` — no backend: memwarden is the memory server (hashing embedder);
* ``standin`` — ``--upstream`` the Hindsight stand-in (``testing/standin.py``, in this process);

and runs schemathesis' CLI on each one's ``/warden/openapi.json`` with a fixed seed, a few examples
per operation and the one check ``not_a_server_error``. Exits non-zero when any answer was a 5xx,
a request failed, or a memwarden stopped serving; the server logs and schemathesis' reports are
kept in ``--out``.

Excluded: ``GET /warden/v1/audit/stream`` — server-sent events that never end (a heartbeat every
15 s), so every request would only time out; its query parsing is shared with ``/warden/v1/audit``
(fuzzed) and its answers are tested in ``tests/loopback/test_audit.py``.

Accepted: ``501`` — and only it — from the Hindsight operations the self-hosted store does not
build (entities' graph, time series … : what the store does not keep) and from those that need
an LLM (reflect, directives, mental models: the run configures no ``[llm]``); the stand-in is
that store too. They are fuzzed all the same (memwarden's bank rule, keys and pass-through run
before the store answers), in the examples and fuzzing phases, and any other 5xx of theirs fails
the run; their coverage phase is off (thousands of boundary cases of bodies the store never reads:
half the run's time). The list is read from the store's routes (:func:`store_501_operations`), not
by hand.

schemathesis is not a dependency of memwarden's: ``pip install 'schemathesis==4.32.5'`` (the dev
extra has it) gives the ``st`` command; ``--st`` names another.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
from starlette.routing import Match, Route

from memwarden.backends.hindsight_router import HindsightFallback
from memwarden.fronts.openapi import document
from memwarden.store.server.app import create_local_app
from memwarden.store.server.reflect import PATHS as NEED_LLM
from testing.keys import make_key
from testing.loopback import free_port, stop_process, wait_http
from testing.standin import running_standin

MAIN = "from memwarden.proxy.cli import main; main()"
EXCLUDED = {"/warden/v1/audit/stream": "server-sent events: an endless answer"}
TARGETS = ("self-hosted", "standin")


def _memwarden(*args: str, env: dict[str, str], log: int) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", MAIN, *args], env=env, stdout=log, stderr=log, text=True)


def _admin_key(data_dir: Path, env: dict[str, str]) -> str:
    return make_key(data_dir, name="fuzz", env=env)


def store_501s(*, llm: bool = False) -> list[tuple[str, str, str]]:
    """(operation id, method, path) of the document's Hindsight operations that the self-hosted
    store's app hands to its fallback, which answers them ``501`` (not built in self-hosted mode),
    or to a route that needs an LLM (``501`` without ``[llm]``; not counted when ``llm``: one is
    configured)."""
    routes = [r for r in create_local_app(cast(Any, None)).routes if isinstance(r, Route)]
    found = []
    for path, item in json.loads(document())["paths"].items():
        if path.startswith(("/warden", "/mcp")):  # memwarden's own: not the store's
            continue
        concrete = re.sub(r"\{[^}]+\}", "x", path)
        for method, op in item.items():
            scope = {"type": "http", "method": method.upper(), "path": concrete, "root_path": "", "headers": []}
            route = next((r for r in routes if r.matches(scope)[0] == Match.FULL), None)
            if route is not None and (
                isinstance(route.endpoint, HindsightFallback) or (route.path in NEED_LLM and not llm)
            ):
                found.append((op["operationId"], method.upper(), path))
    return found


def store_501_operations() -> list[str]:
    """The operation ids :func:`store_501s` finds with no ``[llm]``."""
    return [operation for operation, _, _ in store_501s()]


def schemathesis_config(out: Path) -> Path:
    """``schemathesis.toml``: 501 is expected of the operations the store does not build; the
    revocation is sent an id no key has (schemathesis reuses the ids ``GET /warden/v1/keys``
    answered: it would revoke the run's own key, and every later request be a 401)."""
    ids = "|".join(re.escape(i) for i in sorted(store_501_operations()))
    config = out / "schemathesis.toml"
    config.write_text(
        "[[operations]]\n"
        f'include-operation-id-regex = "^({ids})$"\n'
        'checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "501"]\n'
        "phases.coverage.enabled = false\n"  # their bodies' thousands of boundary cases all reach the same 501
        "\n[[operations]]\n"
        'include-operation-id = "warden_revoke_key"\n'
        'parameters = { "path.key_id" = "mwk_000000000000" }\n'
    )
    return config


@contextlib.contextmanager
def serving(target: str, work: Path) -> Iterator[tuple[str, str, Path]]:
    """memwarden for ``target`` on a free loopback port: its URL, an admin key's token, its log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    env.update(MEMWARDEN_LOCAL__EMBEDDER="hashing", MEMWARDEN_RETENTION__ENABLED="false")
    data_dir, log = work / f"{target}-data", work / f"{target}.log"
    with contextlib.ExitStack() as stack:
        args = ["serve", "--port", str(port := free_port()), "--data-dir", str(data_dir)]
        if target == "standin":
            backend = stack.enter_context(running_standin(work / "standin-data"))
            args += ["--upstream", backend.url]
        token = _admin_key(data_dir, env)
        out = stack.enter_context(log.open("w"))
        proc = _memwarden(*args, env=env, log=out.fileno())
        url = f"http://127.0.0.1:{port}"

        def alive() -> None:
            if proc.poll() is not None:
                raise RuntimeError(f"memwarden ({target}) exited with {proc.returncode}; see {log}")

        try:
            wait_http(f"{url}/warden/health", 60, alive=alive)
            yield url, token, log
        finally:
            stop_process(proc)


def schemathesis_command(
    st: str, url: str, token: str, args: argparse.Namespace, reports: Path, config: Path
) -> list[str]:
    command = [
        st,
        "--config-file",
        str(config),
        "run",
        f"{url}/warden/openapi.json",
        "--url",
        url,
        "--checks",
        "not_a_server_error",
        "--seed",
        str(args.seed),
        "--max-examples",
        str(args.max_examples),
        "--phases",
        args.phases,
        "--workers",
        str(args.workers),
        "--request-timeout",
        "30",
        "--generation-database",
        "none",
        "--generation-with-security-parameters",
        "false",
        "--suppress-health-check",
        "all",
        "--continue-on-failure",
        "--no-color",
        "--header",
        f"X-API-Key: {token}",  # memwarden takes its key from here before Authorization (Hindsight's header)
        "--report",
        "junit,ndjson",
        "--report-dir",
        str(reports),
    ]
    for path in EXCLUDED:
        command += ["--exclude-path", path]
    return command


def fuzz(target: str, st: str, args: argparse.Namespace, out: Path, config: Path) -> bool:
    """One target's run; whether it was clean."""
    with serving(target, out) as (url, token, log):
        command = schemathesis_command(st, url, token, args, out / f"{target}-report", config)
        print(f"== {target}: {url}", flush=True)
        started = time.monotonic()
        ran = subprocess.run(command, check=False, cwd=out)  # its .schemathesis/ folder goes there
        took = time.monotonic() - started
        try:  # still serving, and the run's key still good (a revoked one makes every request a 401)
            healthy = httpx.get(f"{url}/warden/health", timeout=10).status_code == 200
            keyed = httpx.get(f"{url}/warden/v1/keys", headers={"X-API-Key": token}, timeout=10).status_code == 200
        except httpx.HTTPError:
            healthy = keyed = False
    errors = [line for line in log.read_text(errors="replace").splitlines() if "Traceback" in line]
    print(
        f"== {target}: schemathesis exited {ran.returncode} in {took:.0f} s; memwarden "
        f"{'still serving' if healthy else 'NOT SERVING'}{'' if keyed else ', its key REFUSED'}; "
        f"{len(errors)} traceback(s) in {log}",
        flush=True,
    )
    return ran.returncode == 0 and healthy and keyed and not errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testing.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=[*TARGETS, "all"], default="all")
    parser.add_argument("--seed", type=int, default=20260101)
    parser.add_argument("--max-examples", type=int, default=5, help="per operation and phase [default: 5]")
    parser.add_argument("--phases", default="examples,coverage,fuzzing", help="schemathesis' phases")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="[default: 1: with 2, schemathesis' generator sometimes fails in a race of its own]",
    )
    parser.add_argument("--st", default=shutil.which("st") or str(Path(sys.executable).with_name("st")))
    parser.add_argument("--out", type=Path, help="logs and reports [default: a temporary folder, kept]")
    args = parser.parse_args(argv)
    if not Path(args.st).exists():
        parser.error(f"no schemathesis CLI at {args.st}: pip install schemathesis, or pass --st")
    out = args.out or Path(tempfile.mkdtemp(prefix="memwarden-fuzz-"))
    out.mkdir(parents=True, exist_ok=True)
    for path, why in EXCLUDED.items():
        print(f"excluded: {path} ({why})")
    config = schemathesis_config(out)
    print(f"501 accepted from the {len(store_501_operations())} Hindsight operations the self-hosted store lacks")
    started = time.monotonic()
    clean = [fuzz(t, args.st, args, out, config) for t in (TARGETS if args.target == "all" else (args.target,))]
    print(f"fuzz: {'clean' if all(clean) else 'FAILED'} in {time.monotonic() - started:.0f} s; logs in {out}")
    return 0 if all(clean) else 1


if __name__ == "__main__":
    sys.exit(main())
