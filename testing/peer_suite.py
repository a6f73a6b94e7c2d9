"""hindsight-client 1.1.0's own test suite, unchanged, against the real Hindsight and against memwarden.

``python -m testing.peer_suite`` (CI runs it) takes the suite from the client's source distribution
on the package registry (``pip download --no-binary :all:``: ``tests/test_main_operations.py`` and
``tests/test_attachment_download.py``, which need a running server at ``HINDSIGHT_API_URL``), installs
what it needs into a venv of its own (``.peer/``: the client with its ``test`` extra, pytest-xdist,
pytest-timeout — the suite's own pytest options ask for both), and runs it three times:

* ``hindsight`` — the real Hindsight 1.1.0 alone (``scripts/hindsight-up``: offline, its LLM and
  embeddings the project's stand-in, ``tests/fake_openai.py``);
* ``self-hosted`` — ``memwarden serve`` with its default settings, ``[llm]`` pointed at that same
  stand-in (as the real Hindsight is run here);
* ``in-front`` — ``memwarden serve --upstream`` that Hindsight, default settings.

It fails when a test that passes on Hindsight fails on memwarden in either mode, unless
``testing/peer_differences.toml`` lists it for that mode with the reason it is deliberate; a listed
difference that passes after all is reported (the list is kept true by hand). It writes the
compatibility table, every test with its result on each target and the reason for each difference,
to ``docs/compatibility.md`` (``--table`` elsewhere).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memwarden.store.server.fallback import not_built_reason
from testing import peer_examples
from testing.fuzz import store_501s
from testing.hindsight import REPO, start_hindsight, stop_hindsight
from testing.loopback import free_port, stop_process, wait_http

CLIENT = "hindsight-client==1.1.0"
# The source distribution's sha256, as first downloaded here: the test code run is the code read.
SDIST_SHA256 = "132055eefead7c3b88fb77b86d7cfe089fab8df1c26f5e70a542a2df17fe6ee0"
# Fewer passes on the real Hindsight than these means the run itself is broken (the stand-in LLM
# down, the server not ready), not that memwarden matches it: the run fails then.
AT_LEAST = {"suite": 25, "examples": 8}
# The suite's tools, pinned: the set this harness was last seen working with.
TOOLS = ("hindsight-client[test]==1.1.0", "pytest-xdist==3.8.0", "pytest-timeout==2.4.0", "pytest-asyncio==1.5.0")
SUITE = ("tests/test_main_operations.py", "tests/test_attachment_download.py")
TARGETS = ("hindsight", "self-hosted", "in-front")
MEMWARDEN = ("self-hosted", "in-front")
DIFFERENCES = REPO / "testing" / "peer_differences.toml"
TABLE = REPO / "docs" / "compatibility.md"
MAIN = "from memwarden.proxy.cli import main; main()"
_PATH = re.compile(r"/(?:[\w.-]+/)+([\w.-]+)")


@dataclass(frozen=True)
class Outcome:
    status: str  # passed, failed, skipped
    message: str = ""


# -- the suite and its venv -------------------------------------------------------------------------


def prepare(home: Path) -> tuple[Path, Path]:
    """The venv's python and the unpacked source distribution (made once; kept in ``home``)."""
    home.mkdir(parents=True, exist_ok=True)
    venv, marker = home / "venv", home / "venv" / ".installed"
    want = " ".join(TOOLS)
    if not marker.exists() or marker.read_text() != want:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, *TOOLS], check=True)
        marker.write_text(want)
    source = home / "hindsight_client-1.1.0"
    checked = source / ".sha256"  # the digest of the archive this tree was unpacked from
    if not (source / SUITE[0]).exists() or not checked.exists() or checked.read_text() != SDIST_SHA256:
        shutil.rmtree(source, ignore_errors=True)
        download = home / "sdist"
        pip = [str(venv / "bin" / "python"), "-m", "pip", "download", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, "--no-binary", ":all:", "--no-deps", "-d", str(download), CLIENT], check=True)
        (archive,) = download.glob("hindsight_client-1.1.0.tar.gz")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            archive.unlink()
            raise RuntimeError(f"{archive.name}: sha256 {digest}, expected {SDIST_SHA256}; not run")
        with tarfile.open(archive) as tar:
            tar.extractall(home, filter="data")  # no path outside home, no links out, no devices
        checked.write_text(SDIST_SHA256)
    return venv / "bin" / "python", source


# -- the servers ------------------------------------------------------------------------------------


@contextlib.contextmanager
def memwarden(target: str, hindsight_url: str, llm_url: str, work: Path) -> Iterator[str]:
    """``memwarden serve`` for ``target`` in its own process, default settings, on a free port."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    data_dir, log_path = work / f"{target}-data", work / f"{target}.log"
    port = free_port()
    args = ["serve", "--port", str(port), "--data-dir", str(data_dir)]
    if target == "in-front":
        args += ["--upstream", hindsight_url]
    else:
        config = work / "memwarden.toml"
        config.write_text(f'[llm]\nbase_url = "{llm_url}"\nmodel = "fake-llm"\n')
        args += ["--config", str(config)]
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, "-c", MAIN, *args], env=env, stdout=log, stderr=log)

        def alive() -> None:
            if proc.poll() is not None:
                raise RuntimeError(f"memwarden ({target}) exited with {proc.returncode}; see {log_path}")

        try:
            url = f"http://127.0.0.1:{port}"
            wait_http(f"{url}/warden/health", 120, alive=alive)
            yield url
        finally:
            stop_process(proc)


# -- running and reading the suite ------------------------------------------------------------------


def run_examples(url: str) -> dict[str, Outcome]:
    """Hindsight's documentation examples, as our own scenarios (``testing/peer_examples.py``)."""
    return {f"example:{name}": Outcome(status, why) for name, (status, why) in peer_examples.run(url).items()}


def run_suite(python: Path, source: Path, url: str, report: Path) -> dict[str, Outcome]:
    """The suite against ``url``, unchanged (its own pytest options: ``-n auto``, a 120 s time-out)."""
    # The downloaded test code sees the server's URL and what a process needs, not this environment.
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env.update(HINDSIGHT_API_URL=url, PYTHONDONTWRITEBYTECODE="1")
    command = [str(python), "-m", "pytest", *SUITE, "-p", "no:cacheprovider", f"--junitxml={report}", "-q"]
    ran = subprocess.run([*command, "-o", "log_cli=false"], cwd=source, env=env, capture_output=True, text=True)
    if not report.exists():
        raise RuntimeError(f"the suite did not run against {url} (exit {ran.returncode}):\n{ran.stdout}\n{ran.stderr}")
    return read_report(report)


def read_report(report: Path) -> dict[str, Outcome]:
    """``Class::test`` (or ``module::test``) → its outcome; a failure in set-up or teardown fails it."""
    out: dict[str, Outcome] = {}
    for case in ET.parse(report).iter("testcase"):  # noqa: S314 (a report this run wrote)
        name = f"{case.get('classname', '').split('.')[-1]}::{case.get('name')}"
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed"
                first = ((child.get("message") or "").strip().splitlines() or [""])[0]
                message = message or _PATH.sub(lambda m: m.group(1), first)[:160]  # no machine's paths
            elif child.tag == "skipped" and status == "passed":
                status = "skipped"
        out[name] = Outcome(status, message)
    return out


def read_differences(path: Path = DIFFERENCES) -> dict[tuple[str, str], str]:
    """(test, mode) → why memwarden fails it on purpose."""
    listed: dict[tuple[str, str], str] = {}
    for entry in tomllib.loads(path.read_text())["difference"]:
        for mode in entry["modes"]:
            if mode not in MEMWARDEN:
                raise ValueError(f"{path}: {entry['test']}: unknown mode {mode!r}")
            listed[(entry["test"], mode)] = entry["reason"]
    return listed


@dataclass
class Verdict:
    unexplained: list[str]
    stale: list[str]
    broken: list[str] = field(default_factory=list)


def judge(results: Mapping[str, Mapping[str, Outcome]], listed: Mapping[tuple[str, str], str]) -> Verdict:
    verdict = Verdict([], [])
    theirs_passed = {
        "suite": sum(o.status == "passed" for n, o in results["hindsight"].items() if not n.startswith("example:")),
        "examples": sum(o.status == "passed" for n, o in results["hindsight"].items() if n.startswith("example:")),
    }
    for part, least in AT_LEAST.items():
        if theirs_passed[part] < least:
            verdict.broken.append(f"the real Hindsight passed {theirs_passed[part]} of its {part}, fewer than {least}")
    for test, theirs in sorted(results["hindsight"].items()):
        for mode in MEMWARDEN:
            ours = results[mode].get(test, Outcome("missing"))
            if theirs.status == "passed" and ours.status != "passed" and (test, mode) not in listed:
                verdict.unexplained.append(f"{test} ({mode}): {ours.message or ours.status}")
            if (test, mode) in listed and ours.status == "passed":
                verdict.stale.append(f"{test} ({mode})")
    return verdict


MARK = {"passed": "pass", "failed": "**fail**", "skipped": "skip", "missing": "—"}


def _rows(
    results: Mapping[str, Mapping[str, Outcome]], listed: Mapping[tuple[str, str], str], names: Sequence[str]
) -> list[str]:
    """The table's rows for ``names``, then their totals."""
    lines = [
        "| test | Hindsight 1.1.0 | memwarden self-hosted | memwarden in front | why they differ |",
        "|---|---|---|---|---|",
    ]
    for test in names:
        cells = [MARK[results[t].get(test, Outcome("missing")).status] for t in TARGETS]
        why = "; ".join(sorted({listed[(test, m)] for m in MEMWARDEN if (test, m) in listed}))
        if not why and results["hindsight"].get(test, Outcome("missing")).status != "passed":
            failed = results["hindsight"].get(test, Outcome("missing")).message
            why = f"fails on Hindsight itself here: {failed}" if failed else ""
        lines.append(f"| `{test}` | {' | '.join(cells)} | {why.replace('|', '/')} |")
    totals = [sum(results[t].get(n, Outcome("missing")).status == "passed" for n in names) for t in TARGETS]
    lines.append(f"| **passed** | **{totals[0]}** | **{totals[1]}** | **{totals[2]}** | |")
    return lines


def table(results: Mapping[str, Mapping[str, Outcome]], listed: Mapping[tuple[str, str], str], when: str) -> str:
    names = sorted(set().union(*(r.keys() for r in results.values())))
    lines = [
        "# Compatibility: the peers' own tests against memwarden",
        "",
        f"Generated by `python -m testing.peer_suite` (CI runs it) on {when}. The test suite of the",
        f"official `{CLIENT}` (from its source distribution, unchanged) against the real Hindsight 1.1.0",
        "alone (offline: its LLM the project's stand-in), memwarden self-hosted (default settings, `[llm]`",
        "the same stand-in) and memwarden in front of that Hindsight (default settings). A test passing on",
        "Hindsight and failing on memwarden fails CI unless `testing/peer_differences.toml` gives its reason.",
        "",
        *_rows(results, listed, [n for n in names if not n.startswith("example:")]),
        "",
        "## Hindsight's documentation examples",
        "",
        "What `hindsight-docs/examples/api/*.py` do, as scenarios of our own (`testing/peer_examples.py`:",
        "their code is not ours to copy), through the official client against the same three servers.",
        "",
        *_rows(results, listed, [n for n in names if n.startswith("example:")]),
        "",
        "## What the self-hosted store does not serve",
        "",
        "Hindsight 1.1.0's documented operations that memwarden self-hosted (with `[llm]` configured)",
        "answers `501`, each with the reason its answer gives. In front of a Hindsight server every one",
        "of them reaches Hindsight. Read from the store's routes when this table is generated.",
        "",
        "| operation | route | why |",
        "|---|---|---|",
    ]
    for operation, method, path in store_501s(llm=True):
        lines.append(f"| `{operation}` | `{method} {path}` | {not_built_reason(path)[1]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testing.peer_suite", description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=REPO / ".peer", help="the venv and the suite [default: .peer]")
    parser.add_argument("--table", type=Path, default=TABLE, help=f"where the table goes [default: {TABLE}]")
    parser.add_argument("--llm-url", default="http://127.0.0.1:18932/v1", help="the stand-in LLM hindsight-up runs")
    args = parser.parse_args(argv)
    started = time.monotonic()
    python, source = prepare(args.home)
    listed = read_differences()
    work = Path(tempfile.mkdtemp(prefix="memwarden-peer-"))
    hindsight_url, started_it = start_hindsight()
    try:
        results = {"hindsight": run_suite(python, source, hindsight_url, work / "hindsight.xml")}
        results["hindsight"].update(run_examples(hindsight_url))
        for mode in MEMWARDEN:
            with memwarden(mode, hindsight_url, args.llm_url, work) as url:
                results[mode] = run_suite(python, source, url, work / f"{mode}.xml")
                results[mode].update(run_examples(url))
    finally:
        if started_it:
            stop_hindsight()
    verdict = judge(results, listed)
    args.table.write_text(table(results, listed, time.strftime("%Y-%m-%d", time.gmtime())))
    passed = {t: sum(o.status == "passed" for o in results[t].values()) for t in TARGETS}
    scenarios = sum(n.startswith("example:") for n in results["hindsight"])
    counted = f"{len(results['hindsight']) - scenarios} tests and {scenarios} documentation scenarios"
    print(f"{CLIENT}'s own suite and Hindsight's examples ({counted}), passed: {passed}")
    for line in verdict.stale:
        print(f"listed as a difference but passes now (update {DIFFERENCES.name}): {line}")
    for line in verdict.unexplained:
        print(f"FAILS on memwarden, passes on Hindsight, not listed: {line}")
    for line in verdict.broken:
        print(f"the run is broken: {line}")
    failed = verdict.unexplained or verdict.broken
    print(f"peer suite: {'FAILED' if failed else 'ok'} in {time.monotonic() - started:.0f} s;")
    print(f"table in {args.table}; logs in {work}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
