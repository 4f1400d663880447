"""The only dialect-branching DDL of the migrations: full-text tables."""

from __future__ import annotations

from alembic import op


def _dialect() -> str:
    return op.get_bind().dialect.name


def create_text_index(name: str) -> None:
    """A contentless trigram FTS5 table keyed by the indexed row's id (see app/db/dialects/sqlite.py)."""
    if _dialect() != "sqlite":
        raise NotImplementedError(f"text index for {_dialect()}")
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING fts5(text, tokenize='trigram', content='', contentless_delete=1)"
    )


def drop_text_index(name: str) -> None:
    op.execute(f"DROP TABLE IF EXISTS {name}")


def create_word_index(name: str) -> None:
    """A contentless unicode61 FTS5 table for BM25 over words; CJK text is indexed character-spaced."""
    if _dialect() != "sqlite":
        raise NotImplementedError(f"text index for {_dialect()}")
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING fts5(text, tokenize='unicode61 remove_diacritics 2', "
        "content='', contentless_delete=1)"
    )


def create_vector_index(name: str, dimensions: int) -> None:
    """A sqlite-vec table partitioned by owner, so a KNN query scans one owner's vectors only."""
    if _dialect() != "sqlite":
        raise NotImplementedError(f"vector index for {_dialect()}")
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0(chunk_id integer primary key, owner text partition key, "
        f"embedding float[{dimensions}] distance_metric=cosine)"
    )


def create_message_vector_index(name: str, dimensions: int) -> None:
    """A sqlite-vec table of archived messages partitioned by session: a KNN query scans one
    session's vectors only, whatever other sessions hold."""
    if _dialect() != "sqlite":
        raise NotImplementedError(f"vector index for {_dialect()}")
    op.execute(
        f"CREATE VIRTUAL TABLE {name} USING vec0(message_id integer primary key, session_pk integer partition key, "
        f"embedding float[{dimensions}] distance_metric=cosine)"
    )


def rebuild_message_vector_index(name: str, dimensions: int, *, with_time: bool) -> None:
    """Recreate the message vector table with (or without) the message's time as a vec0 metadata
    column, keeping every stored vector: a time filter then runs inside the KNN. A vector of a
    message without search facts gets time 0 (Phase 2 writes both together, so there is none)."""
    if _dialect() != "sqlite":
        raise NotImplementedError(f"vector index for {_dialect()}")
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
    """An fts5vocab table over a word index: per-token document counts, read by memory search."""
    if _dialect() != "sqlite":
        raise NotImplementedError(f"vocabulary for {_dialect()}")
    op.execute(f"CREATE VIRTUAL TABLE {name} USING fts5vocab({index}, 'row')")


def create_vector_change_log(name: str) -> None:
    """The log of vector writes (space, partition, row id; a NULL row id drops the partition) that
    in-process vector matrices apply to stay in step with the database (AUTOINCREMENT: a change
    number is never reused, so "after change N" always means the same rows)."""
    op.execute(
        f"CREATE TABLE {name} (change INTEGER PRIMARY KEY AUTOINCREMENT, space TEXT NOT NULL, "
        "part TEXT NOT NULL, row_id INTEGER)"
    )
    op.execute(f"CREATE INDEX ix_{name}_partition ON {name} (space, part, change)")
