"""app/search/text/literals.py against the regular expression it replaced: the longest literal at
each position, overlaps counted, from word starts (``(?<![^\\W_])``: after anything but a letter or
a digit, an underscore included) or anywhere."""

from __future__ import annotations

import random
import re

import pytest

from app.search.text.literals import count_literals

# Word characters and not, of many kinds: ASCII, accented and CJK letters, the underscore, digits
# that are not decimal (superscripts, fractions, Roman numerals), a combining mark, punctuation.
ALPHABET = "aab bc_ .-/é部署失败²½Ⅻ\u0301:'\n"


def by_regex(text: str, literals: list[str], word_start: bool) -> dict[str, int]:
    """The reference: one lookahead tried at every position, longest alternative first."""
    alternatives = "|".join(re.escape(t) for t in sorted(set(literals), key=len, reverse=True))
    pattern = re.compile(("(?<![^\\W_])" if word_start else "") + f"(?=({alternatives}))")
    found: dict[str, int] = {}
    for match in pattern.finditer(text):
        found[match.group(1)] = found.get(match.group(1), 0) + 1
    return found


def _random_case(rng: random.Random) -> tuple[str, list[str]]:
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))
    literals = []
    for _ in range(rng.randint(1, 5)):
        if text and rng.random() < 0.7:  # a piece of the text, so that it occurs
            start = rng.randrange(len(text))
            literals.append(text[start : start + rng.randint(1, 4)])
        else:
            literals.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 3))))
    return text, literals


@pytest.mark.parametrize("word_start", [True, False])
def test_counts_equal_the_regular_expression_on_random_texts(word_start: bool) -> None:
    rng = random.Random(20261128)
    for _ in range(20000):
        text, literals = _random_case(rng)
        expected = by_regex(text, literals, word_start)
        got = count_literals(text, literals, word_start=word_start)
        assert got == expected, (text, literals)
        assert list(got) == list(expected), (text, literals)  # first counted occurrence first


def test_longest_at_a_position_overlaps_and_word_starts() -> None:
    assert count_literals("visited revisit", ["visit", "visited"], word_start=True) == {
        "visited": 1
    }
    assert count_literals("aaa", ["aa"], word_start=False) == {"aa": 2}
    assert count_literals("aaa", ["aa"], word_start=True) == {"aa": 1}
    assert count_literals("xvisit ²visit -visit", ["visit"], word_start=True) == {"visit": 1}
    # an underscore joins words: the parts of a snake_case name start words
    assert count_literals("e_pipeline_4417", ["pipeline", "4417", "e"], word_start=True) == {
        "e": 1,
        "pipeline": 1,
        "4417": 1,
    }
    assert count_literals("部署失败，部署", ["部署", "部署失败"], word_start=False) == {
        "部署失败": 1,
        "部署": 1,
    }
    assert count_literals("anything", [""], word_start=False) == {}
