"""memory generations: a number per memory owner that every change to its memories moves on

Revision ID: 0012_memory_generations
Revises: 0011_message_short_terms
Create Date: 2026-11-26 07:00:00

``memory_generations`` holds, per (tenant, owner kind, owner id), a counter that triggers on
``memories`` and ``memory_chunks`` raise in the transaction of any insert, update or delete, on
every path (the API, Phase 2, re-embedding, imports, copies). Recall keeps its last answers for a
turn and serves one again only while the generations it was computed at are unchanged
(app/memory/recall/cache.py): a trigger cannot be forgotten by a new write path. Rows are made on
first change; an owner with none is at generation 0.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from migrations.helpers import POSTGRES

revision: str = "0012_memory_generations"
down_revision: str | None = "0011_message_short_terms"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


TABLE = "memory_generations"
_OWNER = "tenant_id, owner_kind, owner_id"
# One bump of an owner's generation; {src} names the row (NEW or OLD, or a memory looked up).
_BUMP = (
    f"INSERT INTO {TABLE} ({_OWNER}, generation) {{select}} "
    f"ON CONFLICT ({_OWNER}) DO UPDATE SET generation = {TABLE}.generation + 1"
)
# SQLite: row triggers, (event, the rows whose owner moves on).
_SQLITE_MEMORY_TRIGGERS = {"insert": ("NEW",), "update": ("OLD", "NEW"), "delete": ("OLD",)}
_SQLITE_CHUNK_TRIGGERS = {"insert": ("NEW",), "update": ("NEW",), "delete": ("OLD",)}
_EVENTS = ("insert", "update", "delete")
# PostgreSQL: statement triggers over the transition tables (one per event: PostgreSQL allows a
# transition table on single-event triggers only).
_PG_TRANSITIONS = {"insert": ("NEW",), "update": ("OLD", "NEW"), "delete": ("OLD",)}


def upgrade() -> None:
    op.execute(
        f"CREATE TABLE {TABLE} (tenant_id VARCHAR(128) NOT NULL, owner_kind VARCHAR(8) NOT NULL, "
        f"owner_id VARCHAR(256) NOT NULL, generation BIGINT NOT NULL, PRIMARY KEY ({_OWNER}))"
    )
    if op.get_bind().dialect.name == POSTGRES:
        _create_pg_triggers()
    else:
        _create_sqlite_triggers()


def downgrade() -> None:
    if op.get_bind().dialect.name == POSTGRES:
        for table in ("memories", "memory_chunks"):
            for event in _EVENTS:
                op.execute(f"DROP TRIGGER IF EXISTS {TABLE}_{table}_{event} ON {table}")
                op.execute(f"DROP FUNCTION IF EXISTS {TABLE}_{table}_{event}_bump()")
    else:
        for table in ("memories", "memory_chunks"):
            for event in _EVENTS:
                op.execute(f"DROP TRIGGER IF EXISTS {TABLE}_{table}_{event}")
    op.execute(f"DROP TABLE IF EXISTS {TABLE}")


def _create_sqlite_triggers() -> None:
    # The owner of a row of each table, given the row (NEW or OLD) a trigger sees.
    owners = {
        "memories": "VALUES ({row}.tenant_id, {row}.owner_kind, {row}.owner_id, 1)",
        "memory_chunks": f"SELECT {_OWNER}, 1 FROM memories WHERE id = {{row}}.memory_id",
    }
    triggers = {"memories": _SQLITE_MEMORY_TRIGGERS, "memory_chunks": _SQLITE_CHUNK_TRIGGERS}
    for table, events in triggers.items():
        for event, rows in events.items():
            bumps = " ".join(
                _BUMP.format(select=owners[table].format(row=row)) + ";" for row in rows
            )
            op.execute(
                f"CREATE TRIGGER {TABLE}_{table}_{event} AFTER {event.upper()} ON {table} "
                f"BEGIN {bumps} END"
            )


def _create_pg_triggers() -> None:
    owners = {
        "memories": "SELECT DISTINCT tenant_id, owner_kind, owner_id, 1 FROM {rows}",
        "memory_chunks": (
            "SELECT DISTINCT m.tenant_id, m.owner_kind, m.owner_id, 1 FROM {rows} c "
            "JOIN memories m ON m.id = c.memory_id"
        ),
    }
    for table, select in owners.items():
        for event, rows in _PG_TRANSITIONS.items():
            name = f"{TABLE}_{table}_{event}"
            names = {"NEW": f"new_{table}", "OLD": f"old_{table}"}
            bumps = " ".join(_BUMP.format(select=select.format(rows=names[r])) + ";" for r in rows)
            op.execute(
                f"CREATE FUNCTION {name}_bump() RETURNS trigger LANGUAGE plpgsql AS "
                f"$$ BEGIN {bumps} RETURN NULL; END $$"
            )
            referencing = " ".join(f"{r} TABLE AS {names[r]}" for r in rows)
            op.execute(
                f"CREATE TRIGGER {name} AFTER {event.upper()} ON {table} "
                f"REFERENCING {referencing} FOR EACH STATEMENT EXECUTE FUNCTION {name}_bump()"
            )
