"""policies/topic_grams.py: the topic head's n-gram reader, and how its word counts beside the e5 head's."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from memwarden.policies.injection_model import MAX_CHARS, NGRAMS, ngrams
from memwarden.policies.learned import Model
from memwarden.policies.topic_grams import FORM, TopicGrams

CLASSES = ["business", "infra", "personal"]


def reader(weight: float = 0.7, form: str = FORM, **extra: Any) -> TopicGrams:
    """A reader that knows two words, "kubectl" (infra) and "invoice" (business), and leans to
    ``personal`` when it knows nothing (its prior, as a trained reader's does)."""
    grams: dict[str, list[float]] = {}
    for word, row in (("kubectl", [0.0, 4.0, 0.0]), ("invoice", [4.0, 0.0, 0.0])):
        for g in ngrams(word):
            grams[g] = row
    obj = {"classes": CLASSES, "bias": [0.0, -0.5, 1.5], "grams": grams, "weight": weight, "form": form, **extra}
    return TopicGrams.from_json(obj)


def softmax(z: np.ndarray) -> np.ndarray:
    p = np.exp(z - z.max())
    return np.asarray(p / p.sum())


def test_the_words_decide_where_the_meaning_is_unsure() -> None:
    even = np.array([0.1, 0.0, 0.0])  # the e5 head leans to business, barely
    p = reader().blend(CLASSES, even, "ran kubectl rollout restart on the edge nodes")
    assert CLASSES[int(p.argmax())] == "infra"
    assert math.isclose(float(p.sum()), 1.0)


def test_a_text_the_reader_knows_nothing_of_keeps_the_e5_heads_answer() -> None:
    """Russian, say: not one n-gram known. Blended at a fixed weight, the reader's prior
    (``personal`` here, as the trained reader's) would pull it over."""
    logits = np.array([1.0, 0.0, 0.0])
    for text in ("Бухгалтерия закрывает квартал пятого апреля", "", " "):
        assert np.allclose(reader().blend(CLASSES, logits, text), softmax(logits))


def test_a_text_the_reader_knows_in_part_gets_part_of_its_weight() -> None:
    logits = np.array([1.0, 0.0, 0.0])
    whole = reader().blend(CLASSES, logits, "kubectl")
    part = reader().blend(CLASSES, logits, "kubectl and a long tail of words it never saw before today")
    assert whole[1] > part[1] > softmax(logits)[1]


def test_the_weight_is_the_share_of_the_readers_log_probabilities() -> None:
    logits = np.array([1.0, 0.0, 0.5])
    text = "invoice"
    assert np.allclose(reader(weight=0.0).blend(CLASSES, logits, text), softmax(logits))
    only_words = reader(weight=1.0).blend(CLASSES, logits, text)
    assert np.allclose(only_words, np.exp(reader().log_probabilities(text)))


def test_coverage_is_the_share_of_the_text_the_reader_knows() -> None:
    assert reader().read("invoice")[1] == pytest.approx(1.0)
    assert reader().read("qq zz")[1] == 0.0
    assert 0.3 < reader().read("invoice paid late by the client")[1] < 0.7


def test_a_head_over_fewer_classes_in_another_order_reads_only_those() -> None:
    """A deployment that drops a built-in topic: its head's classes, in the head's order."""
    p = reader().blend(["infra", "business"], np.array([0.0, 0.0]), "invoice")
    assert p.shape == (2,)
    assert p[1] > p[0]


def test_a_model_trained_on_other_n_grams_is_refused() -> None:
    with pytest.raises(ValueError, match="other n-grams"):
        reader(features={"ngrams": [3], "max_chars": MAX_CHARS})
    with pytest.raises(ValueError, match="another blend"):
        reader(form="log-probabilities")


def test_the_shipped_model_has_a_reader_over_the_heads_classes() -> None:
    from importlib.resources import files

    model = Model.loads(files("memwarden.policies").joinpath("learned_model.json").read_text(encoding="utf-8"))
    grams = model.topic_grams
    assert grams is not None
    assert set(grams.classes) == set(model.topic.classes)
    assert 0.0 < grams.weight < 1.0
    assert list(NGRAMS) == [2, 3, 4]
