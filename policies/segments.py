"""Segments: an item's text cut into the pieces the quality rules judge one by one.

Agents retain whole conversations and documents, not one tidy fact an item. A question, a request
or a greeting next to a fact must not sink the fact, so the text is cut before it is judged:

1. **Units** — speaker turns when the text is a transcript (``Alice: …``, ``User:``/``Assistant:``,
   ``[10:02] 张伟：…``, ``**Bob**: …``, ``Carol (10:02 AM): …``; a line without a label continues the
   turn above it), otherwise paragraphs; a markdown heading, a list item and a structured record
   (``decision: …``) are units of their own.
2. **Sentences** within a unit, Chinese and English: after ``。！？!?…`` and after a ``.`` that
   ends a sentence — not inside a URL, a number (``3.5``, ``1.2.3``), an abbreviation (``e.g.``,
   ``Dr.``), an initial or inline code.
3. **A trailing question** is cut from the statement it follows when it is a clause of its own
   ("We moved billing to Hetzner last week; does that affect the DNS?", "搞定了，我们决定用
   Postgres 16，你那边好了吗？"), so the statement is judged as a statement.

A segment is a span of the text (offsets), with its unit and the unit's speaker. :func:`trim`
puts the kept segments back together with their speaker labels, in order. Text that cannot be
cut sensibly — longer than ``MAX_TEXT`` or cut into more than ``MAX_SEGMENTS`` — is one segment.
Pure and deterministic.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import NamedTuple

from memwarden.policies.quality_rules import CJK, STRUCTURED_PREFIXES

MAX_TEXT = 200_000  # characters: longer text is judged as one segment
MAX_SEGMENTS = 2_000


class Unit(NamedTuple):
    """A turn, paragraph or line: ``start``–``end`` of the whole unit, ``body`` where its text
    starts after the speaker label (``start`` when it has none)."""

    start: int
    body: int
    end: int
    speaker: str | None


class Segment(NamedTuple):
    start: int
    end: int
    unit: int  # index into the units
    speaker: str | None


# A speaker label at the start of a line: an optional [time], an optional bold name, an optional
# (time), then a colon. Names: a word or two in Latin letters, or up to 8 CJK characters.
_LABEL = re.compile(
    r"[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*)?"
    r"(?:\*\*|__)?"
    rf"(?P<name>[A-Za-z][\w'’.\-]{{0,20}}(?: [A-Za-z][\w'’.\-]{{0,20}})?|[{CJK}]{{1,8}})"
    r"(?:\*\*|__)?[ \t]*(?:\([^)\n]{1,25}\)[ \t]*)?[:：](?:\*\*|__)?[ \t]*"
)
_STRUCTURED = frozenset(p.casefold() for p in STRUCTURED_PREFIXES)
_OWN_LINE = re.compile(r"[ \t]*(?:#{1,6}[ \t]|[-*+•][ \t]|\d{1,3}[.)][ \t])")  # heading, list item

# Sentence ends: CJK marks (no space needed), or . ! ? … and closing quotes before whitespace.
_END = re.compile(rf"[。！？]+[\"'”’」』）)]*|[!?…]+[\"'”’」』)]*(?=\s|$|[{CJK}])|\.(?:\.\.)?[\"'”’)]*(?=\s)")
_PROTECTED = re.compile(
    r"(?:https?://|www\.)\S*[^\s.,;:!?)\]」』]|`[^`\n]*`|\b\d+(?:\.\d+)+\b|\b[\w.+-]+@[\w-]+\.[\w.]+"
)
_ABBREVIATIONS = frozenset(
    """e.g i.e etc vs cf al approx mr mrs ms dr prof sr jr st mt no nos fig inc ltd co corp dept est
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun
    a.m p.m u.s u.k""".split()
)
_WORD_BEFORE = re.compile(r"([\w.]+)$")
_NEXT_START = re.compile(rf"\s*[\"'“‘(「]*([A-Z0-9{CJK}])")

# A trailing question clause: the boundary before it, and what makes the clause a question.
_QUESTION_END = re.compile(r"[?？][\"'”’」』)]*\s*$")
_CLAUSE_CUT = re.compile(r"(?:[;；]|\s[—–-]{1,2}\s|[,，:：])\s*")
_EN_QUESTION_START = re.compile(
    r"(?:does|do|did|is|are|was|were|can|could|should|would|will|have|has|any|anyone|anything|what|how|why|"
    r"when|where|who|which|right|ok|okay|thoughts|ideas|wdyt|you)\b",
    re.I,
)
_EN_QUESTION_LEAD = re.compile(
    r"^\s*(?:what|how|why|when|where|who|which|whose|do|does|did|is|are|was|were|can|could|should|would|will|"
    r"shall|may|might|have|has|any|anyone)\b|\bor\b",
    re.I,
)
_ZH_QUESTION = re.compile(
    r"吗|呢|么|吧|是否|是不是|怎么|什么|为什么|哪|几|多少|有没有|要不要|能不能|可不可以|如何|还是"
)
_CJK_CHAR = re.compile(f"[{CJK}]")


def _label(text: str, start: int, end: int) -> tuple[int, str] | None:
    """Where a speaker label at ``start`` ends and the speaker's name, if the line has one."""
    m = _LABEL.match(text, start, end)
    if m is None or m.end() >= end:
        return None
    name = m.group("name")
    if name.casefold() in _STRUCTURED or (name[0].isdigit()):
        return None
    return m.end(), name


def _lines(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def units(text: str) -> list[Unit]:
    """The text's turns (a transcript) or paragraphs, headings, list items and records."""
    lines = [(s, e) for s, e in _lines(text) if text[s:e].strip()]
    labels = {s: _label(text, s, e) for s, e in lines}
    names = [lab[1].casefold() for lab in labels.values() if lab is not None]
    # A transcript: two labelled lines or more, by two speakers (or one seen twice), and at least
    # a third of the lines labelled (a "Note: …" line inside a long paragraph is not a turn).
    transcript = len(names) >= 2 and len(names) * 3 >= len(lines)
    out: list[Unit] = []
    previous_end = -2
    for start, end in lines:
        label = labels[start] if transcript else None
        blank_before = text.count("\n", previous_end, start) > 1 if previous_end >= 0 else True
        if label is not None:
            out.append(Unit(start, label[0], end, label[1]))
        elif _OWN_LINE.match(text, start, end) or _record(text, start, end) or blank_before or not out:
            out.append(Unit(start, start, end, None))
        else:  # the paragraph or the turn goes on
            last = out[-1]
            out[-1] = last._replace(end=end)
        previous_end = end
    return out


def _record(text: str, start: int, end: int) -> bool:
    m = _LABEL.match(text, start, end)
    return m is not None and m.group("name").casefold() in _STRUCTURED


def _sentence_ends(text: str, start: int, end: int) -> list[int]:
    """Offsets where a sentence of ``text[start:end]`` ends."""
    protected = [(m.start(), m.end()) for m in _PROTECTED.finditer(text, start, end)]
    ends: list[int] = []
    for m in _END.finditer(text, start, end):
        cut = m.end()
        if any(a <= m.start() < b for a, b in protected):
            continue
        mark = text[m.start()]
        if mark == ".":
            word = _WORD_BEFORE.search(text, start, m.start())
            before = word.group(1).casefold() if word else ""
            if before.rstrip(".") in _ABBREVIATIONS or (len(before) == 1 and before.isalpha()):
                continue
            if not _NEXT_START.match(text, cut, end):  # a lower-case word follows: not an end
                continue
        if cut < end:
            ends.append(cut)
    return ends


def _question_cut(text: str, start: int, end: int) -> int | None:
    """Where a trailing question clause of the sentence ``text[start:end]`` starts, if it is a
    clause of its own after a statement; None otherwise."""
    sentence = text[start:end]
    if not _QUESTION_END.search(sentence):
        return None
    cuts = [m for m in _CLAUSE_CUT.finditer(sentence) if m.end() < len(sentence) - 1]
    if not cuts:
        return None
    cut = cuts[-1]
    lead, question = sentence[: cut.start()], sentence[cut.end() :]
    if _CJK_CHAR.search(question):
        if not _ZH_QUESTION.search(question) or _ZH_QUESTION.search(lead) or len(_CJK_CHAR.findall(lead)) < 6:
            return None
    else:
        if cut.group().strip() in (",", "，", ":", "：") and not _EN_QUESTION_START.match(question):
            return None
        if _EN_QUESTION_LEAD.search(lead) or len(lead.split()) < 5 or "?" in lead:
            return None
    return start + cut.end()


def split(text: str) -> list[Segment]:
    """The segments of ``text``: every non-blank part of it in exactly one segment, in order."""
    if len(text) > MAX_TEXT:
        return [Segment(0, len(text), 0, None)]
    out: list[Segment] = []
    for index, unit in enumerate(units(text)):
        pos = unit.body
        for cut in [*_sentence_ends(text, unit.body, unit.end), unit.end]:
            s, e = _strip(text, pos, cut)
            if s < e:
                q = _question_cut(text, s, e)
                if q is not None:
                    a, b = _strip(text, s, q)
                    out.append(Segment(a, b, index, unit.speaker))
                    s = q
                out.append(Segment(s, e, index, unit.speaker))
            pos = cut
            if len(out) > MAX_SEGMENTS:
                return [Segment(*_strip(text, 0, len(text)), 0, None)]
    return out or [Segment(*_strip(text, 0, len(text)), 0, None)]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def trim(text: str, segments: Sequence[Segment], keep: Sequence[bool]) -> str:
    """``text`` with only the segments ``keep`` says: each kept unit with its speaker label, its
    kept sentences in order, units apart as they were (a line or a blank line)."""
    all_units = units(text) if len(text) <= MAX_TEXT else [Unit(0, 0, len(text), None)]
    kept: dict[int, list[Segment]] = {}
    for segment, wanted in zip(segments, keep, strict=True):
        if wanted:
            kept.setdefault(segment.unit, []).append(segment)
    parts: list[str] = []
    previous: Unit | None = None
    for index in sorted(kept):
        unit = all_units[index] if index < len(all_units) else Unit(0, 0, len(text), None)
        pieces = kept[index]
        body = text[pieces[0].start : pieces[0].end]
        for before, after in itertools.pairwise(pieces):
            gap = text[before.end : after.start]
            body += (gap if gap.isspace() else (" " if not _CJK_CHAR.match(text, after.start) else "")) + text[
                after.start : after.end
            ]
        if previous is not None:
            parts.append("\n\n" if text.count("\n", previous.end, unit.start) > 1 else "\n")
        parts.append(text[unit.start : unit.body] + body)
        previous = unit
    return "".join(parts)
