"""Train the learned layer (``policies/learned_model.json``) from the labelled sets in the repository.

Data, all written in the repository, none of it the evaluation split:

* keep/reject — ``tests/data/candidates.jsonl`` (the project's set), the ``tune`` split of
  ``tests/data/labelled_items.jsonl``, ``tests/data/training_items.jsonl`` (1,131 items written for
  training, by other writers than the evaluation items: 800 in seven styles, and 331 chat-style
  ones — facts wrapped in chatter, fragments cut before a question, terse notes and log lines, and
  the chatter itself), and every turn of the ``tune`` split of ``tests/data/transcripts.jsonl``
  (noise turns rejected, fact and mixed turns kept);
* topic and stage — the kept items of the first two that carry them (the chat-style items carry
  no topic, and a stage only where the fact is written plainly: notes, log lines, mixed zh/en),
  plus the vocabulary's examples (``policies/vocabulary.py``).

Each head is a logistic regression over 10 × the e5 vector (full-batch gradient descent, fixed
steps, no randomness); its L2 strength is chosen by 5-fold cross-validation on the training data
(printed), and so is the keep threshold: the highest at which the cross-validated keep recall
stays ≥ 0.98 (losing a fact costs more than storing some noise). The weights are rounded to 5
decimals and written with sorted keys, so running the script again on the same machine writes the
same bytes (``tests/test_learned.py`` checks).

Usage: python scripts/train_learned.py [--out policies/learned_model.json] [--check]
       (--check: write nothing, exit 1 when the file would change)
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

from memwarden.policies.vocabulary import STAGES, TOPICS  # noqa: E402
from memwarden.store.embedder import E5Embedder  # noqa: E402

DATA = REPO / "tests" / "data"
SCALE = 10.0
STEPS = 1500
RATE = 0.5
L2_CHOICES = (1e-4, 1e-3, 1e-2, 1e-1)
FOLDS = 5
KEEP_RECALL = 0.98  # cross-validated, on the training data: the bar the keep threshold is set by


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def training_data() -> tuple[list[tuple[str, bool]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(text, keep) pairs; (text, topic) and (text, stage) pairs."""
    items = rows("candidates.jsonl") + [r for r in rows("labelled_items.jsonl") if r["split"] == "tune"]
    items += rows("training_items.jsonl")
    keep = [(r["text"], bool(r["keep"])) for r in items]
    keep += [
        (t["text"], t["label"] != "noise")
        for r in rows("transcripts.jsonl")
        if r["split"] == "tune"
        for t in r["turns"]
    ]
    topics = [(r["text"], r["topic"]) for r in items if r["keep"] and r.get("topic")]
    stages = [(r["text"], r["stage"]) for r in items if r["keep"] and r.get("stage")]
    for name, entry in TOPICS.items():
        topics += [(text, name) for text in (entry.description, *entry.examples)]
        keep += [(text, True) for text in entry.examples]
    for name, entry in STAGES.items():
        stages += [(text, name) for text in (entry.description, *entry.examples)]
    return keep, topics, stages


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial logistic regression; ``y`` one-hot (n, k). Deterministic.

    Over the centred vectors: e5 vectors share one large direction (the top eigenvalue of
    ``x.T @ x / n`` is ~80 at SCALE 10), along which a step of RATE overshoots, and gradient descent
    then swings instead of converging (the weights depend on the step it stops at). Centred, the
    top eigenvalue is ~3 and the descent is stable; the mean goes back into the bias."""
    mean = x.mean(axis=0)
    x = x - mean
    w = np.zeros((x.shape[1], y.shape[1]))
    b = np.zeros(y.shape[1])
    for _ in range(STEPS):
        z = x @ w + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = p - y
        w -= RATE * (x.T @ g / len(y) + l2 * w)
        b -= RATE * g.mean(axis=0)
    return w, b - mean @ w


def cross_validate(x: np.ndarray, y: np.ndarray, name: str) -> float:
    """The L2 strength with the best mean held-out accuracy over FOLDS folds (printed)."""
    folds = np.arange(len(y)) % FOLDS
    best, best_acc = L2_CHOICES[0], -1.0
    for l2 in L2_CHOICES:
        accs = []
        for f in range(FOLDS):
            train, test = folds != f, folds == f
            w, b = fit(x[train], y[train], l2)
            accs.append(float(((x[test] @ w + b).argmax(axis=1) == y[test].argmax(axis=1)).mean()))
        acc = float(np.mean(accs))
        print(f"  {name}: l2={l2:g} cross-validated accuracy {acc:.3f}", file=sys.stderr)
        if acc > best_acc:
            best, best_acc = l2, acc
    return best


def one_hot(labels: list[str], classes: list[str]) -> np.ndarray:
    y = np.zeros((len(labels), len(classes)))
    y[np.arange(len(labels)), [classes.index(c) for c in labels]] = 1.0
    return y


def head(vectors: np.ndarray, labels: list[str], name: str) -> dict[str, Any]:
    classes = sorted(set(labels))
    x, y = vectors * SCALE, one_hot(labels, classes)
    w, b = fit(x, y, cross_validate(x, y, name))
    return {"classes": classes, "weights": np.round(w.T, 5).tolist(), "bias": np.round(b, 5).tolist()}


def keep_threshold(vectors: np.ndarray, keep: list[bool]) -> float:
    """The highest P(keep) threshold at which cross-validated keep recall stays ≥ KEEP_RECALL:
    losing a fact costs more than storing a little noise."""
    x = vectors * SCALE
    y = one_hot(["keep" if k else "noise" for k in keep], ["keep", "noise"])
    folds = np.arange(len(keep)) % FOLDS
    p_keep = np.zeros(len(keep))
    for f in range(FOLDS):
        w, b = fit(x[folds != f], y[folds != f], 1e-3)
        z = x[folds == f] @ w + b
        p_keep[folds == f] = 1.0 / (1.0 + np.exp(-(z[:, 0] - z[:, 1])))
    truth = np.asarray(keep)
    for threshold in np.arange(0.70, 0.04, -0.05):
        kept = p_keep >= threshold
        recall = (kept & truth).sum() / truth.sum()
        noise_out = (~kept & ~truth).sum() / (~truth).sum()
        if recall >= KEEP_RECALL:
            print(f"  keep threshold {threshold:.2f}: recall {recall:.3f}, noise out {noise_out:.3f}", file=sys.stderr)
            return round(float(threshold), 2)
    return 0.05


def train() -> dict[str, Any]:
    keep, topics, stages = training_data()
    embedder = E5Embedder(engine="onnx")
    texts = sorted({t for t, _ in keep} | {t for t, _ in topics} | {t for t, _ in stages})
    vectors = dict(zip(texts, embedder.passages_each(texts).astype(np.float64), strict=True))

    kx = np.stack([vectors[t] for t, _ in keep])
    kept_head = head(kx, ["keep" if k else "noise" for _, k in keep], "keep")
    i_keep, i_noise = kept_head["classes"].index("keep"), kept_head["classes"].index("noise")
    w = np.asarray(kept_head["weights"])
    b = np.asarray(kept_head["bias"])
    digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()
    return {
        "embedder": embedder.name,
        "scale": SCALE,
        "keep": {  # two-class softmax as one logistic: P(keep) = σ((w_keep − w_noise)·x + b_keep − b_noise)
            "weights": np.round(w[i_keep] - w[i_noise], 5).tolist(),
            "bias": round(float(b[i_keep] - b[i_noise]), 5),
            "threshold": keep_threshold(kx, [k for _, k in keep]),
        },
        "topic": head(np.stack([vectors[t] for t, _ in topics]), [c for _, c in topics], "topic"),
        "stage": head(np.stack([vectors[t] for t, _ in stages]), [c for _, c in stages], "stage"),
        "data": {"texts": len(texts), "keep": len(keep), "topic": len(topics), "stage": len(stages), "sha256": digest},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "policies" / "learned_model.json")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the file would change")
    args = parser.parse_args()
    text = json.dumps(train(), sort_keys=True, separators=(",", ":")) + "\n"
    if args.check:
        same = args.out.exists() and args.out.read_text() == text
        print("unchanged" if same else f"{args.out} would change")
        return 0 if same else 1
    args.out.write_text(text)
    print(f"wrote {args.out} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
