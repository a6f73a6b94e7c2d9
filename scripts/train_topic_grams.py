"""The topic head's second reader (``policies/topic_grams.py``), trained by ``scripts/train_learned.py``
on the topic head's own rows: a logistic regression over each text's character n-grams.

Its C, the n-grams it weighs (those in ≥ ``GRAMS_MIN_DF`` texts) and its weight beside the e5 head
were chosen before this code was written: each writer of the topic data held out in turn (the e5
head, at the L2 strength the trainer picks, and the reader trained on the other writers), the
choice with the best *worst* writer's accuracy (C 10 or 30, ``min_df`` 3 or 5, weight 0.5–0.8;
CHANGELOG.md has the table's ends). scikit-learn's L-BFGS (the ``dev`` extra); the shipped reader
is plain weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np

GRAMS_C = 30.0
GRAMS_MIN_DF = 5
GRAMS_WEIGHT = 0.6
GRAMS_DIGITS = 4


def gram_matrix(texts: list[str], min_df: int) -> tuple[Any, dict[str, int]]:
    """Each text's n-gram counts (as the rules read the text), scaled to unit length, over the
    n-grams in ≥ ``min_df`` of the texts: a sparse matrix and its columns' n-grams."""
    from scipy import sparse

    from memwarden.policies.injection_model import ngrams
    from memwarden.policies.quality import prepare

    rows_ = []
    for text in texts:
        grams = ngrams(prepare(text))
        norm = float(np.sqrt(sum(c * c for c in grams.values()))) or 1.0
        rows_.append({g: c / norm for g, c in grams.items()})
    df: dict[str, int] = {}
    for r in rows_:
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

    x, index = gram_matrix([t for t, _ in topics], GRAMS_MIN_DF)
    fitted = LogisticRegression(C=GRAMS_C, max_iter=5000, solver="lbfgs").fit(x, [c for _, c in topics])
    coef = np.round(fitted.coef_, GRAMS_DIGITS)
    return {
        "classes": [str(c) for c in fitted.classes_],
        "bias": np.round(fitted.intercept_, GRAMS_DIGITS).tolist(),
        "grams": {g: coef[:, j].tolist() for g, j in index.items() if coef[:, j].any()},
        "weight": GRAMS_WEIGHT,
        "c": GRAMS_C,
        "min_df": GRAMS_MIN_DF,
    }
