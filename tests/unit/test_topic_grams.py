"""policies/topic_grams.py: the topic head's n-gram reader, and how its word counts beside the e5 head's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from memwarden.policies.injection_model import ngrams
from memwarden.policies.learned import Model
from memwarden.policies.topic_grams import TopicGrams


def reader(weight: float = 0.7) -> TopicGrams:
    """A reader that knows two words: "kubectl" (infra) and "invoice" (business)."""
    grams: dict[str, list[float]] = {}
    for word, row in (("kubectl", [0.0, 4.0]), ("invoice", [4.0, 0.0])):
        for g in ngrams(word):
            grams[g] = row
    return TopicGrams.from_json(
        {"classes": ["business", "infra"], "bias": [0.0, 0.0], "grams": grams, "weight": weight}
    )


def test_the_words_decide_where_the_meaning_is_unsure() -> None:
    even = np.array([0.1, 0.0])  # the e5 head leans to business, barely
    p = reader().blend(["business", "infra"], even, "ran kubectl rollout restart on the edge nodes")
    assert p.argmax() == 1
    assert math.isclose(float(p.sum()), 1.0)


def test_a_sure_meaning_is_not_overruled_by_an_unknown_text() -> None:
    sure = np.array([6.0, 0.0])
    p = reader().blend(["business", "infra"], sure, "qq zz")  # no n-gram of either word
    assert p.argmax() == 0
    assert p[0] > 0.8  # the blend's confidence: an unsure reader tempers it


def test_the_weight_is_the_share_of_the_readers_log_probabilities() -> None:
    logits = np.array([1.0, 0.0])
    text = "invoice"
    alone = reader(weight=0.0).blend(["business", "infra"], logits, text)
    e5 = np.exp(logits - logits.max())
    assert np.allclose(alone, e5 / e5.sum())
    only_words = reader(weight=1.0).blend(["business", "infra"], logits, text)
    assert np.allclose(only_words, np.exp(reader().log_probabilities(text)))


def test_a_head_over_fewer_classes_reads_only_those() -> None:
    p = reader().blend(["infra"], np.array([0.0]), "invoice")
    assert p.tolist() == [1.0]


def test_the_shipped_model_has_a_reader_over_the_heads_classes() -> None:
    from importlib.resources import files

    model = Model.loads(files("memwarden.policies").joinpath("learned_model.json").read_text(encoding="utf-8"))
    assert model.topic_grams is not None
    assert set(model.topic_grams.classes) == set(model.topic.classes)
    assert 0.0 < model.topic_grams.weight < 1.0


@pytest.mark.parametrize("text", ["", " ", "\u200b"])
def test_an_empty_text_gets_the_bias_alone(text: str) -> None:
    p = np.exp(reader().log_probabilities(text))
    assert np.allclose(p, [0.5, 0.5])
