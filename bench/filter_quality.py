"""Filter quality: memwarden's policies vs the hermes-vecmem baseline, on labelled data.

Three item sets, each scored apart (keep/reject precision and recall, topic and stage accuracy,
overall and per language, memwarden beside the baseline):

* ``project`` — ``tests/data/candidates.jsonl`` (plus ``../shared/examples/candidates.jsonl`` when
  it is there): written beside the rules, so it flatters them;
* ``items/tune`` and ``items/eval`` — ``tests/data/labelled_items.jsonl``, 720 items written apart
  from the rules (half Chinese, half English; work and personal life; seven writing styles), split
  once by the SHA-256 of the text. The rules may be tuned on ``tune``; ``eval`` is only measured.

And the transcript set, ``tests/data/transcripts.jsonl`` (72 multi-speaker conversations, six
renderings, each turn labelled fact / noise / mixed, each fact with its evidence), per split:
conversations wrongly rejected, facts kept under ``whole`` and under ``trim`` (the evidence still
inside kept segments), noise turns removed under ``trim``.

Each memwarden row twice: the rules alone, and the rules with the learned layer (the e5 embedder;
``--rules-only`` skips it).

Usage: python -m bench.filter_quality [--errors] [--rules-only] [--json FILE]
       (--errors lists memwarden's mistakes on the project set and the tune split only)
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import vecmem_baseline
from bench.harness import DATA, REPO, markdown_table, write_json
from memwarden.governance.state import build_pipeline
from memwarden.policies.pipeline import Pipeline
from memwarden.policies.segments import split as segments_of
from memwarden.settings import GovernanceSettings, LabelsSettings

SOURCES = [DATA / "candidates.jsonl", REPO.parent / "shared" / "examples" / "candidates.jsonl"]
ITEMS = DATA / "labelled_items.jsonl"
TRANSCRIPTS = DATA / "transcripts.jsonl"
CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass
class Case:
    text: str
    keep: bool
    topic: str | None
    stage: str | None
    lang: str


def load_items(split: str) -> list[Case]:
    cases = []
    for line in ITEMS.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["split"] == split:
            cases.append(Case(d["text"], bool(d["keep"]), d.get("topic"), d.get("stage"), d["lang"]))
    return cases


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
        "accuracy": ratio(tp + tn, len(cases)),
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


def judge_set(
    pipelines: dict[str, Pipeline], name: str, cases: list[Case]
) -> tuple[list[dict[str, object]], dict[str, list[Any]]]:
    """Every system's scores on ``cases`` (memwarden's pipelines and the baseline), by language;
    and each pipeline's judgements."""
    judged = {system: [p.judge(i, c.text) for i, c in enumerate(cases)] for system, p in pipelines.items()}
    systems = {
        system: ([j.verdict in ("store", "redact") for j in js], [j.topic for j in js], [j.stage for j in js])
        for system, js in judged.items()
    }
    systems["hermes-vecmem"] = (
        [vecmem_baseline.should_store(c.text) for c in cases],
        [vecmem_baseline.topic(c.text) for c in cases],
        [None for _ in cases],
    )
    rows = []
    for lang in ("all", "zh", "en"):
        idx = [i for i, c in enumerate(cases) if lang == "all" or c.lang == lang]
        sub = [cases[i] for i in idx]
        for system, (keep, topics, stages) in systems.items():
            s = score(sub, [keep[i] for i in idx], [topics[i] for i in idx], [stages[i] for i in idx])
            rows.append({"set": name, "system": system, "lang": lang, **s})
    return rows, judged


def _spans(text: str, turns: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """Where each turn's text is in the transcript (in order)."""
    spans, pos = [], 0
    for turn in turns:
        start = text.index(turn["text"], pos)
        spans.append((start, start + len(turn["text"])))
        pos = start + len(turn["text"])
    return spans


def transcripts(system: str, pipeline: Pipeline, split: str) -> dict[str, object]:
    """Conversations wrongly rejected, facts kept (whole, trim), noise turns removed (trim)."""
    rows = [json.loads(line) for line in TRANSCRIPTS.read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == split]
    rejected = baseline_rejected = facts = kept_whole = kept_trim = noise = removed = 0
    for r in rows:
        text = r["text"]
        judged = pipeline.judge(0, text, forward="trim")
        stored_whole = pipeline.judge(0, text, forward="whole").verdict != "reject"
        baseline_rejected += not vecmem_baseline.should_store(text)
        shift = len(text) - len(text.lstrip())  # segments are offsets into the stripped text
        # What stays under trim: every segment of a turn (or paragraph) with a kept segment.
        units = {s.unit for s, v in zip(segments_of(text.strip()), judged.segments, strict=False) if v.keep}
        kept = [(s.start + shift, s.end + shift) for s in segments_of(text.strip()) if s.unit in units] or (
            [(0, len(text))] if judged.verdict != "reject" and not judged.segments else []
        )

        def inside(a: int, b: int, kept: list[tuple[int, int]] = kept, text: str = text) -> bool:
            return all(any(x <= p < y for x, y in kept) for p in range(a, b) if not text[p].isspace())

        spans = _spans(text, r["turns"])
        stored = judged.verdict != "reject"
        rejected += not stored_whole
        for fact in r["facts"]:
            start = text.index(fact["evidence"], spans[fact["turn"]][0])
            facts += 1
            kept_whole += stored_whole
            kept_trim += stored and inside(start, start + len(fact["evidence"]))
        for turn, (a, b) in zip(r["turns"], spans, strict=True):
            if turn["label"] == "noise":
                noise += 1
                removed += not any(x < b and a < y for x, y in kept)
    return {
        "set": f"transcripts/{split}",
        "system": system,
        "conversations": len(rows),
        "rejected": rejected,
        "rejected_by_hermes_vecmem": baseline_rejected,
        "facts": facts,
        "facts_kept_whole": ratio(kept_whole, facts),
        "facts_kept_trim": ratio(kept_trim, facts),
        "noise_turns": noise,
        "noise_removed_trim": ratio(removed, noise),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--errors", action="store_true", help="list memwarden's mistakes (project set, tune split)")
    parser.add_argument("--json", type=Path, help="also write the scores as JSON")
    parser.add_argument("--rules-only", action="store_true", help="skip the learned layer (no e5 needed)")
    args = parser.parse_args()
    pipelines = {"memwarden (rules)": build_pipeline(GovernanceSettings(), LabelsSettings(learned="off"))}
    if not args.rules_only:
        from memwarden.store.embedder import E5Embedder

        pipelines["memwarden (rules + learned)"] = build_pipeline(GovernanceSettings(), LabelsSettings(), E5Embedder())
    sets = {"project": load(), "items/tune": load_items("tune"), "items/eval": load_items("eval")}
    rows: list[dict[str, object]] = []
    judged_by_set = {}
    for name, cases in sets.items():
        set_rows, judged_by_set[name] = judge_set(pipelines, name, cases)
        rows.extend(set_rows)

    cols = ["keep_precision", "keep_recall", "reject_precision", "reject_recall", "topic_accuracy", "stage_accuracy"]
    for name, cases in sets.items():
        print(
            f"{name}: {len(cases)} items ({sum(c.keep for c in cases)} keep, {sum(not c.keep for c in cases)} reject;"
            f" {sum(c.lang == 'zh' for c in cases)} zh, {sum(c.lang == 'en' for c in cases)} en)"
        )
    header = ["set", "system", "lang", "n", "accuracy", *(c.replace("_", " ") for c in cols)]
    cells = [[r["set"], r["system"], r["lang"], r["n"], fmt(r["accuracy"]), *(fmt(r[c]) for c in cols)] for r in rows]
    print("\n" + markdown_table(header, cells))

    talks = [transcripts(system, p, split) for split in ("tune", "eval") for system, p in pipelines.items()]
    tcols = ["conversations", "rejected", "rejected_by_hermes_vecmem", "facts", "facts_kept_whole"]
    tcols += ["facts_kept_trim", "noise_turns", "noise_removed_trim"]
    print(
        "\n"
        + markdown_table(
            ["set", "system", *(c.replace("_", " ") for c in tcols)],
            [[t["set"], t["system"], *(fmt(t[c]) for c in tcols)] for t in talks],
        )
    )
    pipeline_errors = list(pipelines)[-1]
    if args.errors:
        for name in ("project", "items/tune"):
            print(f"\nmemwarden's mistakes on {name}:")
            for c, j in zip(sets[name], judged_by_set[name][pipeline_errors], strict=True):
                kept = j.verdict in ("store", "redact")
                if kept != c.keep:
                    print(f"  keep={c.keep!s:5} got {j.verdict:6} {j.rule:24} | {c.text[:70]}")
                elif c.keep and c.topic and j.topic != c.topic:
                    print(f"  topic {c.topic:10} got {j.topic:10}                 | {c.text[:70]}")
                elif c.keep and c.stage and j.stage != c.stage:
                    print(f"  stage {c.stage:10} got {j.stage:10}                 | {c.text[:70]}")
    write_json(args.json, {"items": rows, "transcripts": talks})
    project = {r["system"]: r for r in rows if r["set"] == "project" and r["lang"] == "all"}
    ours_all, base_all = project["memwarden (rules)"], project["hermes-vecmem"]
    beaten = all(
        (ours_all[c] or 0) > (base_all[c] or 0)  # type: ignore[operator]
        for c in ("keep_precision", "keep_recall", "reject_precision", "reject_recall")
    )
    print(
        f"\nmemwarden beats the baseline on the project set, precision and recall of both classes: "
        f"{'yes' if beaten else 'NO'}"
    )
    return 0 if beaten else 1


if __name__ == "__main__":
    raise SystemExit(main())
