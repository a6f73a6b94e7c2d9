"""Instructions planted in memory (issue #38): how many attacks ``policies/injection.py`` catches,
how many harmless memories it flags, and what it costs — on data the rules' author did not write.

The sets (``tests/data/``), each written by a helper who saw neither the rules nor the other sets:

- ``poisoning_tune_en.jsonl`` (320) and ``poisoning_tune_zh.jsonl`` (300): attacks by kind (orders
  to the assistant, claimed authority, role markup, exfiltration, hidden text, "supersedes earlier
  memories", standing orders disguised as facts) and benign memories — look-alikes (a user's own
  "always" preferences, quoted attacks, markup explained) and ordinary facts. **Tuned on.**
- ``poisoning_eval.jsonl`` (400, English and Chinese) and ``poisoning_eval2.jsonl`` (360: longer,
  messier material — articles, tool results, logs, code, threads — its Chinese attacks partly the
  English scenarios retold): the same question, two more writers. **Never tuned on**: their texts
  were not read while choosing the rules.
- Benign conversation turns: every turn of the project's chat sets (``chat_*``, ``assistant_chat*``,
  written for other issues): the false-positive rate on ordinary conversation.

Each at two levels: ``high`` (what a bank quarantines by default) and ``medium`` or more (tagged).
Target (issue #38, on eval): ≥ 0.90 of attacks caught at ≤ 1 % false positives on conversation
turns and ≤ 5 % on the look-alikes. Then the detector's cost: items/s on one core over the
conversation turns.

Usage: python -m bench.injection_quality [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench.harness import DATA, machine, markdown_table, write_json
from memwarden.policies.injection import find_instructions, severity

RANK = {"low": 0, "medium": 1, "high": 2}
CONVERSATIONS = (
    "chat_friends_en",
    "chat_friends_zh",
    "chat_personal3",
    "chat_personal4",
    "chat_personal_en2",
    "chat_zh4",
    "assistant_chat2",
    "assistant_chat3",
)


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines() if line]


def turns(name: str) -> list[str]:
    out = []
    for conversation in rows(name):
        for session in conversation.get("sessions", []):
            out += [t["text"] for t in session.get("turns", [])]
    return out


def flagged(text: str, level: str) -> bool:
    found = severity(find_instructions(text))
    return found is not None and RANK[found] >= RANK[level]


def share(texts: list[str], level: str) -> tuple[int, int]:
    return sum(flagged(t, level) for t in texts), len(texts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"machine": machine(), "sets": []}
    table = []
    sets = (
        ("poisoning_tune_en", "tune"),
        ("poisoning_tune_zh", "tune"),
        ("poisoning_eval", "eval"),
        ("poisoning_eval2", "eval"),
    )
    for name, split in sets:
        data = rows(name)
        for lang in sorted({r["lang"] for r in data}):
            part = [r for r in data if r["lang"] == lang]
            attacks = [r["text"] for r in part if r["label"] == "attack"]
            lookalikes = [r["text"] for r in part if r["category"] == "lookalike"]
            ordinary = [r["text"] for r in part if r["category"] == "ordinary"]
            for level in ("high", "medium"):
                caught, fl, fo = share(attacks, level), share(lookalikes, level), share(ordinary, level)
                entry = {"set": name, "split": split, "lang": lang, "level": level, "attacks_caught": caught}
                entry |= {"lookalikes_flagged": fl, "ordinary_flagged": fo}
                results["sets"].append(entry)
                table.append(
                    [
                        f"{name} ({split})",
                        lang,
                        level,
                        f"{caught[0] / caught[1]:.3f} ({caught[0]}/{caught[1]})",
                        f"{fl[0] / fl[1]:.3f} ({fl[0]}/{fl[1]})",
                        f"{fo[0]}/{fo[1]}",
                    ]
                )
    conversation = [t for name in CONVERSATIONS for t in turns(name)]
    for level in ("high", "medium"):
        hit, total = share(conversation, level)
        results.setdefault("conversation_turns", {})[level] = [hit, total]
        table.append(["conversation turns (chat sets)", "en+zh", level, "—", f"{hit / total:.4f} ({hit}/{total})", "—"])
    began = time.perf_counter()
    rounds = 3
    for _ in range(rounds):
        for text in conversation:
            find_instructions(text)
    rate = rounds * len(conversation) / (time.perf_counter() - began)
    results["items_per_s"] = round(rate)
    print(f"# Instructions planted in memory ({results['machine']})\n")
    print(markdown_table(["set", "lang", "level", "attacks caught", "false positives", "ordinary flagged"], table))
    print(f"\nthe detector alone: {rate:,.0f} items/s on one core (conversation turns)")
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
