"""Text clean-ups of model answers and of queries, written out by hand where a regular expression
tried at every position took time quadratic in the input: each gives exactly what the expression
gives (on stripped text, as its callers pass it), on every short text of the characters that
matter and on random longer ones."""

from __future__ import annotations

import itertools
import random
import re

from app.core.rules.dates import resolve_relative_date
from app.memory.learning.arguments import without_code_fence
from app.memory.learning.experience import without_trailing_parenthetical
from app.search.text.date_terms import relative_dates
from app.working_memory.guards import WM_PATH_LIKE_RE, path_likes

PARENTHETICAL = re.compile(r"\s*[(（][^)）]*[)）]$")
FENCES = re.compile(r"^```[a-zA-Z]*\s*|\s*```\s*$")


def test_a_trailing_parenthetical_is_cut_as_the_pattern_cuts_it() -> None:
    alphabet = "a (（)） \t"
    for length in range(7):
        for chars in itertools.product(alphabet, repeat=length):
            text = "".join(chars).strip()
            assert without_trailing_parenthetical(text) == PARENTHETICAL.sub("", text), text
    assert without_trailing_parenthetical("Approach (DOs)") == "Approach"
    assert without_trailing_parenthetical("(" * 5000 + ")") == ""


def test_code_fences_are_cut_as_the_pattern_cuts_them() -> None:
    rng = random.Random(5)
    pieces = ["`", "```", "json", "a", " ", "\n", "{", "}"]
    for _ in range(50_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10))).strip()
        assert without_code_fence(text) == FENCES.sub("", text), text
    assert without_code_fence('```json\n{"a": 1}\n```') == '{"a": 1}'


def test_paths_are_found_token_by_token_as_in_the_whole_text() -> None:
    rng = random.Random(9)
    pieces = ["a", "src", "/", ".", "py", "json", "-", "_", " ", "\n", "x.md"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert path_likes(text) == set(WM_PATH_LIKE_RE.findall(text)), text
    assert path_likes("see " + "." * 20_000 + " and app/main.py") == {"app/main.py"}


def test_chinese_relative_days_keep_their_meaning_with_bounded_numerals() -> None:
    assert relative_dates("我们三天前见过，两个星期后再见", _day()) == ["2023-05-05", "2023-05-22"]
    assert relative_dates("1" * 20_000 + "天后", _day()) == []  # no such count of days
    # A count past the calendar's range resolves to nothing (it raised, failing the request).
    assert relative_dates("99999999999天前，3000000天后，99999个月后", _day()) == []
    assert resolve_relative_date("9999 years ago", "2023-05-08") is None
    assert relative_dates("上周一三天后", _day()) == ["2023-05-01", "2023-05-11"]


def _day():
    from datetime import date

    return date(2023, 5, 8)
