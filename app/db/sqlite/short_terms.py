"""SQLite: archived messages that may hold terms of two characters, through the trigram index.

The message index holds trigrams, so a term of two characters has no entry of its own. Every
message that holds it holds a trigram that starts with it, though: the index text ends with a
line break (``indexed_form``), so even a term that ends the text is followed by a character.
The index's vocabulary (``message_fts_vocab``, an ``fts5vocab`` table) lists those trigrams by a
range read on the term, and the messages holding any of them are found by one MATCH: a few
index reads instead of a scan of the session.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.sqlite.message_fts import fts_phrase

MESSAGE_VOCAB = "message_fts_vocab"
SHORT_TERM_CHARS = 2
_LAST_CHAR = chr(0x10FFFF)  # every trigram that starts with a term sorts below term + this


def short_terms_expression(db: Session, terms: list[str]) -> str | None:
    """An FTS5 expression matching every message that may hold all the two-character terms (the
    index folds case as ``str.lower`` does only where a term is ASCII or has no case, so others
    return ``None``: the caller scans); shorter terms are left to the caller's check."""
    short = [t for t in dict.fromkeys(terms) if len(t) == SHORT_TERM_CHARS]
    if not short or any(not (t.isascii() or t.lower() == t.upper()) for t in short):
        return None
    groups = []
    for term in short:
        folded = term.lower()
        trigrams = db.execute(
            text(f"SELECT term FROM {MESSAGE_VOCAB} WHERE term >= :low AND term < :high"),
            {"low": folded, "high": folded + _LAST_CHAR},
        ).scalars()
        # No trigram starts with the term: a trigram no text holds, so that only the partially
        # indexed messages the caller also looks through can still be hits.
        quoted = [fts_phrase(t) for t in trigrams if t.startswith(folded)] or [
            fts_phrase(folded + _LAST_CHAR)
        ]
        groups.append("(" + " OR ".join(quoted) + ")")
    return " AND ".join(groups)
