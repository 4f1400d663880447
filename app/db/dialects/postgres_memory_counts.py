"""PostgreSQL: reading the memory word index's kept counters (app/db/dialects/postgres_postings.py
says what they are). A search reads them twice in one transaction, for its statistics and for the
ideal chunk's rank; the second read is answered from the first."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

# Under the "C" collation, every word with a prefix sorts below prefix + this.
_LAST_CHAR = chr(0x10FFFF)


@dataclass(frozen=True, slots=True)
class Counts:
    """The counters a search reads: chunks and words of the partitions together, chunks holding
    each term (terms held by none left out), and each prefix's words with their chunks."""

    chunks: int
    words: int
    terms: dict[str, int]
    prefixes: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class _Read:
    """What a transaction last read of the counters (a search reads them twice: its statistics,
    then the ideal chunk's rank)."""

    partitions: tuple[str, ...]
    terms: frozenset[str]
    prefixes: frozenset[str]
    counts: Counts

    def answers(self, partitions: list[str], terms: list[str], prefixes: list[str]) -> bool:
        return (
            self.partitions == tuple(partitions)
            and self.terms.issuperset(terms)
            and self.prefixes.issuperset(prefixes)
        )


_LAST_READ = "postgres_memory_counts"


def read_counts(
    db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
) -> Counts:
    """The counters of the partitions, in one round trip (none where this transaction has read
    them already and written none since)."""
    last = db.info.get(_LAST_READ)
    if isinstance(last, _Read) and last.answers(partitions, terms, prefixes):
        return last.counts
    counts = _query_counts(db, partitions, terms, prefixes)
    db.info[_LAST_READ] = _Read(tuple(partitions), frozenset(terms), frozenset(prefixes), counts)
    return counts


def _query_counts(
    db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
) -> Counts:
    rows = db.execute(
        text(
            "SELECT 0, '', '', coalesce(sum(chunks), 0), coalesce(sum(words), 0) "
            "FROM memory_partitions WHERE partition = ANY(:parts) "
            "UNION ALL SELECT 1, term, '', sum(chunks), 0 FROM memory_terms "
            "WHERE partition = ANY(:parts) AND term = ANY(CAST(:terms AS text[])) GROUP BY term "
            "UNION ALL SELECT 2, q.prefix, t.term, sum(t.chunks), 0 "
            "FROM unnest(CAST(:prefixes AS text[])) AS q(prefix) JOIN memory_terms t "
            "ON t.partition = ANY(:parts) AND t.term >= q.prefix AND t.term < q.prefix || :last "
            "AND starts_with(t.term, q.prefix) GROUP BY q.prefix, t.term"
        ),
        {"parts": partitions, "terms": terms, "prefixes": prefixes, "last": _LAST_CHAR},
    )
    chunks = words = 0
    held: dict[str, int] = {}
    found: dict[str, dict[str, int]] = {p: {} for p in prefixes}
    for kind, key, word, count, total in rows:
        if kind == 0:
            chunks, words = int(count), int(total)
        elif count > 0 and kind == 1:
            held[str(key)] = int(count)
        elif count > 0:
            found[str(key)][str(word)] = int(count)
    return Counts(chunks, words, held, found)


def forget_counts(db: Session | Connection) -> None:
    """Writes to the counters make what this transaction read of them stale."""
    if isinstance(db, Session):
        db.info.pop(_LAST_READ, None)
