"""The only dialect-branching DDL of the migrations: text and vector indexes.

SQLite gets FTS5 and sqlite-vec virtual tables; PostgreSQL gets plain tables of the same names,
keyed by the same ids (app/db/postgres/message_text.py reads them):

- a text index (``message_fts``, ``archive_fts``): (id, text) with a pg_trgm GIN index, so that a
  substring of three or more characters in any script is found by the index, as with FTS5 trigrams
  (the storage layer stores the text lowercased, since 0019);
- the word index (``memory_fts``): (id, tokens, words) where ``tokens`` are the text's words in
  order (FTS5 unicode61's split, computed by the storage layer) and ``words`` their tsvector, GIN-indexed;
- a vector index (``memory_vec``, ``message_vec``, ``message_passage_vec``): pgvector ``vector(n)`` rows with an HNSW
  index (cosine) and a b-tree on the partition key;
- nothing for the FTS5 vocabulary or the vector change log, which exist for SQLite's sake only.

Index rows reference the indexed row with a deferred, cascading foreign key: an index row never
outlives its row, whatever order a transaction writes them in.
"""

from __future__ import annotations

from alembic import op

POSTGRES = "postgresql"


def _dialect() -> str:
    return op.get_bind().dialect.name


def _require(feature: str, *dialects: str) -> str:
    dialect = _dialect()
    if dialect not in dialects:
        raise NotImplementedError(f"{feature} for {dialect}")
    return dialect


def _references(table: str) -> str:
    return f"REFERENCES {table} (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED"


# The row each PostgreSQL index table is keyed by.
_INDEXED_ROWS = {
    "message_fts": "messages",
    "archive_fts": "archives",
    "memory_fts": "memory_chunks",
    "memory_vec": "memory_chunks",
    "message_vec": "messages",
}


def create_text_index(name: str) -> None:
    """A contentless trigram FTS5 table keyed by the indexed row's id (see app/db/sqlite/message_text.py);
    on PostgreSQL a table of (id, text) with a trigram GIN index."""
    if _require("text index", "sqlite", POSTGRES) == POSTGRES:
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        op.execute(
            f"CREATE TABLE {name} (id BIGINT PRIMARY KEY "
            f"{_references(_INDEXED_ROWS[name])}, text TEXT NOT NULL)"
        )
        op.execute(f"CREATE INDEX ix_{name}_trgm ON {name} USING gin (text gin_trgm_ops)")
        return
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING fts5(text, tokenize='trigram', content='', contentless_delete=1)"
    )


def drop_text_index(name: str) -> None:
    op.execute(f"DROP TABLE IF EXISTS {name}")


def create_word_index(name: str) -> None:
    """A contentless unicode61 FTS5 table for BM25 over words; CJK text is indexed character-spaced.
    On PostgreSQL: the words in order and as a GIN-indexed tsvector."""
    if _require("text index", "sqlite", POSTGRES) == POSTGRES:
        op.execute(
            f"CREATE TABLE {name} (id BIGINT PRIMARY KEY "
            f"{_references(_INDEXED_ROWS[name])}, tokens TEXT[] NOT NULL, words TSVECTOR NOT NULL)"
        )
        op.execute(f"CREATE INDEX ix_{name}_words ON {name} USING gin (words)")
        return
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING fts5(text, tokenize='unicode61 remove_diacritics 2', "
        "content='', contentless_delete=1)"
    )


def create_vector_index(name: str, dimensions: int) -> None:
    """A sqlite-vec table partitioned by owner, so a KNN query scans one owner's vectors only; on
    PostgreSQL a pgvector table with the owner b-tree-indexed."""
    if _require("vector index", "sqlite", POSTGRES) == POSTGRES:
        _create_pg_vector_table(name, "chunk_id", "owner TEXT NOT NULL", "owner", dimensions)
        return
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0(chunk_id integer primary key, owner text partition key, "
        f"embedding float[{dimensions}] distance_metric=cosine)"
    )


def create_message_vector_index(name: str, dimensions: int) -> None:
    """A sqlite-vec table of archived messages partitioned by session: a KNN query scans one
    session's vectors only, whatever other sessions hold."""
    if _require("vector index", "sqlite", POSTGRES) == POSTGRES:
        _create_pg_vector_table(
            name, "message_id", "session_pk BIGINT NOT NULL", "session_pk", dimensions
        )
        return
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0(message_id integer primary key, session_pk integer partition key, "
        f"embedding float[{dimensions}] distance_metric=cosine)"
    )


def create_passage_vector_index(name: str, dimensions: int) -> None:
    """Passage vectors of archived messages (app/search/text/passages.py), partitioned by session with the
    message's time as metadata, keyed by message id x 64 + passage index; on PostgreSQL a pgvector
    table that also holds the message id (cascading), with an HNSW index."""
    if _require("vector index", "sqlite", POSTGRES) == POSTGRES:
        op.execute("CREATE EXTENSION IF NOT EXISTS vector")
        op.execute(
            f"CREATE TABLE {name} (passage_id BIGINT PRIMARY KEY, message_id BIGINT NOT NULL "
            f"{_references('messages')}, session_pk BIGINT NOT NULL, "
            f"said_at_ms BIGINT NOT NULL DEFAULT 0, embedding vector({dimensions}) NOT NULL)"
        )
        op.execute(f"CREATE INDEX ix_{name}_session_pk ON {name} (session_pk, said_at_ms)")
        op.execute(f"CREATE INDEX ix_{name}_message_id ON {name} (message_id)")
        op.execute(
            f"CREATE INDEX ix_{name}_hnsw ON {name} USING hnsw (embedding vector_cosine_ops)"
        )
        return
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0(passage_id integer primary key, session_pk integer "
        f"partition key, said_at_ms integer, embedding float[{dimensions}] distance_metric=cosine)"
    )


def rebuild_message_vector_index(name: str, dimensions: int, *, with_time: bool) -> None:
    """Recreate the message vector table with (or without) the message's time as a vec0 metadata
    column, keeping every stored vector: a time filter then runs inside the KNN. A vector of a
    message without search facts gets time 0 (Phase 2 writes both together, so there is none)."""
    if _require("vector index", "sqlite", POSTGRES) == POSTGRES:
        _rebuild_pg_message_vectors(name, with_time=with_time)
        return
    op.execute(
        f"CREATE TEMP TABLE _{name}_copy AS SELECT message_id, session_pk, embedding FROM {name}"
    )
    op.execute(f"DROP TABLE {name}")
    time_column = "said_at_ms integer, " if with_time else ""
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0(message_id integer primary key, session_pk integer partition key, "
        f"{time_column}embedding float[{dimensions}] distance_metric=cosine)"
    )
    if with_time:
        op.execute(
            f"INSERT INTO {name}(message_id, session_pk, said_at_ms, embedding) SELECT c.message_id, c.session_pk, "
            f"coalesce(x.said_at_ms, 0), c.embedding FROM _{name}_copy c LEFT JOIN message_search x ON x.message_id = c.message_id"
        )
    else:
        op.execute(
            f"INSERT INTO {name}(message_id, session_pk, embedding) SELECT message_id, session_pk, embedding FROM _{name}_copy"
        )
    op.execute(f"DROP TABLE _{name}_copy")


def create_vocabulary(name: str, index: str) -> None:
    """An fts5vocab table over a word index: per-token document counts, read by memory search.
    PostgreSQL needs none: the tsvector's GIN index counts a token's rows."""
    if _require("vocabulary", "sqlite", POSTGRES) == POSTGRES:
        return
    op.execute(f"CREATE VIRTUAL TABLE {name} USING fts5vocab({index}, 'row')")


def create_vector_change_log(name: str) -> None:
    """The log of vector writes (space, partition, row id; a NULL row id drops the partition) that
    in-process vector matrices apply to stay in step with the database (AUTOINCREMENT: a change
    number is never reused, so "after change N" always means the same rows). PostgreSQL searches
    pgvector directly and keeps no matrices, so it has no log."""
    if _require("vector change log", "sqlite", POSTGRES) == POSTGRES:
        return
    op.execute(
        f"CREATE TABLE {name} (change INTEGER PRIMARY KEY AUTOINCREMENT, space TEXT NOT NULL, "
        "part TEXT NOT NULL, row_id INTEGER)"
    )
    op.execute(f"CREATE INDEX ix_{name}_partition ON {name} (space, part, change)")


def _create_pg_vector_table(
    name: str, id_column: str, partition: str, partition_column: str, dimensions: int
) -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        f"CREATE TABLE {name} ({id_column} BIGINT PRIMARY KEY "
        f"{_references(_INDEXED_ROWS[name])}, {partition}, "
        f"embedding vector({dimensions}) NOT NULL)"
    )
    op.execute(f"CREATE INDEX ix_{name}_{partition_column} ON {name} ({partition_column})")
    op.execute(f"CREATE INDEX ix_{name}_hnsw ON {name} USING hnsw (embedding vector_cosine_ops)")


def _rebuild_pg_message_vectors(name: str, *, with_time: bool) -> None:
    """The message's time as a column (time 0 when it has no search facts) and the partition index
    extended by it, so a time window narrows the session's rows before the distances are taken."""
    if with_time:
        op.execute(f"ALTER TABLE {name} ADD COLUMN said_at_ms BIGINT NOT NULL DEFAULT 0")
        op.execute(
            f"UPDATE {name} v SET said_at_ms = x.said_at_ms FROM message_search x "
            "WHERE x.message_id = v.message_id AND x.said_at_ms IS NOT NULL"
        )
        op.execute(f"DROP INDEX ix_{name}_session_pk")
        op.execute(f"CREATE INDEX ix_{name}_session_pk ON {name} (session_pk, said_at_ms)")
    else:
        op.execute(f"DROP INDEX ix_{name}_session_pk")
        op.execute(f"ALTER TABLE {name} DROP COLUMN said_at_ms")
        op.execute(f"CREATE INDEX ix_{name}_session_pk ON {name} (session_pk)")
