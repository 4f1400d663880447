"""The substring checks in front of the date patterns (app/search/text/date_terms.py) never change what
is found: every function gives what the bare patterns give, on texts built from date words,
their near misses, CJK date characters and the letters IGNORECASE folds to ASCII."""

from __future__ import annotations

import random
from datetime import date

import pytest

from app.core.rules.dates import resolve_relative_date
from app.search.text import date_terms as terms

PIECES = [
    "yesterday", "YESTERDAY", "Today", "tonight", "last night", "la\u017ft night", "n\u0130ght",
    "n\u0131ght", "tomorrow", "last week", "next Month", "last friday", "3 days ago", "in two weeks",
    "a year ago", "da", "wee", "mont", "7 May 2023", "May 7th, 2023", "2023-05-07", "2023-13-40",
    "DEC 25", "De\u212a", "sept. 3", "31 Feb", "2023年5月7日", "5月7号", "昨天", "上周二", "三天前",
    "明年", "下个星期", "礼拜", "月", "晚", "-", "--", "07", "2023", " ", ", ", ".", "\n", "abc", "密码是",
]  # fmt: skip


def bare_absolute(text: str, anchor: date | None) -> list[str]:
    found = [terms._day(int(y), int(m), int(d), anchor) for y, m, d in terms._ISO.findall(text)]
    found += [
        terms._day(int(y) if y else None, terms._month(m), int(d), anchor)
        for d, m, y in terms._DAY_MONTH.findall(text)
    ]
    found += [
        terms._day(int(y) if y else None, terms._month(m), int(d), anchor)
        for m, d, y in terms._MONTH_DAY.findall(text)
    ]
    found += [
        terms._day(int(y) if y else None, int(m), int(d), anchor)
        for y, m, d in terms._ZH_DATE.findall(text)
    ]
    return list(dict.fromkeys(d for d in found if d))


def bare_relative(text: str, said_on: date) -> list[str]:
    anchor = said_on.isoformat()
    found = [resolve_relative_date(m.group(0), anchor) for m in terms._EN_RELATIVE.finditer(text)]
    found += [resolve_relative_date(m.group(0), anchor) for m in terms._ZH_RELATIVE.finditer(text)]
    return list(dict.fromkeys(d for d in found if d))


def bare_without(text: str) -> str:
    for pattern in (terms._ISO, terms._DAY_MONTH, terms._MONTH_DAY, terms._ZH_DATE):
        text = pattern.sub(" ", text)
    return text


@pytest.mark.parametrize("seed", range(300))
def test_the_checks_change_nothing(seed: int) -> None:
    rng = random.Random(seed)
    text = "".join(rng.choice(PIECES) + rng.choice(["", " "]) for _ in range(rng.randint(0, 12)))
    said_on = date(2023, 5, 8)
    assert terms.absolute_dates(text, said_on) == bare_absolute(text, said_on)
    assert terms.relative_dates(text, said_on) == bare_relative(text, said_on)
    assert terms.without_dates(text) == bare_without(text)


def test_a_letter_ignorecase_folds_still_reaches_the_patterns() -> None:
    # A long s is "s" to IGNORECASE but not to str.lower(): "\u017fep" is September.
    assert terms.absolute_dates("cut on \u017fep 3 2022") == ["2022-09-03"]
    assert terms.without_dates("cut on \u017fep 3 2022").split() == ["cut", "on"]
