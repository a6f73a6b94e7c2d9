"""Leave one writer out: what each keep threshold of the learned layer buys on a writer it has not
seen (issue #32). Each training writer's set and each tune half the keep head trains on
(``scripts/train_learned.py``) is held out of its training in turn, and the whole pipeline — rules
and that head — judges it at each of ``THRESHOLDS``, a turn with the turn before it known. Prints,
per held-out set, facts kept / noise rejected; writes nothing (~10 min on two cores). The 5-fold
figure the shipped threshold is chosen by puts a writer's rows on both sides of a fold; this one
does not. docs/operations/benchmarks/held-out.md: "The keep threshold, one writer held out".

``--unseen``: per-turn sets (``text``, ``fact``, ``prev``) the head is never trained on, judged the
same way (the whole training data fitted). ``--with``: a candidate — the head also trained on these
turn sets at ``--weight`` a row — printed beside the shipped data, writer by writer (a set named in
both is held out of the candidate's training in turn like the others).

Usage: python scripts/keep_writers.py [--unseen chat_turns7.jsonl,chat_turns8.jsonl]
                                      [--with chat_turns7.jsonl,chat_turns8.jsonl --weight 0.25]
"""

from __future__ import annotations

import argparse
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
L2 = 1e-3  # as train_learned.keep_threshold's


def training(extra: Sequence[str], weight: float) -> tuple[list[tuple[str, bool]], list[float], list[str]]:
    """The keep head's (text, keep) pairs, weights and sources: train_learned's data with ``extra``
    (as ``--with`` trains it: a light set named there once, at full weight), each of ``extra``'s rows
    then weighed ``weight``."""
    keep, weights, sources, _, _, _ = tl.sourced_training_data(tuple(extra))
    chosen = set(extra)
    return keep, [w * weight if s in chosen else w for w, s in zip(weights, sources, strict=True)], sources


def held_out(unseen: Sequence[str] = (), extra: Sequence[str] = (), weight: float = 1.0) -> list[dict[str, Any]]:
    """Leave one writer out: each turn set and each item set the keep head trains on is held out of
    its training in turn (the rest as weighted as ever, L2 as :func:`train_learned.keep_threshold`'s), and the
    whole pipeline — rules and that head — judges it at each of ``THRESHOLDS``, a turn with
    the turn before it known. What a threshold buys on a writer the layer has not seen, beside the
    5-fold figure the threshold is chosen by (where a writer's rows sit on both sides). ``unseen``:
    turn sets never trained on, judged by the head fitted on everything; ``extra``: a candidate's
    training, the shipped data's and the candidate's held-out scores printed side by side."""
    variants = {"shipped": training((), 1.0)}
    if extra:
        variants["candidate"] = training(extra, weight)
    embedder = tl.E5Embedder(engine="onnx")
    texts = sorted({t for keep, _, _ in variants.values() for t, _ in keep})
    vectors = dict(zip(texts, embedder.passages_each(texts).astype(np.float64), strict=True))
    pipeline = build_pipeline(GovernanceSettings(), LabelsSettings(), embedder)
    shipped = pipeline.learned
    assert shipped is not None
    known = dict(vectors)

    def embed(batch: Sequence[str]) -> np.ndarray:  # every text embedded once across the runs
        missing = [t for t in dict.fromkeys(batch) if t not in known]
        if missing:
            known.update(zip(missing, embedder.passages_each(missing), strict=True))
        return np.stack([known[t] for t in batch]).astype(np.float32)

    held_turns = tuple(dict.fromkeys((*tl.TURN_SETS, *tl.LIGHT_TURN_SETS, *extra, *unseen, *tl.HELD_OUT_TURNS)))
    names = (*held_turns, *tl.HELD_OUT_ITEMS, "labelled_items.jsonl", "training_items.jsonl", "training_work.jsonl")
    keep, _, sources = variants["shipped"]

    def cases_of(name: str) -> list[tuple[str, str | None, bool]]:  # text, the turn before, a fact
        if name in tl.HELD_OUT_TURNS:
            return [
                (t.text, t.before or None, t.fact) for t in turns_of(name.removesuffix(".jsonl")) if t.split == "tune"
            ]
        if name in held_turns:
            return [(r["text"], r.get("prev") or None, bool(r["fact"])) for r in tl.rows(name)]
        return [(t, None, k) for (t, k), s in zip(keep, sources, strict=True) if s == name]

    out = []
    for label, (pairs, weights, origin) in variants.items():
        x = np.stack([vectors[t] for t, _ in pairs]) * tl.SCALE
        y = tl.one_hot(["keep" if k else "noise" for _, k in pairs], ["keep", "noise"])
        row_weight, source = np.asarray(weights), np.asarray(origin)
        fits = tl.fit_many(x, y, [row_weight * (source != name) for name in names], [L2] * len(names))
        for name, (w, b) in zip(names, fits, strict=True):
            cases = cases_of(name)
            row: dict[str, Any] = {
                "set": name,
                "data": label,
                "facts": sum(c[2] for c in cases),
                "noise": sum(not c[2] for c in cases),
            }
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
                f"{name:28s} {label:9s} {row['facts']:4d} {row['noise']:4d}  "
                + "  ".join(f"{row[f'{t:.2f}'][0]:.3f}/{row[f'{t:.2f}'][1]:.3f}" for t in THRESHOLDS),
                flush=True,
            )
            out.append(row)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--unseen", default="", help="turn sets never trained on, judged too (comma-separated)")
    parser.add_argument("--with", dest="extra", default="", help="a candidate: also train on these turn sets")
    parser.add_argument("--weight", type=float, default=1.0, help="the weight of a --with row (default 1)")
    args = parser.parse_args()
    unseen = tuple(n.strip() for n in args.unseen.split(",") if n.strip())
    extra = tuple(n.strip() for n in args.extra.split(",") if n.strip())
    if args.weight <= 0 or (args.weight != 1.0 and not extra):
        parser.error("--weight is a --with row's weight: greater than 0, and only with --with")
    for name in (*unseen, *extra):  # checked before minutes of embedding and fitting
        path = tl.DATA / name
        if not path.is_file():
            parser.error(f"no such set: {path}")
        first = tl.rows(name)[0]
        if "text" not in first or "fact" not in first:
            parser.error(f"{name}: not a set of turns (each row a text, its fact label and the turn before)")
    print(
        f"{'held out':28s} {'data':9s} facts noise  "
        + "  ".join(f"{'at ' + format(t, '.2f'):>11s}" for t in THRESHOLDS)
    )
    held_out(unseen, extra, args.weight)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
