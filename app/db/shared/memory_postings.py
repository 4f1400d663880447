"""The memory word index's postings and counters as chunks are added and removed, written once for
both databases: which postings a chunk gets and how the counters move (app/search/postings.py
says what they are). A backend supplies only the statements that write those rows
(``PostingStatements``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from app.db.shared.memory_counts import forget_counts
from app.search.postings import (
    Posting,
    TermCounts,
    added_term_deltas,
    partition_deltas,
    postings,
    term_deltas,
)

Database = Session | Connection
# (chunk id, partition, words, their term counts where the caller knows them)
ChunkPosting = tuple[int, str, list[str], TermCounts | None]
# (chunk id, partition, words) of a chunk the index holds
PostedChunk = tuple[int, str, list[str]]


@dataclass(frozen=True, slots=True)
class PostingStatements:
    """A backend's statements of the postings and counters."""

    # Keep the chunks' words where the backend's index does not already (SQLite's memory_words).
    store_words: Callable[[Database, list[ChunkPosting]], None]
    # Apply (partition, chunks, words) deltas; each changed partition's average words per chunk.
    change_partitions: Callable[[Database, list[tuple[str, int, int]]], dict[str, float]]
    # Apply (partition, term, chunks) deltas.
    change_terms: Callable[[Database, list[tuple[str, str, int]]], None]
    insert_postings: Callable[[Database, list[Posting]], None]
    # The posted chunks among these ids, with their words.
    posted_chunks: Callable[[Session, list[int]], list[PostedChunk]]
    # Remove the postings (and the kept words) of these chunks: the posted ones, all the ids.
    delete_postings: Callable[[Session, list[PostedChunk], list[int]], None]


def post_chunks(db: Database, rows: list[ChunkPosting], statements: PostingStatements) -> None:
    """Add chunks to the words, the postings and the counters."""
    if not rows:
        return
    forget_counts(db)
    statements.store_words(db, rows)
    averages = statements.change_partitions(db, partition_deltas((p, t, 1) for _, p, t, _ in rows))
    posted = [x for i, p, t, c in rows for x in postings(p, i, t, averages.get(p, 0.0), c)]
    statements.change_terms(db, added_term_deltas(posted))
    statements.insert_postings(db, posted)


def unpost_chunks(db: Session, chunk_ids: list[int], statements: PostingStatements) -> None:
    """Remove chunks from the words, the postings and the counters (chunks never posted are
    ignored)."""
    if not chunk_ids:
        return
    forget_counts(db)
    rows = statements.posted_chunks(db, chunk_ids)
    if rows:
        removed = [(p, t, -1) for _, p, t in rows]
        statements.change_partitions(db, partition_deltas(removed))
        statements.change_terms(db, term_deltas(removed))
    statements.delete_postings(db, rows, chunk_ids)
