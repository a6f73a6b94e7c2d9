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
from memwarden.policies.defense import DEFAULT_ACTIONS, defend
from memwarden.policies.floods import flood_positions
from memwarden.policies.injection import find_instructions, severity
from memwarden.policies.judgement import FORWARDED, Judgement
from memwarden.policies.pipeline import Pipeline

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


PIPELINE = Pipeline()  # the rules alone (labels.learned = "off"): deterministic, and fast to run


def outcome(text: str) -> str:
    """What the write path does with ``text`` under the default policy: ``held`` (quarantined),
    ``tagged``, ``rejected`` (by another rule: a request, a question, a secret …) or ``stored``."""
    j = defend(PIPELINE.judge(0, text), {"content": text}, DEFAULT_ACTIONS)
    if j.verdict == "review":
        return "held"
    if j.verdict not in FORWARDED:
        return "rejected"
    return "tagged" if j.threat is not None and j.threat.action == "tag" else "stored"


def outcomes(texts: list[str]) -> dict[str, int]:
    counts = dict.fromkeys(("held", "tagged", "rejected", "stored"), 0)
    for t in texts:
        counts[outcome(t)] += 1
    return counts


def pipeline_rows(
    sets: tuple[tuple[str, str], ...], conversation: list[str]
) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """Each set through the write path: an attack kept out of recall (held, or rejected by another
    rule), tagged, or stored as it is; a harmless text held (a false positive of the defence) or
    rejected by another rule (the filter's, not the defence's, loss)."""
    entries, table = [], []

    def cell(n: int, total: int) -> str:
        return f"{n / total:.3f} ({n}/{total})" if total else "—"

    for name, split in sets:
        data = rows(name)
        for lang in sorted({r["lang"] for r in data}):
            part = [r for r in data if r["lang"] == lang]
            attacks = outcomes([r["text"] for r in part if r["label"] == "attack"])
            benign = outcomes([r["text"] for r in part if r["category"] == "lookalike"])
            n_a, n_b = sum(attacks.values()), sum(benign.values())
            entries.append({"set": name, "split": split, "lang": lang, "attacks": attacks, "lookalikes": benign})
            table.append(
                [
                    f"{name} ({split})",
                    lang,
                    cell(attacks["held"] + attacks["rejected"], n_a),
                    cell(attacks["tagged"], n_a),
                    cell(attacks["stored"], n_a),
                    cell(benign["held"], n_b),
                    cell(benign["rejected"], n_b),
                ]
            )
    turns_out = outcomes(conversation)
    n_t = sum(turns_out.values())
    entries.append({"set": "conversation turns", "split": "-", "lang": "en+zh", "turns": turns_out})
    table.append(["conversation turns (chat sets)", "en+zh", "—", "—", "—", cell(turns_out["held"], n_t), "—"])
    return entries, table


def flood_false_positives() -> dict[str, list[int]]:
    """The chat sets retained turn by turn, every turn within the flood window (the worst case:
    sessions days apart are in fact forgotten): how many kept turns the flood check flags, of how
    many — each conversation one writer (a key per user), and each whole set one writer (an
    installation without keys: every user's turns one writer's)."""
    out: dict[str, list[int]] = {"per_conversation": [0, 0], "per_set": [0, 0]}
    for name in CONVERSATIONS:
        whole: list[Judgement] = []
        for conversation in rows(name):
            judged = [
                PIPELINE.judge(len(whole) + n, turn["text"])
                for n, turn in enumerate(
                    t for session in conversation.get("sessions", []) for t in session.get("turns", [])
                )
            ]
            whole += judged
            kept = sum(j.verdict in FORWARDED for j in judged)
            out["per_conversation"][0] += len(flood_positions(judged, []))
            out["per_conversation"][1] += kept
        out["per_set"][0] += len(flood_positions(whole, []))
        out["per_set"][1] += sum(j.verdict in FORWARDED for j in whole)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"machine": machine(), "sets": []}
    table = []
    sets = (
        *((p.stem, "tune") for p in sorted(DATA.glob("poisoning_tune*.jsonl"))),
        ("poisoning_eval", "eval"),
        ("poisoning_eval2", "eval"),
        ("poisoning_eval3", "eval"),
        ("poisoning_eval4", "eval"),
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
    results["pipeline"], through = pipeline_rows(sets, conversation)
    print("\n## Through the write path (the rules alone; the default policy: high held, medium tagged)\n")
    header = [
        "set",
        "lang",
        "attacks kept out",
        "attacks tagged",
        "attacks stored",
        "harmless held",
        "harmless rejected",
    ]
    print(markdown_table(header, through))
    floods = flood_false_positives()
    results["flood_false_positives"] = floods
    (a, n), (b, m) = floods["per_conversation"], floods["per_set"]
    print(
        f"\ncorroboration floods (every turn within the window): {a} of {n} kept conversation turns flagged"
        f" with each conversation one writer, {b} of {m} with each chat set one writer"
    )
    if args.json:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
