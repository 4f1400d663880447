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
