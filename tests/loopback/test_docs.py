"""The documentation site: it builds in strict mode (every nav entry there, no broken link or
anchor), its generated reference pages (docs/hooks.py) hold the real settings, commands and
routes, and no page speaks of issue numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
# Written by another tool (python -m testing.peer_suite), not by hand.
GENERATED_ON_DISK = {DOCS / "compatibility.md"}
ISSUE_NUMBER = re.compile(r"issue #|\(#\d+\)", re.IGNORECASE)


def page(site: Path, name: str) -> str:
    return (site / "reference" / name / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_site_builds_strictly_and_its_reference_is_generated_from_the_code(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    configuration = page(site, "configuration")
    for key in ("max_request_chars", "write_wait", "destructive", "checkpoint_interval", "hard_delete"):
        assert key in configuration, key
    assert "MEMWARDEN_CONFIG_GUARD__WRITE_WAIT" in configuration
    assert "MEMWARDEN_GOVERNANCE__MAX_REQUEST_CHARS" in configuration

    cli = page(site, "cli")
    for command in ("memwarden serve", "memwarden restore", "memwarden keys create", "memwarden audit verify"):
        assert command in cli, command

    api = page(site, "http-api")
    for path in ("/warden/v1/audit", "/v1/default/banks/{bank_id}/memories/recall", "/mem0/v3/memories/add/"):
        assert path in api, path
    assert (site / "reference" / "openapi.json").read_bytes().startswith(b"{")
    assert (site / "compatibility" / "index.html").is_file()


def test_no_page_speaks_of_issue_numbers() -> None:
    pages = [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in pages
        if path not in GENERATED_ON_DISK
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]
    assert not found, "\n".join(found)
