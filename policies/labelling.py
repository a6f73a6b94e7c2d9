"""An item's labels and final tags: the client's ``topic:``/``stage:`` where the vocabulary knows
them, else inferred (the learned layer from the item's vector, else the lexicons); the client's own
tags beside them. Pure; called by :class:`~memwarden.policies.pipeline.Pipeline` for every kept item.

* A ``topic:``/``stage:`` tag whose value the vocabulary does not know (``topic:homelab``) is the
  client's own tag: kept as sent, never a reason to refuse the memory; memwarden's label beside it
  is inferred. A second known value (``topic:code`` beside ``topic:infra``) is dropped: a memory
  carries one label of each, and a filter on the other would find it.
* A fact about a person never gets an engineering topic (:func:`people_apart`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memwarden.policies.facts import statement_kind
from memwarden.policies.labels import ENGINEERING, LabelClassifier, LabelError, Labels
from memwarden.policies.tags import LABEL_KEYS, canonicalize_tags, split_tag, tag_value

if TYPE_CHECKING:  # numpy and the model: only where the learned layer is on (the `local` extra)
    from memwarden.policies.learned import LearnedLayer


def names_a_label(classifier: LabelClassifier, tag: str) -> bool:
    """Whether ``tag`` is a topic/stage tag whose value the vocabulary knows (or an alias)."""
    split = split_tag(tag)
    return split is not None and split[0] in LABEL_KEYS and not isinstance(classifier.resolve(*split), LabelError)


def people_apart(classifier: LabelClassifier, topic: str, prepared: str, hits: dict[str | int, int] | None) -> str:
    """The learned ``topic``, unless it puts a fact about a person in an engineering topic: the text
    states something about someone (``policies/facts.py``) and has words of people's lives
    (health, diet, family, pets, hobbies) and none of engineering. (The other way round is left to
    the model: the engineering lexicons hold everyday words — "user", "preferences", "emoji" —
    that would pull facts about people out of ``personal``.)"""
    if topic not in ENGINEERING:
        return topic
    scores = classifier.topic_scores(prepared, hits)
    personal = scores.get("personal", 0.0) > 0 and not any(scores.get(t, 0.0) for t in ENGINEERING)
    # …and a statement about someone ("my wife is pregnant"), not engineering text that uses a
    # word of people's lives ("the parent process's children").
    if personal and statement_kind(prepared) in ("self", "person", "named"):
        return "personal"
    return topic


def label(
    classifier: LabelClassifier,
    learned: LearnedLayer | None,
    separator: str,
    prepared: str,
    tags: Sequence[str],
    hits: dict[str | int, int] | None = None,
    vector: Any = None,
) -> tuple[Labels, tuple[str, ...]]:
    """The item's labels and its final tags: memwarden's topic and stage first, then the client's."""
    canonical = canonicalize_tags(tags, separator=separator)
    chosen: dict[str, str] = {}  # label key -> the client tag that names a known value
    for tag in canonical:
        split = split_tag(tag)
        if split is not None and split[0] in LABEL_KEYS and split[0] not in chosen and names_a_label(classifier, tag):
            chosen[split[0]] = tag
    labels = classifier.classify(
        prepared,
        topic=tag_value([chosen["topic"]], "topic") if "topic" in chosen else None,
        stage=tag_value([chosen["stage"]], "stage") if "stage" in chosen else None,
        hits=hits,
    )
    assert not isinstance(labels, LabelError)  # only known values and aliases were given
    if vector is not None and learned is not None:
        if labels.topic_source not in ("client", "alias"):
            topic, confidence = learned.topic(vector, prepared)
            topic = people_apart(classifier, topic, prepared, hits)
            labels = labels._replace(topic=topic, topic_source="learned", confidence=confidence)
        if labels.stage_source not in ("client", "alias"):
            stage, _ = learned.stage(vector)
            labels = labels._replace(stage=stage, stage_source="learned")
    label_tags = (f"topic{separator}{labels.topic}", f"stage{separator}{labels.stage}")
    others = [t for t in canonical if t not in label_tags and not names_a_label(classifier, t)]
    return labels, (*label_tags, *others)
