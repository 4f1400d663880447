"""The memory word index's kept counters as a search reads them (``app.search.plan.Counts``). A
search reads them twice in one transaction, for its statistics and for the ideal chunk's rank; the
second read is answered from the first, until the transaction writes to them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from app.search.phrases import Phrase
from app.search.plan import Counts, Statistics, counted_terms, plan_statistics

# Reads the counters of (partitions, terms, prefixes) from the database.
CountQuery = Callable[[Session, list[str], list[str], list[str]], Counts]
# Counts exactly, in the partitions, the chunks holding each (phrase, its bounding terms).
PhraseCounter = Callable[[Session, list[str], list[tuple[Phrase, list[str]]]], list[int]]


@dataclass(frozen=True, slots=True)
class _Read:
    """What a transaction last read of the counters."""

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


_LAST_READ = "memory_counts"


def read_counts(
    db: Session,
    partitions: list[str],
    terms: list[str],
    prefixes: list[str],
    query: CountQuery,
) -> Counts:
    """The counters of the partitions (not read again where this transaction has read them
    already and written none since)."""
    last = db.info.get(_LAST_READ)
    if isinstance(last, _Read) and last.answers(partitions, terms, prefixes):
        return last.counts
    counts = query(db, partitions, terms, prefixes)
    db.info[_LAST_READ] = _Read(tuple(partitions), frozenset(terms), frozenset(prefixes), counts)
    return counts


def read_statistics(
    db: Session,
    partitions: list[str],
    phrases: list[Phrase],
    query: CountQuery,
    count_exactly: PhraseCounter,
) -> Statistics:
    """The statistics of a search, and where each phrase's candidates are read from, with the
    backend's SQL for the counters and the exact counts."""
    terms, prefixes = counted_terms(phrases)
    counted = read_counts(db, partitions, terms, prefixes, query)
    return plan_statistics(phrases, counted, lambda inexact: count_exactly(db, partitions, inexact))


def forget_counts(db: Session | Connection) -> None:
    """Writes to the counters make what this transaction read of them stale."""
    if isinstance(db, Session):
        db.info.pop(_LAST_READ, None)


def term_documents(
    counted: Counts, tokens: list[str], prefixes: list[str]
) -> tuple[int, dict[str, int]]:
    """``MemoryWordIndex.memory_term_documents``'s answer from the counters: the partitions' chunks, and
    the chunks holding each token and each prefix (``prefix*``; at most every chunk)."""
    found = {token: counted.terms.get(token, 0) for token in tokens}
    for prefix in prefixes:
        found[prefix + "*"] = min(sum(counted.prefixes.get(prefix, {}).values()), counted.chunks)
    return counted.chunks, found
