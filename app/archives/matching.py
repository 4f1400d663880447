"""Pure matching for archive search: literal keywords, bounded regexes, snippets (api.md)."""

from __future__ import annotations

import regex

from app.errors import InvalidArgument

SNIPPET_CHARS = 700


def keyword_terms(query: str) -> list[str]:
    """Whitespace-separated terms, duplicates removed, order kept."""
    seen: dict[str, None] = {}
    for term in query.split():
        seen.setdefault(term, None)
    return list(seen)


def find_keywords(text: str, terms: list[str], case_sensitive: bool) -> tuple[int, int] | None:
    """Span of the first term's first occurrence when every term occurs literally, else None."""
    haystack = text if case_sensitive else text.casefold()
    first: tuple[int, int] | None = None
    for term in terms:
        needle = term if case_sensitive else term.casefold()
        at = haystack.find(needle)
        if at < 0:
            return None
        if first is None or at < first[0]:
            first = (at, at + len(needle))
    return first


def compile_regex(pattern: str, case_sensitive: bool) -> regex.Pattern[str]:
    """Compile a user pattern; a bad one is a clear 400."""
    flags = regex.VERSION1 if case_sensitive else regex.VERSION1 | regex.IGNORECASE
    try:
        return regex.compile(pattern, flags)
    except (regex.error, ValueError) as exc:
        raise InvalidArgument(f"invalid regular expression: {exc}", {"field": "query"}) from exc


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
