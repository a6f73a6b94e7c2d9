"""The topic head's second reader: a logistic regression over an item's character n-grams.

The e5 head (``policies/learned.py``) reads what a text means; on work logs by writers it never saw
it confused business, infra and code about one fact in three. Words read differently: a log line's
product names, commands and jargon carry its topic where the sentence's meaning is generic. Each
writer held out in turn (``scripts/topic_writers.py``), the two together beat either alone on every
writer: the topic is the class of ``(1 − w)·log p(e5) + w·log p(n-grams)``, ``w`` the model's weight
scaled by the share of the text the reader knows — a text it knows nothing of (another language)
keeps the e5 head's answer. (Two other blends were candidates of that selection, not shipped.)

Features as the injection check's (``policies/injection_model.py``): each word's character 2-, 3- and
4-grams, counted, the counts scaled to unit length; an n-gram the training data held in fewer than
``min_df`` texts has no weight. The weights are ``topic_grams`` in ``policies/learned_model.json``.
Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memwarden.policies.injection_model import MAX_CHARS, NGRAMS, ngrams

FORM = "scaled by coverage"  # the blend the model file must name (scripts/topic_writers.py chose it)


@dataclass(frozen=True)
class TopicGrams:
    classes: tuple[str, ...]
    index: Mapping[str, int]  # n-gram → its row of ``weights``
    weights: npt.NDArray[np.float64]  # (n-grams, classes)
    bias: npt.NDArray[np.float64]
    weight: float  # the reader's share beside the e5 head, for a text it knows whole

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TopicGrams:
        """The reader in the model file. Raises ValueError when the file was trained on other
        features than :func:`~memwarden.policies.injection_model.ngrams` gives, or for another blend."""
        features = obj.get("features", {"ngrams": list(NGRAMS), "max_chars": MAX_CHARS})
        if features != {"ngrams": list(NGRAMS), "max_chars": MAX_CHARS}:
            raise ValueError(f"the topic reader was trained on other n-grams ({features}): retrain it")
        if obj.get("form") != FORM:
            raise ValueError(f"the topic reader was chosen for another blend ({obj.get('form')!r}): retrain it")
        classes = tuple(obj["classes"])
        grams = obj["grams"]
        index = {g: i for i, g in enumerate(grams)}
        weights = np.asarray(list(grams.values()), dtype=np.float64).reshape(len(grams), len(classes))
        bias = np.asarray(obj["bias"], dtype=np.float64)
        return cls(classes, index, weights, bias, float(obj["weight"]))

    def read(self, prepared: str) -> tuple[npt.NDArray[np.float64], float]:
        """The n-grams' evidence for each class (in :attr:`classes`' order, without the prior) and
        the share of the text the reader knows (the length of its known n-grams' counts, 0..1)."""
        grams = ngrams(prepared)
        norm = math.sqrt(sum(c * c for c in grams.values())) or 1.0
        rows, counts = [], []
        for gram, count in grams.items():
            if (i := self.index.get(gram)) is not None:
                rows.append(i)
                counts.append(count)
        if not rows:
            return np.zeros(len(self.classes)), 0.0
        x = np.asarray(counts, dtype=np.float64) / norm
        evidence: npt.NDArray[np.float64] = x @ self.weights[rows]
        return evidence, float(math.sqrt(float(x @ x)))

    def log_probabilities(self, prepared: str) -> npt.NDArray[np.float64]:
        """Each class's log-probability for the text (in :attr:`classes`' order)."""
        return _log_softmax(self.bias + self.read(prepared)[0])

    def blend(
        self, classes: Sequence[str], e5_logits: npt.NDArray[np.float64], prepared: str
    ) -> npt.NDArray[np.float64]:
        """The probabilities of ``classes`` (a head's, each one the n-grams know) from the e5 head's
        logits over them and the text's n-grams: the reader's log-probabilities at :attr:`weight` times
        the share of the text it knows."""
        a = _log_softmax(e5_logits)
        evidence, coverage = self.read(prepared)
        order = [self.classes.index(c) for c in classes]
        weight = self.weight * coverage
        b = _log_softmax(self.bias + evidence)[order]
        z = (1.0 - weight) * a + weight * b
        p = np.exp(z - z.max())
        out: npt.NDArray[np.float64] = p / p.sum()
        return out


def _log_softmax(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    z = z - z.max()
    out: npt.NDArray[np.float64] = z - math.log(float(np.exp(z).sum()))
    return out
