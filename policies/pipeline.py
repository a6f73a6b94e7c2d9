"""The retain pipeline's pure part: one item in, one judgement out; then dedup and conflicts.

The same code serves real writes, previews (``?dry_run=true``) and ``memwarden classify``: the
callers differ only in what they do with the result.

* :meth:`Pipeline.judge` — extract text, secrets (on the whole text), cut the text into segments
  (``policies/segments.py``) and judge each by the quality rules — the item is kept when any
  segment is, rejected only when every segment is noise — then labels and tags (from the kept
  segments), the hash and the topic key (an item of one segment only). ``forward="trim"`` makes the
  stored text the kept segments alone, speaker labels and order kept. Needs nothing but the item.
* :func:`~memwarden.policies.resolve.resolve` (its own module) — dedup and topic-key conflicts
  against the facts the caller gathered from the ledger: duplicate, review, supersede.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memwarden.policies.facts_answer import fact_question
from memwarden.policies.fastre import PatternSet
from memwarden.policies.injection import GATE_GROUPS, find_instructions, gated, severity
from memwarden.policies.judgement import (
    Forward,
    Judgement,
    SecretsMode,
    SegmentVerdict,
    Threat,
    Verdict,
    extract_text,
)
from memwarden.policies.labelling import label
from memwarden.policies.labels import LabelClassifier, Labels
from memwarden.policies.normalize import content_hash, content_hash_prepared
from memwarden.policies.quality import QualityFilter, QualityVerdict, prepare
from memwarden.policies.secrets import find_secrets, mask
from memwarden.policies.segments import Segment, split, trim
from memwarden.policies.topic_keys import TopicKey, derive_topic_key

if TYPE_CHECKING:  # numpy and the model: only where the learned layer is on (the `local` extra)
    from memwarden.policies.learned import Embed, LearnedLayer

# Text that may hold more than one segment: a line break, or a sentence end with text after it.
_MAYBE_SEGMENTS = re.compile(
    r"\n"  # lines: turns, paragraphs
    r"|[。！？!?…][\"'”’」』）)]*\s*\S"  # a sentence end with more text after it
    r"|\.[\"'”’)]*\s+\S"
    r"|(?:[;；,，:：—–]|\s-{1,2}\s)[^?？]*[?？]"  # a question after a clause: perhaps a statement before it
)


# Rules sure enough that the learned layer does not second-guess them: chatter, too short, a
# structured record or its fragment, a note of the conversation itself, a process under way and
# nothing else, an allow marker (decision, root cause, preference …).
SURE_RULES = frozenset(
    {
        "chatter",
        "length.too_short",
        "structured.fragment",
        "content.empty",
        "conversation_note",
        "progress.under_way",
    }
)


def _sure(rule: str) -> bool:
    return rule in SURE_RULES or rule.startswith("allow.")


def _replies(earlier: Segment, later: Segment) -> bool:
    """Whether ``later`` is another turn than ``earlier``, by someone else (when both are named)."""
    if earlier.unit == later.unit:
        return False
    return earlier.speaker is None or later.speaker is None or earlier.speaker.casefold() != later.speaker.casefold()


@dataclass
class Pipeline:
    """The policies of one deployment, compiled once."""

    quality: QualityFilter = field(default_factory=QualityFilter)
    labels: LabelClassifier = field(default_factory=LabelClassifier)
    tag_separator: str = ":"
    learned: LearnedLayer | None = None  # None: the rules alone decide
    embed_budget: int = 2048  # texts the learned layer embeds for one request (judge_many), at most
    # The installation's key: a rejected item's hash is keyed with it (HMAC-SHA256), so that a weak
    # secret inside a guessable sentence cannot be recovered from the ledger offline. None: bare
    # SHA-256 (the command line's classify, which stores nothing).
    hash_key: bytes | None = None
    # Instructions aimed at the agent looked for in every kept item (the judgement's ``threat``);
    # False only to measure what that costs (bench/policy_throughput.py).
    injection: bool = True
    _rules_only: Pipeline | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Quality rules, label lexicons and the injection rules' triggers in one automaton: one scan
        # per text serves all three.
        shared = PatternSet({**self.quality.groups, **self.labels.groups, **(GATE_GROUPS if self.injection else {})})
        self.quality.share(shared)
        self.labels.share(shared)
        self._scan = shared.scan

    def judge(
        self,
        index: int,
        content: Any,
        tags: Sequence[str] = (),
        *,
        secrets: SecretsMode = "reject",
        forward: Forward = "whole",
        embed: Embed | None = None,
        before: str | None = None,
    ) -> Judgement:
        """One item's judgement (see :meth:`_judge`); a rejected item's hash keyed with
        :attr:`hash_key`. ``before``: the turn before this item in its conversation, if known (a
        short reply answering its question is a fact)."""
        judged = self._judge(index, content, tags, secrets=secrets, forward=forward, embed=embed, before=before)
        if judged.verdict == "reject" and judged.content_hash and self.hash_key is not None:
            keyed = hmac.new(self.hash_key, bytes.fromhex(judged.content_hash), hashlib.sha256).hexdigest()
            return judged._replace(content_hash=keyed)
        return judged

    def _judge(
        self,
        index: int,
        content: Any,
        tags: Sequence[str] = (),
        *,
        secrets: SecretsMode = "reject",
        forward: Forward = "whole",
        embed: Embed | None = None,
        before: str | None = None,
    ) -> Judgement:
        """One item's judgement. ``embed`` replaces the learned layer's embedding function (see
        :meth:`judge_many`, which embeds a whole request in one batch)."""
        text, non_text = extract_text(content)
        text = text.strip()
        if not text:
            if non_text:
                # Images and files cannot be judged by rules: passed through, recorded as unfiltered,
                # labelled like any memory (the client's labels, else the fallback topic).
                labels, final_tags = self._labels("", tags)
                return Judgement(
                    index,
                    "store",
                    "unfiltered.non_text",
                    "no text to judge; non-text blocks pass",
                    topic=labels.topic,
                    stage=labels.stage,
                    tags=final_tags,
                    non_text_blocks=non_text,
                )
            return Judgement(index, "reject", "content.empty", "empty content")

        prepared = prepare(text)
        found = find_secrets(text, folded=prepared)
        kinds = tuple(dict.fromkeys(f.kind for f in found))
        verdict: Verdict = "store"
        if found:
            masked = mask(text, found)
            if secrets == "reject":
                return Judgement(
                    index,
                    "reject",
                    f"secret.{kinds[0]}",
                    f"contains a secret ({', '.join(kinds)})",
                    text=masked,
                    content_hash=content_hash(text),
                    secrets=kinds,
                )
            text, verdict = masked, "redact"
            prepared = prepare(text)

        segments = split(text) if _MAYBE_SEGMENTS.search(text) else None
        if segments is not None and len(segments) > 1:
            return self._judge_segments(index, text, segments, tags, verdict, kinds, non_text, forward, embed, before)
        hits = self._scan(prepared)
        quality = self.quality.assess(
            text, prepared=prepared, hits=hits, name_facts=self.learned is not None, before=before
        )
        vector = None
        if self.learned is not None and (quality.keep or not _sure(quality.rule)):  # one embedding an item
            vector = (embed or self.learned.embed)([text])[0]
            if not _sure(quality.rule):
                quality = self._learned_verdict(quality, float(self.learned.keep_probability(vector[None])[0]))
        digest = content_hash_prepared(prepared)
        if not quality.keep:
            return Judgement(
                index, "reject", quality.rule, quality.reason, text=text, content_hash=digest, secrets=kinds
            )
        key = derive_topic_key(prepared)
        kept = self._kept(
            index,
            text,
            digest,
            prepared,
            hits,
            tags,
            verdict,
            kinds,
            non_text,
            quality.rule,
            quality.reason,
            vector,
            key,
            text_vector=vector,  # the store may use it rather than embed the same text again
            gate=hits,
        )
        if quality.rule == "allow.answer" and before:
            # The question goes with its answer (the question's sentence alone, secrets masked), and
            # is part of what makes it a duplicate: "27" to "how old r u" is not "27" to "what floor?".
            asked = fact_question(mask(before, find_secrets(before)))
            if asked is not None:
                return kept._replace(question=asked, content_hash=content_hash(f"{asked}\n{text}"))
        return kept

    @property
    def rules_only(self) -> Pipeline:
        """This pipeline without its learned layer (built once): for sweeps over a whole bank,
        where an embedding per memory would cost seconds (the cleanup report)."""
        if self.learned is None:
            return self
        if self._rules_only is None:  # a shallow copy: the same compiled rules, no re-sharing
            rules = copy.copy(self)
            rules.learned = None
            self._rules_only = rules
        return self._rules_only

    def judge_many(
        self,
        entries: Sequence[tuple[Any, Sequence[str]]],
        *,
        secrets: SecretsMode = "reject",
        forward: Forward = "whole",
        before: Sequence[str | None] | None = None,
    ) -> list[Judgement]:
        """Every item's judgement, ``entries`` being (content, tags) pairs (``before``: each one's
        turn before it, if known); with the learned layer, every text of the request embedded in one
        batch (an embedder is several times faster per text batched). Two passes: the first learns
        which texts the judgements embed (which does not depend on the vectors), the second judges
        with them.

        At most :attr:`embed_budget` texts are embedded for one request (a few seconds of a core):
        the items, in the request's order, whose texts fit; the rest are judged by the rules alone."""
        asked = list(before) if before is not None else [None] * len(entries)
        if len(asked) != len(entries):
            raise ValueError("before: one turn (or None) for each entry")
        learned = self.learned
        if learned is None:
            return [
                self.judge(i, c, t, secrets=secrets, forward=forward, before=b)
                for i, ((c, t), b) in enumerate(zip(entries, asked, strict=True))
            ]
        wanted: list[str] = []

        def record(texts: Sequence[str]) -> Any:
            wanted.extend(texts)
            return learned.zeros(len(texts))

        chosen: dict[str, None] = {}
        within: list[bool] = []
        for i, ((content, tags), b) in enumerate(zip(entries, asked, strict=True)):
            wanted.clear()
            self.judge(i, content, tags, secrets=secrets, forward=forward, embed=record, before=b)
            new = [t for t in dict.fromkeys(wanted) if t not in chosen]
            within.append(len(chosen) + len(new) <= self.embed_budget)
            if within[-1]:
                chosen.update(dict.fromkeys(new))
        unique = list(chosen)
        found = dict(zip(unique, learned.embed(unique), strict=True)) if unique else {}

        def cached(texts: Sequence[str]) -> Any:
            return learned.stack([found[t] for t in texts])

        return [
            self.judge(i, c, t, secrets=secrets, forward=forward, embed=cached, before=b)
            if ok
            else self.rules_only.judge(i, c, t, secrets=secrets, forward=forward, before=b)
            for i, ((c, t), ok, b) in enumerate(zip(entries, within, asked, strict=True))
        ]

    def _learned_verdict(
        self, quality: QualityVerdict, p_keep: float, threshold: float | None = None
    ) -> QualityVerdict:
        """The learned layer's keep/reject where no rule is sure (see :func:`_sure`); noise below
        ``threshold`` (default: the model's for an item)."""
        assert self.learned is not None
        if p_keep >= (self.learned.threshold if threshold is None else threshold):
            if quality.keep:
                return quality
            return QualityVerdict(
                True, "learned.keep", f"worth keeping (learned, {p_keep:.2f}); {quality.rule} yielded"
            )
        agrees = f"; {quality.rule} agrees" if not quality.keep else ""
        return QualityVerdict(False, "learned.noise", f"noise (learned: keep {p_keep:.2f}){agrees}")

    def _kept(
        self,
        index: int,
        text: str,
        digest: str,
        prepared: str,
        hits: dict[str | int, int],
        tags: Sequence[str],
        verdict: Verdict,
        kinds: tuple[str, ...],
        non_text: int,
        rule: str,
        reason: str,
        vector: Any,
        key: TopicKey | None,
        segments: tuple[SegmentVerdict, ...] = (),
        trimmed: bool = False,
        text_vector: Any = None,
        gate: dict[str | int, int] | None = None,
    ) -> Judgement:
        """The judgement of an item worth keeping: labels (the client's, else the learned layer's
        from ``vector``, else the rules'), tags, the topic key, and the instructions aimed at the
        agent in ``text`` (``gate``: a scan of all of it, whose hits say which injection rules run)."""
        labels, final_tags = self._labels(prepared, tags, hits, vector)
        threat = None
        if self.injection:
            found = find_instructions(text, wanted=gated(gate if gate is not None else hits))
            if sev := severity(found):
                threat = Threat(sev, tuple(dict.fromkeys(f.rule for f in found)))
        if verdict == "redact":
            rule, reason = f"secret.{kinds[0]}", f"secret masked ({', '.join(kinds)}); {reason}"
        return Judgement(
            index,
            verdict,
            rule,
            reason,
            text=text,
            content_hash=digest,
            topic=labels.topic,
            stage=labels.stage,
            topic_key=key.key if key else None,
            cardinality=key.cardinality if key else None,
            tags=final_tags,
            secrets=kinds,
            confidence=labels.confidence,
            non_text_blocks=non_text,
            segments=segments,
            trimmed=trimmed,
            vector=text_vector,
            threat=threat,
        )

    def _judge_segments(
        self,
        index: int,
        text: str,
        segments: list[Segment],
        tags: Sequence[str],
        verdict: Verdict,
        kinds: tuple[str, ...],
        non_text: int,
        forward: Forward,
        embed: Embed | None = None,
        before: str | None = None,
    ) -> Judgement:
        """An item of several segments: each judged alone (a turn's first segment after the turn
        before it: an answer to its question is a fact); kept when any is worth keeping."""
        parts = [text[seg.start : seg.end] for seg in segments]
        verdicts = []
        for i, part in enumerate(parts):
            prepared = prepare(part)
            hits = self._scan(prepared)
            # The turn before: across turns (units) only, not between one turn's sentences, and not
            # the same speaker's (a double text: "Mia: where do you live now?" "Mia: Porto").
            asked = before if i == 0 else parts[i - 1] if _replies(segments[i - 1], segments[i]) else None
            verdicts.append(
                self.quality.assess(
                    part,
                    prepared=prepared,
                    hits=hits,
                    name_facts=self.learned is not None,
                    before=asked,
                )
            )
        vectors = None
        if self.learned is not None:
            # Segments a sure rule took as noise need no embedding (their verdict stands).
            wanted = [i for i, q in enumerate(verdicts) if q.keep or not _sure(q.rule)]
            # Under trim a segment judged noise is cut from a stored item: the model must be surer.
            bar = self.learned.trim_threshold if forward == "trim" else self.learned.threshold
            if wanted:
                got = (embed or self.learned.embed)([parts[i] for i in wanted])
                p_keep = self.learned.keep_probability(got)
                for i, p in zip(wanted, p_keep, strict=True):
                    if not _sure(verdicts[i].rule):
                        verdicts[i] = self._learned_verdict(verdicts[i], float(p), bar)
                vectors = dict(zip(wanted, got, strict=True))
        judged = tuple(
            SegmentVerdict(seg.start, seg.end, seg.speaker, q.keep, q.rule, part)
            for seg, q, part in zip(segments, verdicts, parts, strict=True)
        )
        kept = [i for i, v in enumerate(judged) if v.keep]
        noise: dict[str, int] = {}
        for v in judged:
            if not v.keep:
                noise[v.rule] = noise.get(v.rule, 0) + 1
        said = ", ".join(f"{rule} {n}" for rule, n in noise.items())
        if not kept:
            return Judgement(
                index,
                "reject",
                max(noise, key=lambda rule: noise[rule]),
                f"every one of its {len(judged)} segments is noise ({said})",
                text=text,
                content_hash=content_hash(text),
                secrets=kinds,
                segments=judged,
            )
        whole = forward == "whole" or len(kept) == len(judged) or any(seg.unit < 0 for seg in segments)
        # Trim removes whole units (a turn, a paragraph) whose segments are all noise: a kept
        # sentence keeps its turn's other sentences, the context a fact is told in.
        kept_units = {segments[i].unit for i in kept}
        stored = text if whole else trim(text, segments, [seg.unit in kept_units for seg in segments])
        kept_text = prepare(" ".join(parts[i] for i in kept))
        rule = next((judged[i].rule for i in kept if judged[i].rule != "keep.default"), "keep.default")
        reason = f"{len(kept)} of {len(judged)} segments kept" + (f"; noise: {said}" if noise else "")
        vector = (
            self.learned.mean(self.learned.stack([vectors[i] for i in kept]))
            if self.learned is not None and vectors is not None
            else None
        )
        return self._kept(
            index,
            stored,
            content_hash(stored),
            kept_text,
            self._scan(kept_text),
            tags,
            verdict,
            kinds,
            non_text,
            rule,
            reason,
            vector,
            None,  # a topic key names one fact: an item of several segments has none
            judged,
            stored != text,
            # The segments leave out what lies between them (speaker labels, line breaks): the
            # injection rules' triggers are looked for in the whole stored text.
            gate=self._scan(prepare(stored)) if self.injection else None,
        )

    def _labels(
        self, prepared: str, tags: Sequence[str], hits: dict[str | int, int] | None = None, vector: Any = None
    ) -> tuple[Labels, tuple[str, ...]]:
        """Topic, stage and the final tag list (:func:`~memwarden.policies.labelling.label`)."""
        return label(self.labels, self.learned, self.tag_separator, prepared, tags, hits, vector)
