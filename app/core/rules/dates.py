"""Relative dates: the calendar date an expression such as "yesterday", "3 days ago", "昨天" or
"上周二" meant at the time its message was written (English and Chinese)."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta

_WORD_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_DAY_OFFSETS = {
    **dict.fromkeys(
        (
            "today",
            "tonight",
            "now",
            "this morning",
            "this afternoon",
            "this evening",
            "今天",
            "今日",
            "今晚",
            "今早",
            "今儿",
        ),
        0,
    ),
    **dict.fromkeys(("yesterday", "last night", "昨天", "昨日", "昨晚", "昨儿"), -1),
    **dict.fromkeys(("day before yesterday", "前天", "前日"), -2),
    **dict.fromkeys(("tomorrow", "明天", "明日", "明早", "明晚"), 1),
    **dict.fromkeys(("day after tomorrow", "后天"), 2),
    "大前天": -3,
    "大后天": 3,
    **dict.fromkeys(("last week", "上周", "上星期", "上个星期", "上礼拜"), -7),
    **dict.fromkeys(("next week", "下周", "下星期", "下个星期", "下礼拜"), 7),
}
_MONTH_OFFSETS = {
    "last month": -1,
    "上个月": -1,
    "上月": -1,
    "next month": 1,
    "下个月": 1,
    "下月": 1,
    "last year": -12,
    "去年": -12,
    "前年": -24,
    "next year": 12,
    "明年": 12,
}
_UNITS = {
    "day": "day",
    "天": "day",
    "日": "day",
    "week": "week",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "month": "month",
    "月": "month",
    "year": "year",
    "年": "year",
}
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_SPAN_RE = re.compile(
    r"^([0-9零一二两三四五六七八九十]+)\s*个?(天|日|周|星期|礼拜|月|年)(之前|以前|前|之后|以后|后)$"
)
_ZH_WEEKDAY_RE = re.compile(r"^(上|这|本|下)个?(?:周|星期|礼拜)([一二三四五六日天])$")
_TIME_OF_DAY_RE = re.compile(
    r"\s+(?:morning|afternoon|evening|night)$|(?:早上|上午|中午|下午|晚上|夜里|凌晨|傍晚)$"
)


def resolve_relative_date(expression: str, message_time: str) -> str | None:
    """The ISO date that a relative expression ("yesterday", "3 days ago", "昨天", "上周") meant at message_time."""
    anchor = _message_date(message_time)
    text = " ".join(str(expression or "").casefold().split()).strip(" .,!?;。，！？；")
    text = text.removeprefix("the ")
    if text not in _DAY_OFFSETS and text not in _MONTH_OFFSETS:
        text = _TIME_OF_DAY_RE.sub("", text)
    if anchor is None or not text:
        return None
    try:
        resolved = _shifted(anchor, text)
    except (OverflowError, ValueError):
        return None  # a count that leaves the calendar ("3000000天后", "9999 years ago")
    return resolved.isoformat() if resolved else None


def _message_date(message_time: str) -> date | None:
    """The calendar date of the message, in the message's own time zone."""
    text = str(message_time or "").strip()
    try:
        return datetime.fromisoformat(text).date()
    except ValueError:
        pass
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def _shifted(anchor: date, text: str) -> date | None:
    if text in _DAY_OFFSETS:
        return anchor + timedelta(days=_DAY_OFFSETS[text])
    if text in _MONTH_OFFSETS:
        return _add_months(anchor, _MONTH_OFFSETS[text])
    if (match := re.match(r"^last (\w+)$", text)) and match.group(1) in _EN_WEEKDAYS:
        back = (anchor.weekday() - _EN_WEEKDAYS.index(match.group(1))) % 7 or 7
        return anchor - timedelta(days=back)
    if match := _ZH_WEEKDAY_RE.match(text):
        week = {"上": -1, "这": 0, "本": 0, "下": 1}[match.group(1)]
        day = "一二三四五六日".find(match.group(2).replace("天", "日"))
        return anchor + timedelta(days=7 * week + day - anchor.weekday())
    span = _span(text)
    if span is None:
        return None
    count, unit = span
    if unit in ("day", "week"):
        return anchor + timedelta(days=count * (7 if unit == "week" else 1))
    return _add_months(anchor, count * (12 if unit == "year" else 1))


def _span(text: str) -> tuple[int, str] | None:
    """(signed count, unit) of "N days ago", "in N weeks", "3天前", "两周后"."""
    if match := re.match(r"^(\w+) (day|week|month|year)s? ago$", text):
        number, unit, sign = match.group(1), match.group(2), -1
    elif match := re.match(r"^in (\w+) (day|week|month|year)s?$", text):
        number, unit, sign = match.group(1), match.group(2), 1
    elif match := _ZH_SPAN_RE.match(text):
        number, unit, sign = (
            match.group(1),
            _UNITS[match.group(2)],
            -1 if "前" in match.group(3) else 1,
        )
    else:
        return None
    count = _number(number)
    return None if count is None else (sign * count, unit)


def _number(text: str) -> int | None:
    """Digits, an English number word up to ten, or a Chinese numeral up to 99."""
    if text.isascii() and text.isdigit():
        return int(text)
    if text in _WORD_NUMBERS:
        return _WORD_NUMBERS[text]
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    tens, ten, ones = text.partition("十")
    if ten and len(tens) <= 1 and len(ones) <= 1 and all(c in _ZH_DIGITS for c in tens + ones):
        return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)
    return None


def _add_months(anchor: date, months: int) -> date:
    year, month = divmod(anchor.year * 12 + anchor.month - 1 + months, 12)
    return date(year, month + 1, min(anchor.day, calendar.monthrange(year, month + 1)[1]))


def host_time(value: object) -> datetime | None:
    """A message ``timestamp`` as the host sends it (epoch milliseconds, or an ISO string)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        try:
            return datetime.fromtimestamp(float(value) / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None
