"""PostgreSQL: the SQL of the memory word index's postings and counters
(app/search/postings.py says what they are).

Writes keep the counters in the transaction that adds or removes chunks, in (partition, term)
order, so that concurrent writers wait for each other rather than deadlock. Reads take the
searched partitions' statistics from the counters and the best postings of each query phrase's
rarest term from the impact-ordered b-tree: a bounded number of rows whatever the partition holds.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.literals import tsquery_literal
from app.db.postgres.memory_counts import query_counts
from app.db.shared import memory_postings as shared
from app.db.shared.memory_counts import read_statistics as read_counted_statistics
from app.db.shared.memory_postings import ChunkPosting, Database, PostedChunk
from app.search.phrases import Phrase
from app.search.plan import Statistics
from app.search.postings import Posting


def post_chunks(db: Database, rows: list[ChunkPosting]) -> None:
    """Add (chunk id, partition, words, their term counts where known) to the postings and the
    counters (``memory_fts`` holds the words: app/db/postgres/memory_words.py)."""
    shared.post_chunks(db, rows, _STATEMENTS)


def unpost_chunks(db: Session, chunk_ids: list[int]) -> None:
    """Remove chunks from the postings and the counters (chunks never posted are ignored)."""
    shared.unpost_chunks(db, chunk_ids, _STATEMENTS)


def _store_words(_db: Database, _rows: list[ChunkPosting]) -> None:
    """Nothing to keep: the chunk's row in ``memory_fts`` holds its words."""


def _insert_postings(db: Database, posted: list[Posting]) -> None:
    db.execute(
        text(
            "INSERT INTO memory_postings(chunk_id, term, partition, frequency, impact) "
            "SELECT * FROM unnest(CAST(:ids AS bigint[]), CAST(:terms AS text[]), "
            "CAST(:parts AS text[]), CAST(:freqs AS int[]), CAST(:impacts AS real[])) "
            "ON CONFLICT (chunk_id, term) DO UPDATE SET partition = EXCLUDED.partition, "
            "frequency = EXCLUDED.frequency, impact = EXCLUDED.impact"
        ),
        {
            "ids": [x.chunk_id for x in posted],
            "terms": [x.term for x in posted],
            "parts": [x.partition for x in posted],
            "freqs": [x.frequency for x in posted],
            "impacts": [x.impact for x in posted],
        },
    )


def _posted_chunks(db: Session, chunk_ids: list[int]) -> list[PostedChunk]:
    rows = db.execute(
        text(
            "SELECT id, partition, tokens FROM memory_fts WHERE id = ANY(:ids) AND partition IS NOT NULL"
        ),
        {"ids": list(chunk_ids)},
    )
    return [(int(i), str(p), list(t)) for i, p, t in rows]


def _delete_postings(db: Session, _rows: list[PostedChunk], chunk_ids: list[int]) -> None:
    db.execute(text("DELETE FROM memory_postings WHERE chunk_id = ANY(:ids)"), {"ids": chunk_ids})


def _change_partitions(db: Database, deltas: list[tuple[str, int, int]]) -> dict[str, float]:
    """Apply the deltas; returns each changed partition's average words per chunk after them."""
    if not deltas:
        return {}
    result = db.execute(
        text(
            "INSERT INTO memory_partitions(partition, chunks, words) SELECT * FROM "
            "unnest(CAST(:parts AS text[]), CAST(:chunks AS bigint[]), CAST(:words AS bigint[])) "
            "ON CONFLICT (partition) DO UPDATE SET chunks = memory_partitions.chunks + EXCLUDED.chunks, "
            "words = memory_partitions.words + EXCLUDED.words RETURNING partition, chunks, words"
        ),
        {
            "parts": [p for p, _, _ in deltas],
            "chunks": [c for _, c, _ in deltas],
            "words": [w for _, _, w in deltas],
        },
    )
    return {str(p): (w / c if c > 0 else 0.0) for p, c, w in result}


def _change_terms(db: Database, deltas: list[tuple[str, str, int]]) -> None:
    if deltas:
        db.execute(
            text(
                "INSERT INTO memory_terms(partition, term, chunks) SELECT * FROM "
                "unnest(CAST(:parts AS text[]), CAST(:terms AS text[]), CAST(:deltas AS bigint[])) "
                "ON CONFLICT (partition, term) DO UPDATE SET chunks = memory_terms.chunks + EXCLUDED.chunks"
            ),
            {
                "parts": [p for p, _, _ in deltas],
                "terms": [t for _, t, _ in deltas],
                "deltas": [d for _, _, d in deltas],
            },
        )


_STATEMENTS = shared.PostingStatements(
    store_words=_store_words,
    change_partitions=_change_partitions,
    change_terms=_change_terms,
    insert_postings=_insert_postings,
    posted_chunks=_posted_chunks,
    delete_postings=_delete_postings,
)


def read_statistics(db: Session, partitions: list[str], phrases: list[Phrase]) -> Statistics:
    """The statistics of a search, and where each phrase's candidates are read from."""
    return read_counted_statistics(db, partitions, phrases, query_counts, _count_exactly)


def _count_exactly(
    db: Session, partitions: list[str], inexact: list[tuple[Phrase, list[str]]]
) -> list[int]:
    """The exact chunk counts (as FTS5 counts them) of prefixes and word phrases whose bound is
    small: the rows of the bounding terms' postings, at most ``EXACT_COUNT_LIMIT`` a phrase, are
    read and matched, whatever other partitions hold."""
    params: dict[str, object] = {"parts": partitions}
    counts = []
    for n, (phrase, _) in enumerate(inexact):
        params[f"q{n}"] = tsquery_literal([phrase])
        counts.append(f"count(*) FILTER (WHERE f.words @@ CAST(:q{n} AS tsquery))")
    params["terms"] = list(dict.fromkeys(t for _, bounding in inexact for t in bounding))
    row = db.execute(
        text(
            f"SELECT {', '.join(counts)} FROM memory_fts f WHERE f.id IN (SELECT x.chunk_id "
            "FROM memory_postings x WHERE x.partition = ANY(:parts) AND x.term = ANY(:terms))"
        ),
        params,
    ).one()
    return [int(count) for count in row]
