"""Train the injection detector's learned check (``policies/injection_model.json``; the model is
described in ``policies/injection_model.py``).

Rows: every text of ``tests/data/poisoning_tune*.jsonl`` (fifteen writers, each a set of attacks,
look-alikes and ordinary memories), and as harmless texts the keep layer's training texts
(``scripts/train_learned.py``) — none of the chat sets whose turns measure false positives on
conversation, and none of the evaluation sets (``poisoning_eval*``). Attacks weigh 1, look-alikes
3 (:data:`LOOKALIKE_WEIGHT`), ordinary texts 1, the training texts together as much as the attacks.
A feature is used when it appears in ≥ :data:`MIN_DF` rows of a fit. scikit-learn's L-BFGS
logistic regression (the ``dev`` extra; the shipped model is plain weights).

Chosen on the tune sets alone, leaving each writer out in turn (the training texts and the
conversation turns split into as many folds by the SHA-256 of the text):

- each C's threshold: the lowest (in steps of 0.001) at which, for *every* writer left out, the
  model adds ≤ 1 point (:data:`ADDED_FP`) to the share of its look-alikes and to that of its
  ordinary texts the rules make ``high``, and ≤ 1 % of the training texts and of the conversation
  turns are ``high``, rules and model together;
- C (of 3, 10, 30, 100): the one whose *worst* writer has the most attacks at ``high`` (rules or model).

The model only adds ``high`` findings (``policies/injection.py``): the rules' own stay.

``MIN_DF`` (of 1, 3, 5, 10, 20, 40) and ``LOOKALIKE_WEIGHT`` (1 or 3) were chosen the same way, by
the writers' mean, before this script was written (a model with e5 features beside the n-grams,
not shipped: +0.08 of attacks, left out for the embedding it needs where a text is judged in
segments).

Usage: python scripts/train_injection.py [--out policies/injection_model.json] [--check]
       (~4 min on 2 cores; --check: write nothing, exit 1 when the file would differ; the same
       bytes on the same scikit-learn and BLAS — another version may move a weight's last digit)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

import train_learned as tl  # noqa: E402

from bench.injection_quality import CONVERSATIONS, rows, turns  # noqa: E402
from memwarden.policies.injection import find_instructions, severity, triggers  # noqa: E402
from memwarden.policies.injection_model import features  # noqa: E402

C_CHOICES = (3.0, 10.0, 30.0, 100.0)
MIN_DF = 20
LOOKALIKE_WEIGHT = 3.0
ADDED_FP = 0.01
TRAINING_FP = 0.01
CONVERSATION_FP = 0.01
DIGITS = 4


class Texts:
    """Each text's features, gate and the rules' own ``high``, computed once."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        found = [find_instructions(t, learned=False) for t in texts]
        self.features = [features(t, [(x.rule, x.severity) for x in f]) for t, f in zip(texts, found, strict=True)]
        self.gate = np.array([triggers(t) for t in texts])
        self.rules = np.array([severity(f) == "high" for f in found])

    def high(self, p: np.ndarray, threshold: float) -> np.ndarray:
        return np.asarray(self.rules | (self.gate & (p >= threshold)))


def fold_of(text: str, k: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % k


def matrix(rows_: list[dict[str, float]], index: dict[str, int]) -> Any:
    """The rows as a sparse matrix over ``index``'s columns (scipy, imported here: the learning
    rows of :func:`learning_rows` are read without it)."""
    from scipy import sparse

    indptr, cols, vals = [0], [], []
    for r in rows_:
        for f, v in r.items():
            j = index.get(f)
            if j is not None:
                cols.append(j)
                vals.append(v)
        indptr.append(len(cols))
    return sparse.csr_matrix((vals, cols, indptr), shape=(len(rows_), len(index)))


def vocabulary(rows_: list[dict[str, float]]) -> dict[str, int]:
    """Features in ≥ MIN_DF rows (the rules' findings always), sorted."""
    df: dict[str, int] = {}
    for r in rows_:
        for f in r:
            df[f] = df.get(f, 0) + 1
    return {f: i for i, f in enumerate(sorted(f for f, n in df.items() if n >= MIN_DF or f.startswith("rule:")))}


def fit(rows_: list[dict[str, float]], attack: np.ndarray, weight: np.ndarray, c: float) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    index = vocabulary(rows_)
    m = LogisticRegression(C=c, max_iter=5000, solver="lbfgs")
    m.fit(matrix(rows_, index), attack, sample_weight=weight)
    w = m.coef_[0].tolist()
    return {
        "weights": {f: round(w[j], DIGITS) for f, j in index.items() if round(w[j], DIGITS)},
        "bias": round(float(m.intercept_[0]), DIGITS),
    }


def probabilities(model: dict[str, Any], rows_: list[dict[str, float]]) -> np.ndarray:
    w, b = model["weights"], model["bias"]
    z = np.array([b + sum(w.get(f, 0.0) * v for f, v in r.items()) for r in rows_])
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -60, 60))))


def learning_rows(names: list[str]) -> tuple[list[tuple[int, dict[str, Any]]], list[str], list[str]]:
    """The tune sets ``names``' rows (with each one's writer: its index in ``names``), the harmless
    training texts (none of the chat sets, nor a tune text or a turn), and the conversation turns."""
    tune = [(i, r) for i, n in enumerate(names) for r in rows(n)]
    chats = {f"{n}.jsonl" for n in CONVERSATIONS}
    keep, _, sources, _, _, _ = tl.sourced_training_data()
    conversation = sorted({t for n in CONVERSATIONS for t in turns(n)})
    taken = {r["text"] for _, r in tune} | set(conversation)
    harmless = sorted({t for (t, _), s in zip(keep, sources, strict=True) if s not in chats} - taken)
    return tune, harmless, conversation


def data_digest(names: list[str], tune: list[tuple[int, dict[str, Any]]], harmless: list[str], talk: list[str]) -> str:
    """The SHA-256 of the rows a model is trained and chosen on (each tune text with its writer, label
    and category; the harmless texts; the conversation turns): the shipped model records it, and a
    test compares it with the data as it is now (``tests/unit/test_learned_data.py``)."""
    rows_ = [[names[i], r["text"], r["label"], r["category"]] for i, r in tune]
    return hashlib.sha256(json.dumps([rows_, harmless, talk], ensure_ascii=False).encode()).hexdigest()


def tune_names() -> list[str]:
    return sorted(p.stem for p in tl.DATA.glob("poisoning_tune*.jsonl"))


def train() -> dict[str, Any]:
    names = tune_names()
    tune, harmless, conversation = learning_rows(names)
    texts = Texts([r["text"] for _, r in tune] + harmless)
    talk = Texts(conversation)
    attack = np.array([r["label"] == "attack" for _, r in tune] + [False] * len(harmless))
    look = np.array([r["category"] == "lookalike" for _, r in tune] + [False] * len(harmless))
    in_tune = np.arange(len(attack)) < len(tune)
    weight = np.where(attack | in_tune, 1.0, attack.sum() / (~in_tune).sum()) * np.where(look, LOOKALIKE_WEIGHT, 1.0)
    k = len(names)
    fold = np.where(in_tune, [i for i, _ in tune] + [-1] * len(harmless), [fold_of(t, k) for t in texts.texts])
    turn_fold = np.array([fold_of(t, k) for t in talk.texts])
    report: dict[str, Any] = {}
    best: tuple[float, float, float, float] | None = None  # worst, mean, C, threshold
    for c in C_CHOICES:
        held = np.zeros(len(texts.texts))
        turn_p = np.zeros(len(talk.texts))
        for f in range(k):
            train_ = fold != f
            fitted = [r for r, t in zip(texts.features, train_, strict=True) if t]
            model = fit(fitted, attack[train_], weight[train_], c)
            held[~train_] = probabilities(model, [r for r, t in zip(texts.features, train_, strict=True) if not t])
            mine = turn_fold == f
            turn_p[mine] = probabilities(model, [r for r, m in zip(talk.features, mine, strict=True) if m])
        threshold = None
        for t in np.round(np.arange(0.999, 0.0, -0.001), 3):
            high, high_turns = texts.high(held, t), talk.high(turn_p, t)
            rules = texts.rules
            ok = all(
                high[(fold == f) & mask].mean() - rules[(fold == f) & mask].mean() <= ADDED_FP
                for f in range(k)
                for mask in (look, in_tune & ~look & ~attack)
            )
            if not (ok and high[~in_tune].mean() <= TRAINING_FP and high_turns.mean() <= CONVERSATION_FP):
                break
            threshold = float(t)
        if threshold is None:
            print(f"C {c:g}: no threshold meets the bounds", file=sys.stderr)
            continue
        high = texts.high(held, threshold)
        caught = {n: round(float(high[(fold == f) & attack].mean()), 4) for f, n in enumerate(names)}
        flagged = {n: round(float(high[(fold == f) & look].mean()), 4) for f, n in enumerate(names)}
        by_rules = {n: round(float(texts.rules[(fold == f) & attack].mean()), 4) for f, n in enumerate(names)}
        worst, mean = min(caught.values()), float(np.mean(list(caught.values())))
        report[f"{c:g}"] = {
            "threshold": threshold,
            "attacks_high": caught,
            "attacks_high_rules_alone": by_rules,
            "lookalikes_high": flagged,
        }
        said = f"C {c:g}: threshold {threshold:.3f}, attacks at high: worst writer {worst:.3f}, mean {mean:.3f}"
        print(said, file=sys.stderr)
        for n in names:
            print(
                f"  {n:20s} attacks {caught[n]:.3f} (rules alone {by_rules[n]:.3f})  look-alikes {flagged[n]:.3f}",
                file=sys.stderr,
            )
        if best is None or (worst, mean) > best[:2]:
            best = (worst, mean, c, threshold)
    if best is None:
        raise SystemExit("no C meets the false-positive bounds")
    _, _, c, threshold = best
    model = fit(texts.features, attack, weight, c)
    return {
        "about": "scripts/train_injection.py: the injection detector's learned check (policies/injection_model.py)",
        "c": c,
        "min_df": MIN_DF,
        "lookalike_weight": LOOKALIKE_WEIGHT,
        "writers": names,
        "data": {"rows": len(tune) + len(harmless), "sha256": data_digest(names, tune, harmless, conversation)},
        "left_out": report,
        "threshold": threshold,
        "bias": model["bias"],
        "weights": dict(sorted(model["weights"].items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "policies" / "injection_model.json")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file would differ")
    args = parser.parse_args()
    text = json.dumps(train(), ensure_ascii=False, sort_keys=False, indent=0) + "\n"
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print("same" if same else f"{args.out} would change", file=sys.stderr)
        raise SystemExit(0 if same else 1)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(text):,} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
