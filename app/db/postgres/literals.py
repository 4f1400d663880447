"""Text helpers of the PostgreSQL seams: tsvector and tsquery literals, LIKE patterns, vectors.

The memory word index must answer what FTS5's tokenizer answers on SQLite, so its words are split
in Python (``app.search.text.words``) and handed to PostgreSQL as literal lexemes: its own text-search parser
would read a host name, a path or a version number as one word, and would treat CJK letters as
the server's locale says.
"""

from __future__ import annotations

from collections import defaultdict

from app.search.phrases import Phrase

# tsvector limits: a lexeme under 2 KB, positions 1..16383, at most 256 positions per lexeme.
MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383
MAX_POSITIONS = 256


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


def tsquery_literal(phrases: list[Phrase]) -> str:
    return " | ".join(_phrase_tsquery(p) for p in phrases)


def _phrase_tsquery(phrase: Phrase) -> str:
    parts = [_quoted(t) for t in phrase.tokens]
    if phrase.prefix:
        parts[-1] += ":*"
    return "(" + " <-> ".join(parts) + ")"


def like_pattern(term: str) -> str:
    """A LIKE pattern matching the term anywhere, literally (backslash is LIKE's escape)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def vector_literal(vector: list[float]) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def without_nul(text: str) -> str:
    """PostgreSQL text cannot hold NUL characters; the index does not need them."""
    return text.replace("\x00", "")
