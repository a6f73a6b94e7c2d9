"""Secret detection on a held-out set: precision and recall of ``policies/secrets.py`` on
``tests/data/secrets_heldout.jsonl`` (320 texts, 160 with a secret, written apart from the rules,
never tuned on: English, Chinese and mixed, chat, logs, configs, shell, split and encoded keys,
spoken passwords, and hard negatives), per language and overall; the time per text.

Usage: python -m bench.secret_quality [--json FILE] [--misses] [--data FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench.harness import machine, markdown_table, write_json
from memwarden.policies.secrets import find_secrets

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "secrets_heldout.jsonl"


def score(rows: list[dict[str, object]]) -> dict[str, float]:
    tp = sum(1 for r in rows if r["secret"] and r["found"])
    fp = sum(1 for r in rows if not r["secret"] and r["found"])
    fn = sum(1 for r in rows if r["secret"] and not r["found"])
    tn = len(rows) - tp - fp - fn
    return {
        "texts": len(rows),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "accuracy": (tp + tn) / len(rows) if rows else 1.0,
        "false_positives": fp,
        "misses": fn,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON here")
    parser.add_argument("--misses", action="store_true", help="print the texts judged wrongly")
    parser.add_argument("--data", type=Path, default=DATA, help="the labelled texts (JSON lines)")
    args = parser.parse_args()
    rows: list[dict[str, object]] = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    started = time.perf_counter()
    for row in rows:
        row["found"] = bool(find_secrets(str(row["text"])))
    per_text_us = (time.perf_counter() - started) / len(rows) * 1e6
    groups = {"all": rows, **{lang: [r for r in rows if r["lang"] == lang] for lang in ("en", "zh", "mixed")}}
    scores = {name: score(group) for name, group in groups.items()}
    cells = [
        [
            name,
            s["texts"],
            f"{s['precision']:.3f}",
            f"{s['recall']:.3f}",
            f"{s['accuracy']:.3f}",
            s["false_positives"],
            s["misses"],
        ]
        for name, s in scores.items()
    ]
    print(f"\nMachine: {machine()}; {per_text_us:.1f} µs per text.\n")
    print(markdown_table(["texts", "n", "precision", "recall", "accuracy", "false positives", "misses"], cells))
    if args.misses:
        for row in rows:
            if bool(row["secret"]) != bool(row["found"]):
                print(
                    f"{'MISS' if row['secret'] else 'FP  '} [{row['style']}] {str(row['text'])[:140]!r}",
                    file=sys.stderr,
                )
    write_json(args.json, {"machine": machine(), "per_text_us": per_text_us, "scores": scores})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
