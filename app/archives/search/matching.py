"""Pure matching for archive search: literal keywords, bounded regexes, snippets (docs/api.md)."""

from __future__ import annotations

import regex

from app.errors import InvalidArgument

SNIPPET_CHARS = 700
# The regex engine compiles counted repeats by expanding them: (a{1000}){300} takes 90 MB, and a
# pattern of twenty characters can exhaust the machine's memory. Patterns are sized before compiling.
MAX_EXPANDED_SIZE = 100_000
_COUNTED = regex.compile(r"\{(\d{1,12})(?:,(\d{0,12}))?\}")


def keyword_terms(query: str) -> list[str]:
    """Whitespace-separated terms, duplicates removed, order kept."""
    seen: dict[str, None] = {}
    for term in query.split():
        seen.setdefault(term, None)
    return list(seen)


def find_keywords(text: str, terms: list[str], case_sensitive: bool) -> tuple[int, int] | None:
    """When every term occurs literally, the span of the most specific one (the longest; the
    earliest among equals) for the snippet, else None."""
    haystack = text if case_sensitive else text.casefold()
    best: tuple[int, int] | None = None
    for term in terms:
        needle = term if case_sensitive else term.casefold()
        at = haystack.find(needle)
        if at < 0:
            return None
        span = (at, at + len(needle))
        if best is None or (span[0] - span[1], span[0]) < (best[0] - best[1], best[0]):
            best = span
    return best


def expanded_size(pattern: str) -> int:
    """An upper estimate of the atoms a compiled pattern holds: counted repeats ({n}, {m,n})
    multiply what they repeat, nested ones multiply again; ``*``, ``+`` and ``?`` do not expand."""
    totals = [0]  # the size of each open group
    previous = 0  # the size of the last atom or group, which a quantifier repeats
    position = 0
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position, previous = _skip_escape(pattern, position), 1
        elif char == "[":
            position, previous = _skip_set(pattern, position), 1
        elif char == "(":
            totals.append(0)
            position, previous = position + 1, 0
            continue
        elif char == ")" and len(totals) > 1:
            previous = totals.pop()
            position += 1
        elif char == "{" and (counted := _COUNTED.match(pattern, position)):
            high = counted.group(2) or counted.group(1)
            totals[-1] += previous * (int(high) - 1)
            previous *= int(high)
            position = counted.end()
            continue
        else:
            position, previous = position + 1, 1
        totals[-1] += previous
    return sum(totals)


def _skip_escape(pattern: str, position: int) -> int:
    """The position after an escape; ``\\p{L}`` and ``\\x{41}`` carry braces of their own."""
    end = position + 2
    if (
        pattern[position + 1 : position + 2] in ("p", "P", "N", "x", "u", "U")
        and pattern[end : end + 1] == "{"
    ):
        close = pattern.find("}", end)
        end = close + 1 if close >= 0 else len(pattern)
    return end


def _skip_set(pattern: str, position: int) -> int:
    """The position after a character set, nested sets (VERSION1 set operations) included."""
    depth, index = 0, position
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            depth += 1
        elif char == "]" and index > position + 1:
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(pattern)


def compile_regex(pattern: str, case_sensitive: bool) -> regex.Pattern[str]:
    """Compile a user pattern; a bad, too deeply nested or too large one is a clear 400."""
    if expanded_size(pattern) > MAX_EXPANDED_SIZE:
        raise InvalidArgument(
            f"the regular expression repeats too much (more than {MAX_EXPANDED_SIZE} atoms once its counted "
            "repeats are expanded); use smaller repeat counts",
            {"field": "query", "reason": "regex_too_large"},
        )
    flags = regex.VERSION1 if case_sensitive else regex.VERSION1 | regex.IGNORECASE
    try:
        return regex.compile(pattern, flags)
    except (regex.error, ValueError, OverflowError) as exc:
        raise InvalidArgument(f"invalid regular expression: {exc}", {"field": "query"}) from exc
    except RecursionError as exc:
        # 500 nested groups or 1,000 "[" exhaust the compiler's recursion (was a 500).
        raise InvalidArgument(
            "the regular expression is nested too deeply",
            {"field": "query", "reason": "regex_too_deep"},
        ) from exc


def find_regex(compiled: regex.Pattern[str], text: str, timeout_s: float) -> tuple[int, int] | None:
    """First match span within ``timeout_s`` (raises TimeoutError past it)."""
    match = compiled.search(text, timeout=max(timeout_s, 0.001))
    return match.span() if match else None


def snippet(text: str, span: tuple[int, int], limit: int = SNIPPET_CHARS) -> str:
    """At most ``limit`` characters around the match, with ellipses where text was cut."""
    if len(text) <= limit:
        return text
    limit -= 2  # room for the two ellipses
    start, end = span
    room = max(0, limit - (end - start))
    left = max(0, start - room // 2)
    right = min(len(text), left + limit)
    left = max(0, right - limit)
    piece = text[left:right]
    return ("…" if left > 0 else "") + piece + ("…" if right < len(text) else "")
