"""The topic head's second reader (``policies/topic_grams.py``), trained by ``scripts/train_learned.py``
on the topic head's own rows: a logistic regression over each text's character n-grams.

Its C, the n-grams it weighs (those in ≥ ``GRAMS_MIN_DF`` texts), its weight beside the e5 head and
the form of the blend were chosen by ``scripts/topic_writers.py`` (each writer of the topic data held
out in turn; the best *worst* writer's accuracy, then the best mean; ``bench/results/topic_writers.txt``)
before the shipped reader was trained. scikit-learn's L-BFGS (the ``dev`` extra); the shipped reader
is plain weights.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

GRAMS_C = 30.0
GRAMS_MIN_DF = 3
GRAMS_WEIGHT = 0.5
GRAMS_DIGITS = 4


def gram_matrix(texts: list[str], min_df: int, counted: Sequence[bool] | None = None) -> tuple[Any, dict[str, int]]:
    """Each text's n-gram counts (as the rules read the text), scaled to unit length over all its
    n-grams, in the columns of the n-grams in ≥ ``min_df`` of the texts (of those ``counted``
    marks: a held-out writer's texts add no n-gram): a sparse matrix and its columns' n-grams. A
    row's length is the share of the text the columns hold (its *coverage*)."""
    from scipy import sparse

    from memwarden.policies.injection_model import ngrams
    from memwarden.policies.quality import prepare

    rows_ = []
    for text in texts:
        grams = ngrams(prepare(text))
        norm = float(np.sqrt(sum(c * c for c in grams.values()))) or 1.0
        rows_.append({g: c / norm for g, c in grams.items()})
    df: dict[str, int] = {}
    for i, r in enumerate(rows_):
        if counted is None or counted[i]:
            for g in r:
                df[g] = df.get(g, 0) + 1
    index = {g: i for i, g in enumerate(sorted(g for g, n in df.items() if n >= min_df))}
    indptr, cols, vals = [0], [], []
    for r in rows_:
        for g, v in r.items():
            if (j := index.get(g)) is not None:
                cols.append(j)
                vals.append(v)
        indptr.append(len(cols))
    return sparse.csr_matrix((vals, cols, indptr), shape=(len(rows_), len(index))), index


def topic_grams(topics: list[tuple[str, str]]) -> dict[str, Any]:
    """The topic head's second reader (``policies/topic_grams.py``): a logistic regression over each
    text's character n-grams (scikit-learn's L-BFGS, the ``dev`` extra; the shipped reader is plain
    weights)."""
    from sklearn.linear_model import LogisticRegression

    from memwarden.policies.injection_model import MAX_CHARS, NGRAMS
    from memwarden.policies.topic_grams import FORM  # the one blend the runtime reads

    x, index = gram_matrix([t for t, _ in topics], GRAMS_MIN_DF)
    fitted = LogisticRegression(C=GRAMS_C, max_iter=5000, solver="lbfgs").fit(x, [c for _, c in topics])
    coef = np.round(fitted.coef_, GRAMS_DIGITS)
    return {
        "classes": [str(c) for c in fitted.classes_],
        "bias": np.round(fitted.intercept_, GRAMS_DIGITS).tolist(),
        "grams": {g: coef[:, j].tolist() for g, j in index.items() if coef[:, j].any()},
        "weight": GRAMS_WEIGHT,
        "form": FORM,
        "features": {"ngrams": list(NGRAMS), "max_chars": MAX_CHARS},
        "c": GRAMS_C,
        "min_df": GRAMS_MIN_DF,
    }


def reader_differences(old: dict[str, Any], new: dict[str, Any], texts: list[str]) -> list[str]:
    """The topic reader's: its features are pure Python, so the same n-grams on any CPU; L-BFGS on
    another scikit-learn or BLAS may move a weight's last digit, so its own decisions on the topic
    texts must agree on ≥ 99.9 %."""
    from memwarden.policies.quality import prepare
    from memwarden.policies.topic_grams import TopicGrams

    if set(old["grams"]) != set(new["grams"]):
        return ["topic_grams.grams: another set of n-grams than the file's"]
    a, b = TopicGrams.from_json(old), TopicGrams.from_json(new)
    agree = float(
        np.mean([a.log_probabilities(t).argmax() == b.log_probabilities(t).argmax() for t in map(prepare, texts)])
    )
    print(f"  topic reader: the same decision on {agree:.4f} of its training texts", file=sys.stderr)
    return [] if agree >= 0.999 else [f"topic_grams: the same decision on only {agree:.4f} of its training texts"]
