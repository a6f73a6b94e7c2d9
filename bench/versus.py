"""One benchmark, this checkout against an earlier commit, side by side in the same run.

Usage: python bench/versus.py BASE_REV [--rounds 2] -- SCRIPT [SCRIPT ARGS ...]

    python bench/versus.py abf2372 -- policy_throughput.py --quick
    python bench/versus.py HEAD~1 --rounds 3 -- proxy_overhead.py --quick --no-hindsight

BASE_REV is checked out into a temporary git worktree; head is this working tree as it is (with
uncommitted changes, labelled so: commit before measuring, and leave it alone meanwhile). The
benchmark script (a file under ``bench/`` that takes ``--json FILE``) runs in each tree in turn,
base and head alternating and swapping order every round so that neither always runs on a warmer
machine, each from its own tree (its own code, its own bench script; with ``--head-bench``, this
checkout's bench/ in both, for a benchmark or an option BASE does not have). Every number the script writes to its JSON is
compared: the median over rounds for each side, and the change. Rows of a list are named by their
string fields (``upstream``, ``path`` …) so the same row is compared with the same row.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def flatten(value: Any, prefix: str = "") -> dict[str, float]:
    """Every number in ``value`` by a readable path; a list's dict rows named by their strings."""
    out: dict[str, float] = {}
    if isinstance(value, bool):
        return out
    if isinstance(value, int | float):
        out[prefix] = float(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            name = str(index)
            if isinstance(item, dict):
                labels = [f"{v}" for k, v in item.items() if isinstance(v, str) and k != "machine"]
                labels += [f"{k}={v}" for k, v in item.items() if k in ("connections", "size", "memories")]
                name = " / ".join(labels) or name
            out.update(flatten(item, f"{prefix}[{name}]"))
    return out


def run_once(tree: Path, script: str, args: list[str], out: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, str(tree / "bench" / script), *args, "--json", str(out)]
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    return flatten(json.loads(out.read_text()))


def compare(base: list[dict[str, float]], head: list[dict[str, float]]) -> list[tuple[str, float, float, str]]:
    rows = []
    for key in head[0]:
        if not all(key in r for r in base + head):
            continue
        b = statistics.median(r[key] for r in base)
        h = statistics.median(r[key] for r in head)
        change = f"{(h - b) / b * 100:+.1f} %" if b else ""
        rows.append((key, b, h, change))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", help="the earlier commit (any git revision)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each side, alternating")
    parser.add_argument("--json", type=Path, help="also write the comparison here")
    parser.add_argument(
        "--head-bench",
        action="store_true",
        help="run this checkout's bench/ in both trees (a benchmark or option newer than BASE; only the code differs)",
    )
    parser.epilog = "-- SCRIPT [ARGS]: a script in bench/ and its arguments, after a lone --"
    # Split at the first "--" by hand: a REMAINDER positional after BASE would also swallow
    # this script's own options written after BASE (``BASE --rounds 3 -- ...``).
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    bench = argv[cut + 1 :]
    if not bench:
        parser.error("name the benchmark script after --")
    script, args = bench[0], bench[1:]
    base_rev = subprocess.run(
        ["git", "rev-parse", "--short", opts.base], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    head_rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO, capture_output=True, text=True
    )
    if dirty.stdout.strip():  # head is the working tree, not the commit: say so in the table
        head_rev += "+changes"
        print("versus: the working tree has uncommitted changes; they are measured as head", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix="memwarden-versus-"))
    base_tree = tmp / "base"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base_tree), base_rev], cwd=REPO, check=True)
    if opts.head_bench:
        shutil.rmtree(base_tree / "bench")
        shutil.copytree(REPO / "bench", base_tree / "bench", ignore=shutil.ignore_patterns("results", "__pycache__"))
    results: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
    try:
        for round_ in range(opts.rounds):
            order = [("base", base_tree), ("head", REPO)]
            for side, tree in order if round_ % 2 == 0 else order[::-1]:
                print(f"round {round_ + 1}: {side} ({base_rev if side == 'base' else head_rev})", file=sys.stderr)
                results[side].append(run_once(tree, script, args, tmp / f"{side}-{round_}.json"))
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=REPO, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    rows = compare(results["base"], results["head"])
    print(f"\n{script} {' '.join(args)}: median of {opts.rounds} rounds each, interleaved\n")
    print(f"| measure | {base_rev} (base) | {head_rev} (head) | change |")
    print("|---|---|---|---|")
    for key, b, h, change in rows:
        print(f"| {key} | {b:,.2f} | {h:,.2f} | {change} |")
    if opts.json:
        payload = {"base": base_rev, "head": head_rev, "script": script, "args": args, "rows": rows}
        opts.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
