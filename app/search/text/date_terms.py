"""Dates mentioned in free text, as ISO calendar days: the relative ones ("yesterday", "3 days
ago", "上周二") resolved against the day the text was said, the absolute ones ("7 May 2023",
"2023-05-07", "2023年5月7日") normalised. Search indexes and queries both speak ISO days, so
"yesterday" said on 2023-05-08 is found by a question about 7 May 2023. Pure."""

from __future__ import annotations

import re
from datetime import date

from app.core.rules.dates import resolve_relative_date

_NUM = r"(?:\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_EN_RELATIVE = re.compile(
    r"\b(?:(?:the )?day (?:before yesterday|after tomorrow)|yesterday|today|tonight|tomorrow|last night"
    rf"|(?:last|next) (?:week|month|year)|last {_WEEKDAYS}|{_NUM} (?:day|week|month|year)s? ago"
    rf"|in {_NUM} (?:day|week|month|year)s?)\b",
    re.IGNORECASE,
)
# At most twelve numerals: tried at every position of a long run of digits, an unbounded run took
# time quadratic in its length (bench/RESULTS.md, Measurements behind the code). No count of days is longer.
_ZH_NUM = r"[0-9零一二两三四五六七八九十]{1,12}"
_ZH_RELATIVE = re.compile(
    r"大前天|大后天|前天|昨天|昨日|昨晚|今天|今日|今晚|明天|明日|后天|上个月|上月|下个月|去年|前年|明年"
    r"|(?:上|这|本|下)个?(?:周|星期|礼拜)[一二三四五六日天]|(?:上|下)(?:周|星期|个星期|礼拜)"
    rf"|{_ZH_NUM}\s*个?(?:天|周|星期|礼拜|月|年)(?:之前|以前|前|之后|以后|后)"
)
_HAN = re.compile(r"[\u3400-\u9fff]")  # a text that holds it is written in Chinese
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
# What each pattern cannot match without, looked for first: a substring search runs at memory
# speed, where the patterns are tried at every character (all of them over a 100 KB text with
# no date in it held the interpreter's lock for a long time).
_EN_RELATIVE_NEEDS = ("day", "night", "tomorrow", "week", "month", "year")
_MONTH_NEEDS = tuple(m[:3] for m in _MONTHS)
_ZH_RELATIVE_NEEDS = tuple("天日晚月年周星礼")
# IGNORECASE also matches these to ASCII letters, which str.lower() does not all map to.
_CASE_EXCEPTIONS = ("\u0130", "\u0131", "\u017f", "\u212a")


def _may_hold(text: str, needs: tuple[str, ...], ignore_case: bool = False) -> bool:
    if ignore_case:
        if any(c in text for c in _CASE_EXCEPTIONS):
            return True
        text = text.lower()
    return any(n in text for n in needs)


def _month(name: str) -> int:
    # casefold, not lower: IGNORECASE matched "\u017fep" (a long s) as "sep", and lower() keeps the
    # long s, which no month starts with.
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.casefold()[:3]))


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
    found: list[str | None] = []
    if "-" in text:
        found += [_day(int(y), int(m), int(d), anchor) for y, m, d in _ISO.findall(text)]
    if _may_hold(text, _MONTH_NEEDS, ignore_case=True):
        found += [
            _day(int(y) if y else None, _month(m), int(d), anchor)
            for d, m, y in _DAY_MONTH.findall(text)
        ]
        found += [
            _day(int(y) if y else None, _month(m), int(d), anchor)
            for m, d, y in _MONTH_DAY.findall(text)
        ]
    if "月" in text:
        found += [
            _day(int(y) if y else None, int(m), int(d), anchor)
            for y, m, d in _ZH_DATE.findall(text)
        ]
    return list(dict.fromkeys(d for d in found if d))


def without_dates(text: str) -> str:
    """The text with its written-out dates removed (their parts are not search words)."""
    if "-" in text:
        text = _ISO.sub(" ", text)
    if _may_hold(text, _MONTH_NEEDS, ignore_case=True):
        text = _MONTH_DAY.sub(" ", _DAY_MONTH.sub(" ", text))
    return _ZH_DATE.sub(" ", text) if "月" in text else text


def relative_dates(text: str, said_on: date) -> list[str]:
    """ISO days that the relative expressions of a text meant on the day it was said."""
    anchor = said_on.isoformat()
    found: list[str | None] = []
    if _may_hold(text, _EN_RELATIVE_NEEDS, ignore_case=True):
        found += [resolve_relative_date(m.group(0), anchor) for m in _EN_RELATIVE.finditer(text)]
    if _may_hold(text, _ZH_RELATIVE_NEEDS):
        found += [resolve_relative_date(m.group(0), anchor) for m in _ZH_RELATIVE.finditer(text)]
    return list(dict.fromkeys(d for d in found if d))


def mentioned_dates(text: str, said_on: date | None) -> list[str]:
    """Every day a text mentions, relative expressions resolved when the saying day is known."""
    relative = relative_dates(text, said_on) if said_on is not None else []
    return list(dict.fromkeys([*absolute_dates(text, said_on), *relative]))


def written_day(iso_day: str, chinese: bool) -> str:
    """An ISO day as people write it: "7 May 2023", or "2023年5月7日" beside Chinese text."""
    day = date.fromisoformat(iso_day)
    if chinese:
        return f"{day.year}年{day.month}月{day.day}日"
    return f"{day.day} {_MONTHS[day.month - 1].capitalize()} {day.year}"


def day_written_beside(iso_day: str, text: str) -> str:
    """``written_day`` in the script of ``text``: the Chinese form beside a text with Han in it."""
    return written_day(iso_day, bool(_HAN.search(text)))


def with_resolved_dates(text: str, said_on: date | None) -> str:
    """The text with each relative date followed by the day it meant when the text was said:
    "yesterday" said on 2023-05-08 reads "yesterday (7 May 2023)", "昨天" reads "昨天（2023年5月7日）".
    A text read out of its time (recalled, summarised) keeps its meaning that way."""
    if said_on is None:
        return text
    anchor = said_on.isoformat()
    if _may_hold(text, _EN_RELATIVE_NEEDS, ignore_case=True):
        text = _EN_RELATIVE.sub(lambda m: _annotated(m, anchor, False), text)
    if _may_hold(text, _ZH_RELATIVE_NEEDS):
        text = _ZH_RELATIVE.sub(lambda m: _annotated(m, anchor, True), text)
    return text


def _annotated(match: re.Match[str], anchor: str, chinese: bool) -> str:
    """The expression and its day, unless the day already follows it (a text resolved before)."""
    expression = match.group(0)
    resolved = resolve_relative_date(expression, anchor)
    if resolved is None:
        return expression
    day = written_day(resolved, chinese)
    note = f"（{day}）" if chinese else f" ({day})"
    if match.string.startswith(note, match.end()):
        return expression
    return expression + note
