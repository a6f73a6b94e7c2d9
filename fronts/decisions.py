"""What every front says of a write's verdicts besides its dialect's answer: the
``X-Warden-Decisions`` header, the count of each verdict."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memwarden.policies.judgement import Judgement

HEADER = b"x-warden-decisions"


def decisions_header(judgements: Sequence[Judgement]) -> tuple[bytes, bytes]:
    """``X-Warden-Decisions: {"store": 2, "reject": 1}``: how many items got each verdict."""
    counts: dict[str, int] = {}
    for j in judgements:
        counts[j.verdict] = counts.get(j.verdict, 0) + 1
    return HEADER, json.dumps(counts, separators=(",", ":")).encode()
