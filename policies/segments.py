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
puts the kept segments back together with their speaker labels, in order. Past ``MAX_SEGMENTS``
sentences the units are the segments, and past that many units, runs of units: a long
conversation is never judged as one fact. Linear in the text's length. Pure and deterministic.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import NamedTuple

from memwarden.policies.quality_rules import CJK, STRUCTURED_PREFIXES

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
# (time), then a colon. Names: a word or two in Latin letters, or up to 8 CJK characters — or two
# such runs joined by a hyphen or a middle dot (a role and a name, ``值班-陈``; ``阿卜杜·热合曼``).
_LABEL = re.compile(
    r"[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*)?"
    r"(?:\*\*|__)?"
    rf"(?P<name>[A-Za-z][\w'’.\-]{{0,20}}(?: [A-Za-z][\w'’.\-]{{0,20}})?|[{CJK}]{{1,8}}(?:[-·・][{CJK}]{{1,8}})?)"
    r"(?:\*\*|__)?[ \t]*(?:\([^)\n]{1,25}\)[ \t]*)?[:：](?:\*\*|__)?[ \t]*"
)
_STRUCTURED = frozenset(p.casefold() for p in STRUCTURED_PREFIXES)
_OWN_LINE = re.compile(r"[ \t]*(?:#{1,6}[ \t]|[-*+•][ \t]|\d{1,3}[.)][ \t])")  # heading, list item

# Sentence ends: CJK marks (no space needed), or . ! ? … and closing quotes before whitespace.
_END = re.compile(rf"[。！？]+[\"'”’」』）)]*|[!?…]+[\"'”’」』)]*(?=\s|$|[{CJK}])|\.(?:\.\.)?[\"'”’)]*(?=\s)")
_PROTECTED = re.compile(
    r"```.*?(?:```|\Z)|"  # a fenced code block
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
# In the statement before a question, only words that make it a question themselves.
_ZH_QUESTION_LEAD = re.compile(r"吗|是否|是不是|要不要|能不能|可不可以|有没有|为什么|怎么办|还是")
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
    if name.casefold() in _STRUCTURED or name.casefold() in ("http", "https", "ftp") or len(name) == 1:
        return None
    return m.end(), name


def speaker(turn: str) -> tuple[str | None, str]:
    """The speaker's name of a one-line turn that starts with a label ("Sam: …", "**Sam**: …"), and
    the turn after the label; (None, the turn) when it has none."""
    found = _label(turn, 0, len(turn))
    return (found[1], turn[found[0] :]) if found else (None, turn)


def _lines(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def units(text: str) -> list[Unit]:
    """The text's turns (a transcript) or paragraphs, headings, list items and records. A fenced
    code block (```) stays whole inside the unit it is in: no labels, headings or list items in it."""
    lines = [(s, e) for s, e in _lines(text) if text[s:e].strip()]
    fenced = _fenced_lines(text, lines)
    labels = {s: None if s in fenced else _label(text, s, e) for s, e in lines}
    names = [lab[1].casefold() for lab in labels.values() if lab is not None]
    # A transcript: a speaker who speaks twice or more (key: value lines — a config, headers, a
    # form — name each key once), and at least a third of the lines labelled (a "Note: …" line
    # inside a long paragraph is not a turn).
    transcript = len(names) >= 2 and len(set(names)) < len(names) and len(names) * 3 >= len(lines)
    out: list[Unit] = []
    previous_end = -2
    for start, end in lines:
        label = labels[start] if transcript else None
        blank_before = text.count("\n", previous_end, start) > 1 if previous_end >= 0 else True
        if start in fenced and out:  # inside a fence: the unit goes on
            last = out[-1]
            out[-1] = last._replace(end=end)
        elif label is not None:
            out.append(Unit(start, label[0], end, label[1]))
        elif _OWN_LINE.match(text, start, end) or _record(text, start, end) or blank_before or not out:
            out.append(Unit(start, start, end, None))
        else:  # the paragraph or the turn goes on
            last = out[-1]
            out[-1] = last._replace(end=end)
        previous_end = end
    return out


def _fenced_lines(text: str, lines: list[tuple[int, int]]) -> set[int]:
    """Starts of the lines inside a fenced code block, its closing fence included (the opening
    line belongs to the unit before it, or starts one)."""
    inside, out = False, set()
    for start, end in lines:
        fence = text[start:end].lstrip().startswith("```")
        if inside:
            out.add(start)
            if fence:
                inside = False
        elif fence:
            inside = True
    return out


def _record(text: str, start: int, end: int) -> bool:
    m = _LABEL.match(text, start, end)
    return m is not None and m.group("name").casefold() in _STRUCTURED


def _sentence_ends(text: str, start: int, end: int, limit: int) -> list[int]:
    """Offsets where a sentence of ``text[start:end]`` ends (at most ``limit``). Linear: the
    protected spans are walked once in order, the word before a period looked for in the 32
    characters before it."""
    protected = [(m.start(), m.end()) for m in _PROTECTED.finditer(text, start, end)]
    ends: list[int] = []
    p = 0
    for m in _END.finditer(text, start, end):
        cut = m.end()
        while p < len(protected) and protected[p][1] <= m.start():
            p += 1
        if p < len(protected) and protected[p][0] <= m.start():
            continue
        mark = text[m.start()]
        if mark == ".":
            word = _WORD_BEFORE.search(text, max(start, m.start() - 32), m.start())
            before = word.group(1).casefold() if word else ""
            if before.rstrip(".") in _ABBREVIATIONS or (len(before) == 1 and before.isalpha()):
                continue
            if not _NEXT_START.match(text, cut, end):  # a lower-case word follows: not an end
                continue
        if cut < end:
            ends.append(cut)
            if len(ends) >= limit:
                break
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
        if not _ZH_QUESTION.search(question) or _ZH_QUESTION_LEAD.search(lead) or len(_CJK_CHAR.findall(lead)) < 6:
            return None
    else:
        if cut.group().strip() in (",", "，", ":", "：") and not _EN_QUESTION_START.match(question):
            return None
        if _EN_QUESTION_LEAD.search(lead) or len(lead.split()) < 5 or "?" in lead:
            return None
    return start + cut.end()


def split(text: str) -> list[Segment]:
    """The segments of ``text``: every non-blank part of it in exactly one segment, in order.
    Past ``MAX_SEGMENTS`` sentences, the units themselves are the segments (whole turns or
    paragraphs), and past that many units, runs of consecutive units: a long conversation is never
    judged as one fact. Linear in the text's length."""
    found = units(text)
    out: list[Segment] = []
    for index, unit in enumerate(found):
        pos = unit.body
        for cut in [*_sentence_ends(text, unit.body, unit.end, MAX_SEGMENTS + 1), unit.end]:
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
            return _unit_segments(text, found)
    return out or [Segment(*_strip(text, 0, len(text)), 0, None)]


def _unit_segments(text: str, found: list[Unit]) -> list[Segment]:
    """One segment a unit — or, past MAX_SEGMENTS units, one a run of consecutive units."""
    per = -(-len(found) // MAX_SEGMENTS)  # units a segment, rounded up
    out = []
    for first in range(0, len(found), per):
        group = found[first : first + per]
        s, e = _strip(text, group[0].body if per == 1 else group[0].start, group[-1].end)
        if s < e:
            # A run of several units has no unit of its own (-1): such an item is never trimmed.
            out.append(Segment(s, e, first if per == 1 else -1, group[0].speaker if per == 1 else None))
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
    all_units = units(text)
    kept: dict[int, list[Segment]] = {}
    for segment, wanted in zip(segments, keep, strict=True):
        if wanted:
            kept.setdefault(segment.unit, []).append(segment)
    parts: list[str] = []
    for index in sorted(kept):
        unit = all_units[index]
        pieces = kept[index]
        body = text[pieces[0].start : pieces[0].end]
        for before, after in itertools.pairwise(pieces):
            gap = text[before.end : after.start]
            joint = gap if gap.isspace() else (" " if not _CJK_CHAR.match(text, after.start) else "")
            body += joint + text[after.start : after.end]
        if parts:  # the separator the unit had before it: a line break or a blank line
            before_unit = text[all_units[index - 1].end : unit.start] if index > 0 else "\n"
            parts.append("\n\n" if before_unit.count("\n") > 1 else "\n")
        # The unit's own beginning: its speaker label, or its indentation or list marker.
        parts.append(text[unit.start : pieces[0].start] + body)
    return "".join(parts)
