"""An API key made in a data directory before memwarden starts on it, as a user makes one
(``memwarden keys create --data-dir``): for the benchmarks and the fuzz run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

MAIN = "from memwarden.proxy.cli import main; main()"


def make_key(
    data_dir: Path,
    *,
    name: str,
    scopes: Sequence[str] = ("--admin", "*"),
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> str:
    """The new key's token; ``scopes``: the command's options."""
    made = subprocess.run(
        [sys.executable, "-c", MAIN, "keys", "create", "--data-dir", str(data_dir), "--name", name, "--json", *scopes],
        env=dict(env) if env is not None else None,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    token: str = json.loads(made.stdout)["token"]
    return token
