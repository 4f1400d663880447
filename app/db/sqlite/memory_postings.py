"""SQLite: the SQL of the memory word index's postings and counters (app/search/postings.py
says what they are; app/search/plan.py what a search reads from them).

``memory_words`` keeps each chunk's words (space-separated: a word never holds a space), which the
candidates are scored from (``memory_candidates`` reads them). Writers are serialised by
SQLite itself: the counters need no lock order.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import TextClause, bindparam, text
from sqlalchemy.orm import Session

from app.db.shared import memory_postings as shared
from app.db.shared.memory_counts import read_statistics as read_counted_statistics
from app.db.shared.memory_postings import ChunkPosting, Database, PostedChunk
from app.search.phrases import Phrase
from app.search.plan import Counts, Statistics, counts_from_rows
from app.search.postings import Posting, chunk_terms

MEMORY_WORDS = "memory_words"
_LAST_CHAR = chr(0x10FFFF)  # every word with a prefix sorts below prefix + this (BINARY)


def expanding(sql: str, *names: str) -> TextClause:
    """A statement whose ``IN :name`` parameters take lists."""
    return text(sql).bindparams(*(bindparam(name, expanding=True) for name in names))


def post_chunks(db: Database, rows: list[ChunkPosting]) -> None:
    """Add (chunk id, partition, words, their term counts where known) to the words, the postings
    and the counters."""
    shared.post_chunks(db, rows, _STATEMENTS)


def unpost_chunks(db: Session, chunk_ids: list[int]) -> None:
    """Remove chunks from the words, the postings and the counters (chunks never posted are
    ignored)."""
    shared.unpost_chunks(db, chunk_ids, _STATEMENTS)


def _store_words(db: Database, rows: list[ChunkPosting]) -> None:
    _execute_many(
        db,
        f"INSERT OR REPLACE INTO {MEMORY_WORDS}(chunk_id, partition, tokens) VALUES (?, ?, ?)",
        [(i, p, " ".join(t)) for i, p, t, _ in rows],
    )


def _insert_postings(db: Database, posted: list[Posting]) -> None:
    _execute_many(
        db,
        "INSERT OR REPLACE INTO memory_postings(partition, term, chunk_id, frequency, impact) "
        "VALUES (?, ?, ?, ?, ?)",
        [(x.partition, x.term, x.chunk_id, x.frequency, x.impact) for x in posted],
    )


def _execute_many(db: Database, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
    """One statement for many rows, on the driver: a long memory writes thousands of postings
    and term counters inside the write lock, and SQLAlchemy's processing of each row's
    parameters cost more than SQLite's inserts. The values are
    plain strings and numbers, which need no conversion."""
    if rows:
        connection = db.connection() if isinstance(db, Session) else db
        connection.exec_driver_sql(sql, rows)


def _posted_chunks(db: Session, chunk_ids: list[int]) -> list[PostedChunk]:
    return [
        (int(i), str(p), tokens.split(" ") if tokens else [])
        for i, p, tokens in db.execute(
            expanding(
                f"SELECT chunk_id, partition, tokens FROM {MEMORY_WORDS} WHERE chunk_id IN :ids",
                "ids",
            ),
            {"ids": list(chunk_ids)},
        )
    ]


def _delete_postings(
    db: Session,
    rows: list[PostedChunk],
    chunk_ids: list[int],  # noqa: ARG001 - the posted ones are all there is to delete
) -> None:
    if not rows:
        return
    db.execute(
        text("DELETE FROM memory_postings WHERE partition = :p AND term = :t AND chunk_id = :id"),
        [{"p": p, "t": term, "id": i} for i, p, t in rows for term in chunk_terms(t)],
    )
    db.execute(
        expanding(f"DELETE FROM {MEMORY_WORDS} WHERE chunk_id IN :ids", "ids"),
        {"ids": [i for i, _, _ in rows]},
    )


def _change_partitions(db: Database, deltas: list[tuple[str, int, int]]) -> dict[str, float]:
    """Apply the deltas; returns each changed partition's average words per chunk after them."""
    averages: dict[str, float] = {}
    for partition, chunks, words in deltas:
        total_chunks, total_words = db.execute(
            text(
                "INSERT INTO memory_partitions(partition, chunks, words) VALUES (:p, :c, :w) "
                "ON CONFLICT (partition) DO UPDATE SET chunks = chunks + excluded.chunks, "
                "words = words + excluded.words RETURNING chunks, words"
            ),
            {"p": partition, "c": chunks, "w": words},
        ).one()
        averages[partition] = total_words / total_chunks if total_chunks > 0 else 0.0
    return averages


def _change_terms(db: Database, deltas: list[tuple[str, str, int]]) -> None:
    _execute_many(
        db,
        "INSERT INTO memory_terms(partition, term, chunks) VALUES (?, ?, ?) "
        "ON CONFLICT (partition, term) DO UPDATE SET chunks = chunks + excluded.chunks",
        deltas,
    )


_STATEMENTS = shared.PostingStatements(
    store_words=_store_words,
    change_partitions=_change_partitions,
    change_terms=_change_terms,
    insert_postings=_insert_postings,
    posted_chunks=_posted_chunks,
    delete_postings=_delete_postings,
)


def query_counts(
    db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
) -> Counts:
    """The counters of the partitions together, in one statement: (0) chunks and words, (1) the
    chunks holding each term, (2) each prefix's words with theirs."""
    params: dict[str, object] = {"parts": partitions, "terms": terms}
    arms = [
        "SELECT 0, '', '', coalesce(sum(chunks), 0), coalesce(sum(words), 0) "
        "FROM memory_partitions WHERE partition IN :parts",
        "SELECT 1, term, '', sum(chunks), 0 FROM memory_terms WHERE partition IN :parts "
        "AND term IN :terms GROUP BY term",
    ]
    for n, prefix in enumerate(prefixes):
        params |= {f"p{n}": prefix, f"u{n}": prefix + _LAST_CHAR}
        arms.append(
            f"SELECT 2, :p{n}, term, sum(chunks), 0 FROM memory_terms WHERE partition IN :parts "
            f"AND term >= :p{n} AND term < :u{n} AND substr(term, 1, length(:p{n})) = :p{n} "
            "GROUP BY term"
        )
    rows = db.execute(expanding(" UNION ALL ".join(arms), "parts", "terms"), params)
    return counts_from_rows(rows, prefixes)


def read_statistics(db: Session, partitions: list[str], phrases: list[Phrase]) -> Statistics:
    """The statistics of a search, and where each phrase's candidates are read from."""
    return read_counted_statistics(db, partitions, phrases, query_counts, _count_exactly)


def _count_exactly(
    db: Session, partitions: list[str], inexact: list[tuple[Phrase, list[str]]]
) -> list[int]:
    """The exact chunk counts (as FTS5 counts them) of prefixes and word phrases whose bound is
    small: their bounding terms' rows in the partitions whose words hold the phrase, found by a
    substring search of the space-separated words in SQLite's own loop; one statement."""
    params: dict[str, object] = {"parts": partitions}
    counts = []
    for n, (phrase, bounding) in enumerate(inexact):
        # A prefix's last word may go on: no space after it.
        needle = " " + " ".join(phrase.tokens) + ("" if phrase.prefix else " ")
        params |= {f"terms{n}": bounding, f"needle{n}": needle}
        counts.append(
            f"(SELECT count(*) FROM {MEMORY_WORDS} w WHERE w.chunk_id IN (SELECT x.chunk_id "
            f"FROM memory_postings x WHERE x.partition IN :parts AND x.term IN :terms{n}) "
            f"AND instr(' ' || w.tokens || ' ', :needle{n}) > 0)"
        )
    names = ["parts", *(f"terms{n}" for n in range(len(inexact)))]
    row = db.execute(expanding(f"SELECT {', '.join(counts)}", *names), params).one()
    return [int(count) for count in row]
