"""Bank ids that look alike must be alike: invisible characters are refused, the joiners scripts
and emoji need are not."""

from __future__ import annotations

import pytest

from memwarden.policies.ids import bank_id_problem


@pytest.mark.parametrize(
    ("bank", "refused"),
    [
        ("Case\u200bBank", True),  # a zero-width space
        ("Case\u00adBank", True),  # a soft hyphen
        ("a\u3164b", True),  # a Hangul filler
        ("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", False),  # Persian needs its zero-width non-joiner
        ("team-\U0001f469\u200d\U0001f4bb", False),  # an emoji sequence's joiner
        ("CaseBank", False),
        ("Case\u200dBank", True),  # a joiner between Latin letters lists like "CaseBank"
        ("Case\ufe0fBank", True),
        ("a\u2800b", True),  # a blank Braille pattern
        ("\u2764\ufe0f-team", False),  # an emoji's variation selector
    ],
)
def test_a_bank_id_with_an_invisible_character_is_refused(bank: str, refused: bool) -> None:
    assert (bank_id_problem(bank) is not None) is refused
