"""FTS5's words in Python: the one tokenizer of the memory word index, its postings and its
queries, splitting as FTS5's ``unicode61 remove_diacritics 2`` tokenizer does, on SQLite and on
PostgreSQL alike.

The caller has already set CJK characters apart with spaces (``cjk.cjk_spaced``), so each of them
is a word of its own, as FTS5 sees them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping


def _token_char(char: str) -> bool:
    """unicode61's default token characters: letters, numbers and private-use characters."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"


def _fold(char: str) -> str:
    """Lower case without diacritics (``remove_diacritics 2``): é and ê read as e."""
    decomposed = unicodedata.normalize("NFD", char.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c)) or char.lower()


# Each character's folded form, or "" for a separator: a memory of 100 KB is 100,000 lookups
# here instead of as many Unicode category and normalisation calls (much slower, and run
# inside the write transaction that indexes the memory). Bounded: cleared when full.
_FOLDED: dict[str, str] = {}
_FOLDED_MAX = 65_536


def _folded(char: str) -> str:
    folded = _fold(char) if _token_char(char) else ""
    if len(_FOLDED) >= _FOLDED_MAX:
        _FOLDED.clear()
    _FOLDED[char] = folded
    return folded


# ASCII's token characters are its letters and digits, and folding one is lowering it.
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    """The text's words in order, as FTS5's unicode61 tokenizer produces them."""
    if text.isascii():  # in C: most memories and queries are ASCII
        return _ASCII_WORD.findall(text.lower())
    found: list[str] = []
    current: list[str] = []
    known = _FOLDED.get
    for char in text:
        folded = known(char)
        if folded is None:
            folded = _folded(char)
        if folded:
            current.append(folded)
        elif current:
            found.append("".join(current))
            current = []
    if current:
        found.append("".join(current))
    return found


def chunks_with_words(
    rows: Iterable[tuple[int, str, str]], words_of: Mapping[str, list[str]] | None = None
) -> list[tuple[int, str, str, list[str]]]:
    """(chunk id, partition, text, words) of the rows whose text has words: from ``words_of``
    where the caller split the text already (before its transaction), else split here."""
    known = words_of or {}
    found = []
    for chunk_id, partition, body in rows:
        tokens = (known.get(body) or words(body)) if body else []
        if tokens:
            found.append((chunk_id, partition, body, tokens))
    return found
