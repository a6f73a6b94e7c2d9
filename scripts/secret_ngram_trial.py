"""Would a learned text classifier help the secret detectors? A trial, not part of memwarden.

Each tune set (``tests/data/secrets_tune*.jsonl`` and the read ``secrets_heldout.jsonl``) is held out
in turn; a logistic regression over character 2–5-grams (TF-IDF) trains on all the others and judges
it. A text counts as holding a secret when the detectors find one, or when the classifier's
probability reaches a threshold. Printed per threshold, English and Chinese: the mean and the
smallest change in recall, the mean and the largest loss of precision, against the detectors alone.
The held-out sets (``secrets_heldout2`` …) are never read. docs/operations/benchmarks/secrets.md:
"A learned classifier, tried".

Needs scikit-learn, which memwarden does not depend on: ``pip install scikit-learn``; ~5 min.

Usage: python scripts/secret_ngram_trial.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from statistics import mean
from typing import Any

from memwarden.policies.secrets import find_secrets

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95)


def recall_precision(rows: list[dict[str, Any]], flags: list[bool], lang: str) -> tuple[float, float]:
    pairs = [(r, f) for r, f in zip(rows, flags, strict=True) if r["lang"] == lang]
    tp = sum(1 for r, f in pairs if r["secret"] and f)
    fp = sum(1 for r, f in pairs if not r["secret"] and f)
    positives = sum(1 for r, _ in pairs if r["secret"])
    return (tp / positives if positives else 1.0, tp / (tp + fp) if tp + fp else 1.0)


def main() -> int:
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        print("this trial needs scikit-learn: pip install scikit-learn", file=sys.stderr)
        return 2
    sets = {}
    for path in [*sorted(DATA.glob("secrets_tune*.jsonl")), DATA / "secrets_heldout.jsonl"]:
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for row in rows:
            row["rule"] = bool(find_secrets(row["text"]))
        sets[path.stem] = rows
    changes: dict[tuple[str, float], list[tuple[float, float]]] = {}
    for held in sets:
        train = [r for name, rows in sets.items() if name != held for r in rows]
        vectors = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True)
        model = LogisticRegression(C=4, max_iter=2000)
        model.fit(vectors.fit_transform([r["text"] for r in train]), [r["secret"] for r in train])
        test = sets[held]
        probability = model.predict_proba(vectors.transform([r["text"] for r in test]))[:, 1]
        for lang in ("en", "zh"):
            rules = recall_precision(test, [r["rule"] for r in test], lang)
            for t in THRESHOLDS:
                flags = [r["rule"] or p >= t for r, p in zip(test, probability, strict=True)]
                both = recall_precision(test, flags, lang)
                changes.setdefault((lang, t), []).append((both[0] - rules[0], both[1] - rules[1]))
    print(f"{len(sets)} sets, each held out in turn\n")
    print("| language | threshold | recall gained, mean | smallest | precision lost, mean | largest |")
    print("|---|---|---|---|---|---|")
    for (lang, t), rows in sorted(changes.items()):
        recall, precision = [r[0] for r in rows], [r[1] for r in rows]
        gained, lost = f"{mean(recall):+.3f} | {min(recall):+.3f}", f"{mean(precision):+.3f} | {min(precision):+.3f}"
        print(f"| {lang} | {t} | {gained} | {lost} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
