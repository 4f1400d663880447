"""Text helpers of the PostgreSQL dialect: FTS5's word split, tsvector and tsquery literals, BM25.

The memory word index must answer what FTS5's ``unicode61 remove_diacritics 2`` tokenizer answers
on SQLite (app/memory builds FTS5 expressions and reads BM25 ranks), so the words are split here,
in Python, the way unicode61 splits them, and handed to PostgreSQL as literal lexemes: its own
text-search parser would read a host name, a path or a version number as one word, and would
treat CJK letters as the server's locale says. The caller has already set CJK characters apart
with spaces, so each of them is a word of its own, as on SQLite.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass

# tsvector limits: a lexeme under 2 KB, positions 1..16383, at most 256 positions per lexeme.
MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383
MAX_POSITIONS = 256
# FTS5's bm25() constants.
BM25_K1 = 1.2
BM25_B = 0.75
_PHRASE_RE = re.compile(r'"((?:[^"]|"")*)"(\*?)')


def _token_char(char: str) -> bool:
    """unicode61's default token characters: letters, numbers and private-use characters."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"


def _fold(char: str) -> str:
    """Lower case without diacritics (``remove_diacritics 2``): é and ê read as e."""
    decomposed = unicodedata.normalize("NFD", char.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c)) or char.lower()


def words(text: str) -> list[str]:
    """The text's words in order, as FTS5's unicode61 tokenizer produces them."""
    found: list[str] = []
    current: list[str] = []
    for char in text:
        if _token_char(char):
            current.append(_fold(char))
        elif current:
            found.append("".join(current))
            current = []
    if current:
        found.append("".join(current))
    return found


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(tokens: list[str]) -> str:
    """A tsvector of these words at their positions (no parser, no dictionary in between)."""
    positions: dict[str, list[int]] = defaultdict(list)
    for index, token in enumerate(tokens, start=1):
        if len(token.encode()) <= MAX_LEXEME_BYTES and len(positions[token]) < MAX_POSITIONS:
            positions[token].append(min(index, MAX_POSITION))
    return " ".join(
        f"{_quoted(token)}:{','.join(str(p) for p in dict.fromkeys(places))}"
        for token, places in positions.items()
        if places
    )


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of an FTS5 expression: its words, the last one a prefix when ``prefix``."""

    tokens: tuple[str, ...]
    prefix: bool

    def tsquery(self) -> str:
        parts = [_quoted(t) for t in self.tokens]
        if self.prefix:
            parts[-1] += ":*"
        return "(" + " <-> ".join(parts) + ")"

    def count_in(self, tokens: list[str]) -> int:
        """How often the phrase occurs in a row's words (FTS5's phrase frequency)."""
        size = len(self.tokens)
        head, last = self.tokens[:-1], self.tokens[-1]
        hits = 0
        for start in range(len(tokens) - size + 1):
            window = tokens[start : start + size]
            if tuple(window[:-1]) != head:
                continue
            word = window[-1]
            if word == last or (self.prefix and word.startswith(last)):
                hits += 1
        return hits


def parse_expression(expression: str) -> list[Phrase]:
    """The phrases of an FTS5 expression of quoted phrases joined by OR (app.memory.text)."""
    phrases: dict[Phrase, None] = {}
    for body, star in _PHRASE_RE.findall(expression):
        tokens = tuple(words(body.replace('""', '"')))
        if tokens:
            phrases[Phrase(tokens, bool(star))] = None
    return list(phrases)


def tsquery_literal(phrases: list[Phrase]) -> str:
    return " | ".join(p.tsquery() for p in phrases)


def fts5_idf(documents: int, frequency: int) -> float:
    """FTS5's idf: negative values become a tiny positive one."""
    idf = math.log((documents - frequency + 0.5) / (frequency + 0.5))
    return idf if idf > 0 else 1e-6


def like_pattern(term: str) -> str:
    """An ILIKE pattern matching the term anywhere, literally (backslash is ILIKE's escape)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def vector_literal(vector: list[float]) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def without_nul(text: str) -> str:
    """PostgreSQL text cannot hold NUL characters; the index does not need them."""
    return text.replace("\x00", "")
