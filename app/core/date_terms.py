"""Dates mentioned in free text, as ISO calendar days: the relative ones ("yesterday", "3 days
ago", "上周二") resolved against the day the text was said, the absolute ones ("7 May 2023",
"2023-05-07", "2023年5月7日") normalised. Search indexes and queries both speak ISO days, so
"yesterday" said on 2023-05-08 is found by a question about 7 May 2023. Pure."""

from __future__ import annotations

import re
from datetime import date

from app.core.dates import resolve_relative_date

_NUM = r"(?:\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_EN_RELATIVE = re.compile(
    r"\b(?:(?:the )?day (?:before yesterday|after tomorrow)|yesterday|today|tonight|tomorrow|last night"
    rf"|(?:last|next) (?:week|month|year)|last {_WEEKDAYS}|{_NUM} (?:day|week|month|year)s? ago"
    rf"|in {_NUM} (?:day|week|month|year)s?)\b",
    re.IGNORECASE,
)
# At most twelve numerals: tried at every position of a long run of digits, an unbounded run took
# time quadratic in its length (20 KB of digits: six seconds). No count of days is longer.
_ZH_NUM = r"[0-9零一二两三四五六七八九十]{1,12}"
_ZH_RELATIVE = re.compile(
    r"大前天|大后天|前天|昨天|昨日|昨晚|今天|今日|今晚|明天|明日|后天|上个月|上月|下个月|去年|前年|明年"
    r"|(?:上|这|本|下)个?(?:周|星期|礼拜)[一二三四五六日天]|(?:上|下)(?:周|星期|个星期|礼拜)"
    rf"|{_ZH_NUM}\s*个?(?:天|周|星期|礼拜|月|年)(?:之前|以前|前|之后|以后|后)"
)
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH_RE = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE}\.?,?(?:\s+(\d{{4}}))?\b", re.I
)
_MONTH_DAY = re.compile(
    rf"\b{_MONTH_RE}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(\d{{4}}))?\b", re.I
)
_ZH_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(\d{1,2})[日号]")


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower()[:3]))


def _day(year: int | None, month: int, day: int, anchor: date | None) -> str | None:
    year = year or (anchor.year if anchor else None)
    if year is None:
        return None
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def absolute_dates(text: str, anchor: date | None = None) -> list[str]:
    """ISO days written out in the text; a day without a year takes the anchor's year."""
    found: list[str | None] = [
        _day(int(y), int(m), int(d), anchor) for y, m, d in _ISO.findall(text)
    ]
    found += [
        _day(int(y) if y else None, _month(m), int(d), anchor)
        for d, m, y in _DAY_MONTH.findall(text)
    ]
    found += [
        _day(int(y) if y else None, _month(m), int(d), anchor)
        for m, d, y in _MONTH_DAY.findall(text)
    ]
    found += [
        _day(int(y) if y else None, int(m), int(d), anchor) for y, m, d in _ZH_DATE.findall(text)
    ]
    return list(dict.fromkeys(d for d in found if d))


def without_dates(text: str) -> str:
    """The text with its written-out dates removed (their parts are not search words)."""
    for pattern in (_ISO, _DAY_MONTH, _MONTH_DAY, _ZH_DATE):
        text = pattern.sub(" ", text)
    return text


def relative_dates(text: str, said_on: date) -> list[str]:
    """ISO days that the relative expressions of a text meant on the day it was said."""
    anchor = said_on.isoformat()
    found = [resolve_relative_date(m.group(0), anchor) for m in _EN_RELATIVE.finditer(text)]
    found += [resolve_relative_date(m.group(0), anchor) for m in _ZH_RELATIVE.finditer(text)]
    return list(dict.fromkeys(d for d in found if d))


def mentioned_dates(text: str, said_on: date | None) -> list[str]:
    """Every day a text mentions, relative expressions resolved when the saying day is known."""
    relative = relative_dates(text, said_on) if said_on is not None else []
    return list(dict.fromkeys([*absolute_dates(text, said_on), *relative]))
