"""The memory generations kept by triggers (migration 0012), on both databases: every insert,
update and delete of a memory or of one of its chunks moves its owner's number on, in the same
transaction, whatever statement made it; other owners' numbers stay."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.db.uow import UnitOfWork
from app.memory.store import repository as repo
from tests.helpers.databases import migrated_engine

NOW = datetime(2026, 11, 26, tzinfo=UTC)
ALICE = ("user", "alice")
MAIN = ("agent", "main")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with migrated_engine(request, request.param, tmp_path) as built:
        yield built


def generations(engine: Engine, tenant: str = "t") -> tuple[int, ...]:
    return repo.generations_of(UnitOfWork(engine).driver_rows, tenant, [ALICE, MAIN])


def run(engine: Engine, sql: str, **params: object) -> None:
    with engine.begin() as conn:
        conn.execute(text(sql), params)


def add_memory(engine: Engine, memory_id: str, owner: tuple[str, str], tenant: str = "t") -> None:
    run(
        engine,
        "INSERT INTO memories (id, tenant_id, owner_kind, owner_id, uri, category, title, abstract, "
        "content, confidence, sensitivity, priority, version, source_json, created_at, updated_at) "
        "VALUES (:id, :tenant, :kind, :owner, :id, 'entities', '', '', 'x', 1, 'allowed', 0, 1, "
        "'{}', :now, :now)",
        id=memory_id,
        tenant=tenant,
        kind=owner[0],
        owner=owner[1],
        now=NOW,
    )


def test_an_owner_without_changes_is_at_zero(engine: Engine) -> None:
    assert generations(engine) == (0, 0)


def test_every_change_moves_its_owner_on_and_no_other(engine: Engine) -> None:
    add_memory(engine, "m1", ALICE)
    seen = [generations(engine)]
    run(
        engine,
        "INSERT INTO memory_chunks (tenant_id, memory_id, chunk_index, text) "
        "VALUES ('t', 'm1', 0, 'x'), ('t', 'm1', 1, 'y')",
    )
    seen.append(generations(engine))
    run(engine, "UPDATE memory_chunks SET text = 'z' WHERE memory_id = 'm1' AND chunk_index = 1")
    seen.append(generations(engine))
    run(engine, "DELETE FROM memory_chunks WHERE memory_id = 'm1' AND chunk_index = 1")
    seen.append(generations(engine))
    run(engine, "UPDATE memories SET content = 'changed' WHERE id = 'm1'")
    seen.append(generations(engine))
    run(engine, "DELETE FROM memories WHERE id = 'm1'")
    seen.append(generations(engine))
    alice = [user for user, _ in seen]
    assert all(later > earlier for earlier, later in itertools.pairwise(alice)), seen
    assert {agent for _, agent in seen} == {0}


def test_owners_of_other_tenants_and_kinds_are_apart(engine: Engine) -> None:
    add_memory(engine, "m1", MAIN)
    add_memory(engine, "m2", ("agent", "alice"))
    add_memory(engine, "m3", ALICE, tenant="other")
    assert generations(engine) == (0, 1)
    assert generations(engine, "other")[0] > 0


def test_a_change_rolled_back_moves_nothing(engine: Engine) -> None:
    add_memory(engine, "m1", ALICE)
    before = generations(engine)
    with engine.connect() as conn, conn.begin() as transaction:
        conn.execute(text("UPDATE memories SET content = 'changed' WHERE id = 'm1'"))
        transaction.rollback()
    assert generations(engine) == before
