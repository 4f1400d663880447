"""The memory word index's search, written once for both databases.

A search reads the searched partitions' statistics from the kept counters, a bounded set of
candidate chunks with their words (app/search/plan.py says which), scores them with FTS5's bm25()
(``app.search.postings.score_chunks``) and keeps the current ones, best first. A backend supplies
only the SQL that reads those rows: the four hooks below.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from sqlalchemy.orm import Session

from app.db.shared.memory_counts import read_counts, term_documents
from app.db.shared.memory_partitions import memory_partition
from app.db.shared.rows import TextHit
from app.search.bm25 import fts5_idf
from app.search.phrases import Phrase
from app.search.plan import MIN_CANDIDATES, Counts, Statistics
from app.search.postings import score_chunks


class MemoryWordSearch(ABC):
    """``match_memory_chunks`` and ``memory_term_documents`` over a backend's row readers."""

    @abstractmethod
    def _word_statistics(
        self, db: Session, partitions: list[str], phrases: list[Phrase]
    ) -> Statistics:
        """The partitions' statistics for these phrases (counters, exact counts where bounded)."""

    @abstractmethod
    def _word_candidates(
        self, db: Session, tenant_id: str, partitions: list[str], stats: Statistics, per_term: int
    ) -> list[tuple[int, list[str]]]:
        """(chunk id, words) of the candidates the statistics' plan reads."""

    @abstractmethod
    def _current_hits(
        self, db: Session, tenant_id: str, ranked: list[tuple[float, int]], limit: int
    ) -> list[TextHit]:
        """The first ``limit`` of the (score, chunk id) ranking whose chunks are current."""

    @abstractmethod
    def _word_counts(
        self, db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
    ) -> Counts:
        """The kept counters of the partitions for these terms and prefixes."""

    def match_memory_chunks(
        self,
        db: Session,
        tenant_id: str,
        owners: list[tuple[str, str]],
        phrases: list[Phrase],
        limit: int,
    ) -> list[TextHit]:
        if not owners or not phrases:
            return []
        partitions = [memory_partition(tenant_id, owner) for owner in owners]
        stats = self._word_statistics(db, partitions, phrases)
        rows = self._word_candidates(db, tenant_id, partitions, stats, max(limit, MIN_CANDIDATES))
        idfs = [fts5_idf(stats.chunks, frequency) for frequency in stats.frequencies]
        scored = score_chunks(rows, phrases, idfs, stats.average, stats.prefix_words)
        ranked = sorted((score, chunk_id) for chunk_id, score in scored if score < 0)
        return self._current_hits(db, tenant_id, ranked, limit)

    def memory_term_documents(
        self, db: Session, partitions: list[str], tokens: list[str], prefixes: list[str]
    ) -> tuple[int, dict[str, int]]:
        # The searched partitions' kept counters (the statistics match_memory_chunks scores with).
        terms, wanted = list(dict.fromkeys(tokens)), list(dict.fromkeys(prefixes))
        counted = read_counts(db, partitions, terms, wanted, self._word_counts)
        return term_documents(counted, tokens, prefixes)
