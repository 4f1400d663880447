"""Alembic environment: one migration tree for every dialect.

The URL comes from the service settings (never from alembic.ini), and the engine is built by
``app.db.engine`` so that migrations run with the same driver and connection policy as the service.
A caller may also hand in an open connection through ``config.attributes["connection"]``.
"""

from __future__ import annotations

from alembic import context

import app.db.models  # noqa: F401  (registers every table on the metadata)
from app.db.base import Base
from app.db.engine import create_db_engine
from app.settings import get_settings

# Virtual tables and their shadow tables, the memory word index's words, postings and counters, the
# vector change log and the memory generations (kept by triggers) are created by hand
# (migrations/helpers.py and the revisions); autogenerate must not see them as drift.
FTS_PREFIXES = (
    "message_fts",
    "archive_fts",
    "memory_fts",
    "memory_postings",
    "memory_words",
    "memory_terms",
    "memory_partitions",
    "memory_generations",
    "memory_vec",
    "message_vec",
    "message_passage_vec",
    "vector_changes",
)


def include_name(name: str | None, type_: str, _parent: object) -> bool:
    return not (type_ == "table" and name and name.startswith(FTS_PREFIXES))


def run_migrations(connection: object) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        include_name=include_name,
        render_as_batch=True,
        compare_type=True,
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    run_migrations(connection)
else:
    engine = create_db_engine(get_settings())
    with engine.connect() as conn:
        run_migrations(conn)
        conn.commit()
    engine.dispose()
