"""Leave one writer out: what each keep threshold of the learned layer buys on a writer it has not
seen (issue #32). Each training writer's set and each tune half the keep head trains on
(``scripts/train_learned.py``) is held out of its training in turn, and the whole pipeline — rules
and that head — judges it at each of ``THRESHOLDS``, a turn with the turn before it known. Prints,
per held-out set, facts kept / noise rejected; writes nothing (~10 min on two cores). The 5-fold
figure the shipped threshold is chosen by puts a writer's rows on both sides of a fold; this one
does not. docs/operations/benchmarks/held-out.md: "The keep threshold, one writer held out".

Usage: python scripts/keep_writers.py
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import train_learned as tl  # scripts/ is the script's own directory: on sys.path; it puts the repository there

from bench.heldout import judge_all, turns_of
from memwarden.governance.state import build_pipeline
from memwarden.policies.learned import LearnedLayer
from memwarden.settings import GovernanceSettings, LabelsSettings

THRESHOLDS = (0.20, 0.15, 0.10, 0.07, 0.05)


def held_out() -> list[dict[str, Any]]:
    """Leave one writer out: each turn set and each item set the keep head trains on is held out of
    its training in turn (the rest as weighted as ever, L2 as :func:`train_learned.keep_threshold`'s), and the
    whole pipeline — rules and that head — judges it at each of ``THRESHOLDS``, a turn with
    the turn before it known. What a threshold buys on a writer the layer has not seen, beside the
    5-fold figure the threshold is chosen by (where a writer's rows sit on both sides)."""
    keep, weights, sources, _, _, _ = tl.sourced_training_data()
    embedder = tl.E5Embedder(engine="onnx")
    texts = sorted({t for t, _ in keep})
    vectors = dict(zip(texts, embedder.passages_each(texts).astype(np.float64), strict=True))
    x = np.stack([vectors[t] for t, _ in keep]) * tl.SCALE
    y = tl.one_hot(["keep" if k else "noise" for _, k in keep], ["keep", "noise"])
    weight, source = np.asarray(weights), np.asarray(sources)
    pipeline = build_pipeline(GovernanceSettings(), LabelsSettings(), embedder)
    shipped = pipeline.learned
    assert shipped is not None
    known = dict(vectors)

    def embed(batch: Sequence[str]) -> np.ndarray:  # every text embedded once across the runs
        missing = [t for t in dict.fromkeys(batch) if t not in known]
        if missing:
            known.update(zip(missing, embedder.passages_each(missing), strict=True))
        return np.stack([known[t] for t in batch]).astype(np.float32)

    held_turns = (*tl.TURN_SETS, *tl.LIGHT_TURN_SETS, *tl.HELD_OUT_TURNS)
    out = []
    for name in (
        *held_turns,
        *tl.HELD_OUT_ITEMS,
        "labelled_items.jsonl",
        "training_items.jsonl",
        "training_work.jsonl",
    ):
        cases: list[tuple[str, str | None, bool]]  # text, the turn before, a fact
        if name in tl.HELD_OUT_TURNS:
            cases = [
                (t.text, t.before or None, t.fact) for t in turns_of(name.removesuffix(".jsonl")) if t.split == "tune"
            ]
        elif name in held_turns:
            cases = [(r["text"], r.get("prev") or None, bool(r["fact"])) for r in tl.rows(name)]
        else:
            cases = [(t, None, k) for (t, k), s in zip(keep, sources, strict=True) if s == name]
        rest = source != name
        w, b = tl.fit(x[rest], y[rest], 1e-3, weight[rest])
        row: dict[str, Any] = {"set": name, "facts": sum(c[2] for c in cases), "noise": sum(not c[2] for c in cases)}
        for threshold in THRESHOLDS:
            model = dataclasses.replace(
                shipped.model,
                keep_weights=(w[:, 0] - w[:, 1]).astype(np.float32),
                keep_bias=float(b[0] - b[1]),
                threshold=threshold,
            )
            pipeline.learned = LearnedLayer(model, embed, topics=tl.TOPICS, stages=tl.STAGES)
            judged = judge_all(pipeline, [c[0] for c in cases], [c[1] for c in cases])
            kept = [j.verdict != "reject" for j in judged]
            row[f"{threshold:.2f}"] = (
                round(sum(k for k, c in zip(kept, cases, strict=True) if c[2]) / max(1, row["facts"]), 3),
                round(sum(not k for k, c in zip(kept, cases, strict=True) if not c[2]) / max(1, row["noise"]), 3),
            )
        print(
            f"{name:28s} {row['facts']:4d} {row['noise']:4d}  "
            + "  ".join(f"{row[f'{t:.2f}'][0]:.3f}/{row[f'{t:.2f}'][1]:.3f}" for t in THRESHOLDS),
            flush=True,
        )
        out.append(row)
    return out


def main() -> int:
    print(f"{'held out':28s} facts noise  " + "  ".join(f"{'at ' + format(t, '.2f'):>11s}" for t in THRESHOLDS))
    held_out()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
