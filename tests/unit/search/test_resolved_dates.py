"""with_resolved_dates and written_day: relative dates carry the day they meant when said."""

from __future__ import annotations

from datetime import date

import pytest

from app.search.text.date_terms import day_written_beside, with_resolved_dates, written_day

SAID = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yesterday we adopted a dog", "yesterday (7 May 2023) we adopted a dog"),
        ("Yesterday we went", "Yesterday (7 May 2023) we went"),
        ("last Saturday was fun", "last Saturday (6 May 2023) was fun"),
        (
            "we met two days ago and today",
            "we met two days ago (6 May 2023) and today (8 May 2023)",
        ),
        ("last week was long", "last week (1 May 2023) was long"),
        ("in 3 days", "in 3 days (11 May 2023)"),
        ("昨天我们去了上海", "昨天（2023年5月7日）我们去了上海"),
        ("上周二开会", "上周二（2023年5月2日）开会"),
        ("nothing relative here, on 7 May 2023", "nothing relative here, on 7 May 2023"),
    ],
)
def test_relative_dates_are_followed_by_their_day(text: str, expected: str) -> None:
    assert with_resolved_dates(text, SAID) == expected


def test_resolving_twice_changes_nothing() -> None:
    once = with_resolved_dates("yesterday and 昨天 and last Saturday", SAID)
    assert with_resolved_dates(once, SAID) == once


def test_without_a_day_said_the_text_is_unchanged() -> None:
    assert with_resolved_dates("yesterday", None) == "yesterday"


def test_days_are_written_as_people_write_them() -> None:
    assert written_day("2023-05-07", chinese=False) == "7 May 2023"
    assert written_day("2024-12-25", chinese=True) == "2024年12月25日"


def test_a_day_beside_a_text_is_written_in_the_text_s_script() -> None:
    assert day_written_beside("2023-05-07", "we met at the café") == "7 May 2023"
    assert day_written_beside("2023-05-07", "我们昨天见面了") == "2023年5月7日"
    assert day_written_beside("2023-05-07", "meeting with 王伟 on Friday") == "2023年5月7日"
