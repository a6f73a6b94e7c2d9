"""Filter quality: memwarden's policies vs the hermes-vecmem baseline, on labelled candidates.

Data: ``tests/data/candidates.jsonl`` (Chinese and English memory candidates from the kinds of
conversations an assistant has, labelled keep/reject, and topic/stage for the keepers) plus
``../shared/examples/candidates.jsonl`` when it is there. Prints keep/reject precision and recall,
topic and stage accuracy, overall and per language, side by side.

Usage: python -m bench.filter_quality [--errors] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from bench import vecmem_baseline
from bench.harness import DATA, REPO, markdown_table, write_json
from memwarden.policies.pipeline import Pipeline

SOURCES = [DATA / "candidates.jsonl", REPO.parent / "shared" / "examples" / "candidates.jsonl"]
CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass
class Case:
    text: str
    keep: bool
    topic: str | None
    stage: str | None
    lang: str


def load() -> list[Case]:
    cases = []
    for path in SOURCES:
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                lang = "zh" if CJK.search(d["text"]) else "en"
                cases.append(Case(d["text"], bool(d["keep"]), d.get("topic"), d.get("stage"), lang))
    return cases


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score(cases: list[Case], keep: list[bool], topics: list[str | None], stages: list[str | None]) -> dict[str, object]:
    tp = sum(1 for c, k in zip(cases, keep, strict=True) if c.keep and k)
    fp = sum(1 for c, k in zip(cases, keep, strict=True) if not c.keep and k)
    fn = sum(1 for c, k in zip(cases, keep, strict=True) if c.keep and not k)
    tn = sum(1 for c, k in zip(cases, keep, strict=True) if not c.keep and not k)
    labelled_t = [(c, t) for c, t in zip(cases, topics, strict=True) if c.keep and c.topic]
    labelled_s = [(c, s) for c, s in zip(cases, stages, strict=True) if c.keep and c.stage]
    return {
        "n": len(cases),
        "keep_precision": ratio(tp, tp + fp),
        "keep_recall": ratio(tp, tp + fn),
        "reject_precision": ratio(tn, tn + fn),
        "reject_recall": ratio(tn, tn + fp),
        "topic_accuracy": ratio(sum(c.topic == t for c, t in labelled_t), len(labelled_t)),
        "stage_accuracy": ratio(sum(c.stage == s for c, s in labelled_s), len(labelled_s))
        if any(s is not None for _, s in labelled_s)
        else None,
    }


def fmt(v: object) -> str:
    return "—" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--errors", action="store_true", help="list memwarden's mistakes")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON")
    args = parser.parse_args()
    cases = load()
    pipeline = Pipeline()
    judged = [pipeline.judge(i, c.text) for i, c in enumerate(cases)]
    ours = ([j.verdict in ("store", "redact") for j in judged], [j.topic for j in judged], [j.stage for j in judged])
    base = (
        [vecmem_baseline.should_store(c.text) for c in cases],
        [vecmem_baseline.topic(c.text) for c in cases],
        [None for _ in cases],
    )

    rows = []
    for lang in ("all", "zh", "en"):
        idx = [i for i, c in enumerate(cases) if lang == "all" or c.lang == lang]
        sub = [cases[i] for i in idx]
        for name, (keep, topics, stages) in (("memwarden", ours), ("hermes-vecmem", base)):
            s = score(sub, [keep[i] for i in idx], [topics[i] for i in idx], [stages[i] for i in idx])
            rows.append({"system": name, "lang": lang, **s})

    cols = ["keep_precision", "keep_recall", "reject_precision", "reject_recall", "topic_accuracy", "stage_accuracy"]
    print(
        f"{len(cases)} candidates ({sum(c.keep for c in cases)} keep, {sum(not c.keep for c in cases)} reject; "
        f"{sum(c.lang == 'zh' for c in cases)} zh, {sum(c.lang == 'en' for c in cases)} en)\n"
    )
    header = ["system", "lang", "n", *(c.replace("_", " ") for c in cols)]
    print(markdown_table(header, [[r["system"], r["lang"], r["n"], *(fmt(r[c]) for c in cols)] for r in rows]))
    if args.errors:
        print("\nmemwarden's mistakes:")
        for c, j in zip(cases, judged, strict=True):
            kept = j.verdict in ("store", "redact")
            if kept != c.keep:
                print(f"  keep={c.keep!s:5} got {j.verdict:6} {j.rule:24} | {c.text[:70]}")
            elif c.keep and c.topic and j.topic != c.topic:
                print(f"  topic {c.topic:10} got {j.topic:10}                 | {c.text[:70]}")
            elif c.keep and c.stage and j.stage != c.stage:
                print(f"  stage {c.stage:10} got {j.stage:10}                 | {c.text[:70]}")
    write_json(args.json, rows)
    ours_all, base_all = rows[0], rows[1]
    beaten = all(
        (ours_all[c] or 0) > (base_all[c] or 0)
        for c in ("keep_precision", "keep_recall", "reject_precision", "reject_recall")
    )
    print(f"\nmemwarden beats the baseline on precision and recall of both classes: {'yes' if beaten else 'NO'}")
    return 0 if beaten else 1


if __name__ == "__main__":
    raise SystemExit(main())
