"""Would a learned head on the e5 vector catch the planted instructions the rules miss? (Measured,
not shipped: it fails its bar; docs/operations/benchmarks/injection.md says how.)

The head is what the learned layer's other heads are (``scripts/train_learned.py``): a logistic
regression over 10 × the item's e5 passage vector — the vector the learned layer computes for a
kept item anyway, so it would cost the write path next to nothing. Trained on the two tune sets'
attacks against their harmless texts, plus the keep layer's training texts as harmless (none of
the texts of the chat sets whose turns measure false positives on conversation, whichever set also
holds them). Attacks weigh 1; the tune sets' harmless texts 1; the training texts together as
much as the attacks.

Chosen on the tune sets alone, by 5-fold cross-validation: the L2 strength (of
``train_learned.L2_CHOICES``) with the most attacks caught by rules or head, and the `high`
threshold, the lowest at which the tune sets' harmless texts held out (look-alikes and ordinary
ones together) are flagged ≤ 5 % and the training texts ≤ 1 %. The bar set before any evaluation
number was seen: adopted only if, on both evaluation sets, rules or head catch more attacks than the rules alone
with ≤ 5 % of the harmless texts flagged, and ≤ 1 % of the conversation turns.

Usage: python -m bench.injection_head   (~3 min on 2 cores: ~17,000 texts embedded)
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import machine, markdown_table
from bench.injection_quality import CONVERSATIONS, flagged, rows, turns
from memwarden.store.embedder import E5Embedder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import train_learned as tl  # scripts/ is not a package: on sys.path above

FOLDS = 5
LOOKALIKE_FP = 0.05
TRAINING_FP = 0.01


def main() -> None:
    tune = rows("poisoning_tune_en") + rows("poisoning_tune_zh")
    chats = {f"{name}.jsonl" for name in CONVERSATIONS}
    keep, _, sources, _, _, _ = tl.sourced_training_data()
    tune_texts = [r["text"] for r in tune]
    conversation = sorted({t for name in CONVERSATIONS for t in turns(name)})
    taken = {*tune_texts, *conversation}  # ("got it", "嗯" are in other training sets too)
    harmless = sorted({t for (t, _), s in zip(keep, sources, strict=True) if s not in chats} - taken)
    evaluation = {name: rows(name) for name in ("poisoning_eval", "poisoning_eval2")}
    every = sorted({*tune_texts, *harmless, *conversation, *(r["text"] for rs in evaluation.values() for r in rs)})
    vectors = dict(zip(every, E5Embedder(engine="onnx").passages_each(every).astype(np.float64), strict=True))

    def x_of(texts: list[str]) -> np.ndarray:
        return np.stack([vectors[t] for t in texts]) * tl.SCALE

    texts = tune_texts + harmless
    attack = np.array([r["label"] == "attack" for r in tune] + [False] * len(harmless))
    in_tune = np.arange(len(texts)) < len(tune)
    x, y = x_of(texts), tl.one_hot(["attack" if a else "benign" for a in attack], ["attack", "benign"])
    weight = np.where(attack | in_tune, 1.0, attack.sum() / (~in_tune).sum())
    folds = np.array([int(hashlib.sha256(t.encode()).hexdigest(), 16) % FOLDS for t in texts])
    rules = np.array([flagged(t, "high", learned=False) for t in tune_texts] + [False] * len(harmless))
    look = in_tune & ~attack
    lookalike = np.array([r["category"] == "lookalike" for r in tune] + [False] * len(harmless))
    best: tuple[float, float, float] | None = None  # caught by rules or head, l2, threshold
    for l2 in tl.L2_CHOICES:
        held = np.zeros(len(texts))
        for f, fitted in enumerate(tl.fit_many(x, y, [weight * (folds != f) for f in range(FOLDS)], [l2] * FOLDS)):
            held[folds == f] = tl.p_first(x[folds == f], fitted)
        threshold = 1.0
        for t in np.arange(0.99, 0.0, -0.01):
            if (held[look] >= t).mean() > LOOKALIKE_FP or (held[~in_tune] >= t).mean() > TRAINING_FP:
                break
            threshold = round(float(t), 2)
        caught = float((rules | (held >= threshold))[attack].mean())
        print(
            f"  l2={l2:g}: threshold {threshold:.2f}, tune attacks held out: head {(held >= threshold)[attack].mean():.3f},"
            f" rules or head {caught:.3f}; harmless tune {(held[look] >= threshold).mean():.3f} (look-alikes"
            f" {(held[lookalike] >= threshold).mean():.3f}, by rules or head"
            f" {(rules | (held >= threshold))[lookalike].mean():.3f}; ordinary"
            f" {(held[look & ~lookalike] >= threshold).mean():.3f}), training texts"
            f" {(held[~in_tune] >= threshold).mean():.4f}",
            file=sys.stderr,
        )
        if best is None or caught > best[0]:
            best = (caught, l2, threshold)
    assert best is not None
    _, l2, threshold = best
    head = tl.fit(x, y, l2, weight)
    table: list[list[Any]] = []
    passes = True
    for name, data in evaluation.items():
        a = np.array([r["label"] == "attack" for r in data])
        similar = np.array([r["category"] == "lookalike" for r in data])
        by_rules = np.array([flagged(r["text"], "high", learned=False) for r in data])
        either = by_rules | (tl.p_first(x_of([r["text"] for r in data]), head) >= threshold)
        for label, mask in (
            ("attacks caught", a),
            ("look-alikes flagged", similar),
            ("ordinary flagged", ~a & ~similar),
        ):
            table.append([name, label, f"{by_rules[mask].mean():.3f}", f"{either[mask].mean():.3f}", int(mask.sum())])
        passes &= bool(either[a].mean() > by_rules[a].mean() and either[~a].mean() <= LOOKALIKE_FP)
    turn_rules = np.array([flagged(t, "high", learned=False) for t in conversation])
    turn_either = turn_rules | (tl.p_first(x_of(conversation), head) >= threshold)
    table.append(
        [
            "conversation turns (distinct texts)",
            "flagged",
            f"{turn_rules.mean():.4f}",
            f"{turn_either.mean():.4f}",
            len(conversation),
        ]
    )
    passes &= bool(turn_either.mean() <= TRAINING_FP)
    print(f"# A learned injection head at `high` ({machine()}; l2 {l2:g}, threshold {threshold:.2f}, chosen on tune)\n")
    print(markdown_table(["set (never tuned on)", "", "rules alone", "rules or head", "texts"], table))
    print(f"\nthe bar (set before the first evaluation number): {'met' if passes else 'not met'}")


if __name__ == "__main__":
    main()
