"""The topic head's second reader: a logistic regression over an item's character n-grams.

The e5 head (``policies/learned.py``) reads what a text means; on work logs by writers it never saw
it confused business, infra and code about one fact in three. Words read differently: a log line's
product names, commands and jargon carry its topic where the sentence's meaning is generic. Each
writer held out in turn (``scripts/train_learned.py``), the two together beat either alone on every
writer: the topic is the class of ``(1 − WEIGHT)·log p(e5) + WEIGHT·log p(n-grams)``.

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

from memwarden.policies.injection_model import ngrams


@dataclass(frozen=True)
class TopicGrams:
    classes: tuple[str, ...]
    index: Mapping[str, int]  # n-gram → its row of ``weights``
    weights: npt.NDArray[np.float64]  # (n-grams, classes)
    bias: npt.NDArray[np.float64]
    weight: float  # of the n-grams' log-probabilities beside the e5 head's

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> TopicGrams:
        classes = tuple(obj["classes"])
        grams = obj["grams"]
        index = {g: i for i, g in enumerate(grams)}
        weights = np.asarray(list(grams.values()), dtype=np.float64).reshape(len(grams), len(classes))
        return cls(classes, index, weights, np.asarray(obj["bias"], dtype=np.float64), float(obj["weight"]))

    def log_probabilities(self, prepared: str) -> npt.NDArray[np.float64]:
        """Each class's log-probability for the text (in :attr:`classes`' order)."""
        grams = ngrams(prepared)
        norm = math.sqrt(sum(c * c for c in grams.values())) or 1.0
        rows, counts = [], []
        for gram, count in grams.items():
            if (i := self.index.get(gram)) is not None:
                rows.append(i)
                counts.append(count)
        z = self.bias + (np.asarray(counts, dtype=np.float64) / norm) @ self.weights[rows] if rows else self.bias.copy()
        z = z - z.max()
        out: npt.NDArray[np.float64] = z - math.log(float(np.exp(z).sum()))
        return out

    def blend(
        self, classes: Sequence[str], e5_logits: npt.NDArray[np.float64], prepared: str
    ) -> npt.NDArray[np.float64]:
        """The probabilities of ``classes`` (a head's, each one the n-grams know) from the e5 head's
        logits over them and the text's n-grams."""
        a = e5_logits - e5_logits.max()
        a = a - math.log(float(np.exp(a).sum()))
        mine = self.log_probabilities(prepared)
        b = np.array([mine[self.classes.index(c)] for c in classes])
        z = (1.0 - self.weight) * a + self.weight * b
        p = np.exp(z - z.max())
        out: npt.NDArray[np.float64] = p / p.sum()
        return out
