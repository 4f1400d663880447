"""app/db/driver_query.py on both databases: a DriverQuery reads what the same statement reads
through SQLAlchemy, and the key lookup made on it sees every key change at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import Engine, Table, bindparam, literal, literal_column, select, table
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import CompilerElement

from app.db.driver_query import DriverQuery
from app.db.models import ApiKey, Memory
from app.db.session_sql import session_all_rows, session_rows
from app.db.uow import UnitOfWork
from app.keys.service import create_key, resolve_key, revoke_key
from tests.helpers.databases import migrated_engine


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with migrated_engine(request, request.param, tmp_path) as built:
        yield built


def test_rows_and_repeated_parameters_read_as_through_sqlalchemy(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    # The same parameter three times, strings and integers in and out: placeholders in order.
    statement = select(
        bindparam("word", type_=ApiKey.name.type) + literal("!"),
        bindparam("number", type_=ApiKey.id.type) * 2,
        bindparam("word", type_=ApiKey.name.type),
    )
    params = {"word": "héllo 中文", "number": 21}
    with engine.connect() as conn:
        expected = tuple(conn.execute(statement, params).one())
    assert (
        uow.driver_row(DriverQuery(statement), params)
        == expected
        == ("héllo 中文!", 42, "héllo 中文")
    )
    assert (
        uow.driver_row(DriverQuery(select(ApiKey.id).where(ApiKey.id == bindparam("i"))), {"i": 1})
        is None
    )


def test_parameters_are_converted_as_sqlalchemy_converts_them(engine: Engine) -> None:
    # A UTC datetime is stored as the column type stores it, then found by the same comparison.
    uow = UnitOfWork(engine)
    at = datetime(2026, 5, 1, 12, 30, 15, 250000, tzinfo=UTC)
    keys = cast(Table, ApiKey.__table__)
    columns = ["tenant_id", "name", "prefix", "key_hash", "scopes", "created_at", "revoked_at"]
    insert = DriverQuery(keys.insert(), columns)
    rows = [
        {
            "tenant_id": "t",
            "name": f"k{i}",
            "prefix": "p",
            "key_hash": f"h{i}",
            "scopes": "",
            "created_at": at,
            "revoked_at": at + timedelta(seconds=i),
        }
        for i in range(3)
    ]
    with uow.write() as db:
        insert.in_session(db).run_many(rows)
    revoked_by = DriverQuery(
        select(ApiKey.name, ApiKey.revoked_at)
        .where(ApiKey.revoked_at <= bindparam("at", type_=ApiKey.revoked_at.type))
        .order_by(ApiKey.name),
        convert_results=True,
    )
    with uow.read() as db:
        found = revoked_by.in_session(db).all_rows({"at": at + timedelta(seconds=1)})
        through_sqlalchemy = db.execute(
            select(ApiKey.name, ApiKey.revoked_at).order_by(ApiKey.name)
        ).all()
    assert found == [("k0", at), ("k1", at + timedelta(seconds=1))]
    assert [tuple(r) for r in through_sqlalchemy][:2] == found


def test_numbers_are_converted_as_sqlalchemy_converts_them(engine: Engine) -> None:
    # PostgreSQL's conversion of a number depends on the type the driver reports for its column.
    uow = UnitOfWork(engine)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with uow.write() as db:
        db.add(
            Memory(
                id="m1",
                tenant_id="t",
                owner_kind="user",
                owner_id="u",
                uri="mem://m1",
                category="events",
                title="",
                abstract="",
                content="x",
                confidence=0.25,
                sensitivity="allowed",
                priority=0,
                version=1,
                source_json="{}",
                created_at=now,
                updated_at=now,
            )
        )
    confidence = DriverQuery(
        select(Memory.confidence, Memory.priority).where(Memory.id == bindparam("id")),
        convert_results=True,
    )
    with uow.read() as db:
        found = confidence.in_session(db).first_row({"id": "m1"})
        through_sqlalchemy = db.execute(select(Memory.confidence, Memory.priority)).one()
    assert found == (0.25, 0) == tuple(through_sqlalchemy)
    assert type(found[0]) is float and type(found[1]) is int


def test_an_in_list_is_expanded_per_call(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    for name in ("a", "b", "c"):
        create_key(uow, tenant_id="t", name=name, scopes=())
    named = DriverQuery(
        select(ApiKey.name)
        .where(ApiKey.name.in_(bindparam("names", expanding=True)))
        .order_by(ApiKey.name)
    )
    with uow.read() as db:
        statement = named.in_session(db)
        assert statement.all_rows({"names": ["c", "a"]}) == [("a",), ("c",)]
        assert statement.all_rows({"names": ["b"]}) == [("b",)]
        assert statement.all_rows({"names": ["a", "b", "c", "x"]}) == [("a",), ("b",), ("c",)]


def test_a_missing_parameter_is_refused(engine: Engine) -> None:
    query = DriverQuery(select(ApiKey.id).where(ApiKey.name == bindparam("name")))
    with pytest.raises(TypeError, match="name"), UnitOfWork(engine).read() as db:
        query.in_session(db).all_rows({})


def test_key_lookups_follow_creation_and_revocation_at_once(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    assert resolve_key(uow, "ce_missing").keys_exist is False
    created = create_key(uow, tenant_id="acme", name="ci", scopes=())
    found = resolve_key(uow, created.key)
    assert found.identity is not None and found.identity.tenant_id == "acme"
    assert found.keys_exist is True
    assert resolve_key(uow, created.key + "x").identity is None
    revoke_key(uow, str(created.view.key_id))
    gone = resolve_key(uow, created.key)
    assert gone.identity is None and gone.keys_exist is False


def test_driver_errors_are_raised_as_sqlalchemy_raises_them(engine: Engine) -> None:
    # The storage errors' answers (503, /readyz) read SQLAlchemy's exceptions, as from a session.
    query = DriverQuery(select(literal_column("1")).select_from(table("no_such_table")))
    with pytest.raises(DBAPIError) as raised:
        UnitOfWork(engine).driver_row(query, {})
    assert "no_such_table" in str(raised.value)
    with pytest.raises(DBAPIError) as raised, UnitOfWork(engine).read() as db:
        query.in_session(db).first_row({})
    assert "no_such_table" in str(raised.value)


def test_a_statement_is_not_printed_unless_it_fails(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Printing a statement compiles it again (milliseconds for a wide select): only an error's
    # message may pay for it, never a statement that succeeds.
    query = DriverQuery(select(literal_column("1")))

    def printed(element: object) -> str:
        raise AssertionError("a statement was printed on success")

    monkeypatch.setattr(CompilerElement, "__str__", printed)
    assert UnitOfWork(engine).driver_row(query, {}) == (1,)
    with UnitOfWork(engine).read() as db:
        assert query.in_session(db).first_row({}) == (1,)


def test_session_rows_read_the_sessions_transaction_in_the_drivers_style(engine: Engine) -> None:
    # A dialect's SQL in its driver's own parameter style, on the session's connection: it sees
    # the session's uncommitted writes, and its errors are SQLAlchemy's.
    style = "?" if engine.dialect.name == "sqlite" else "%s"
    named = ":n" if engine.dialect.name == "sqlite" else "%(n)s"
    with UnitOfWork(engine).write() as db:
        now = datetime.now(UTC)
        db.add(ApiKey(tenant_id="t", name="mine", prefix="p", key_hash="h", created_at=now))
        db.flush()
        rows = session_rows(db, f"SELECT name FROM api_keys WHERE name = {named}", {"n": "mine"})
        assert list(rows) == [("mine",)]
        assert list(session_rows(db, f"SELECT {style}", ("x",))) == [("x",)]
        # The same statements, every row at once.
        sql = f"SELECT name FROM api_keys WHERE name = {named}"
        assert session_all_rows(db, sql, {"n": "mine"}) == [("mine",)]
        assert session_all_rows(db, f"SELECT {style}", ("x",)) == [("x",)]
        with pytest.raises(DBAPIError, match="no_such_table"):
            list(session_rows(db, "SELECT 1 FROM no_such_table", {}))
    with UnitOfWork(engine).read() as db, pytest.raises(DBAPIError, match="no_such_table"):
        session_all_rows(db, "SELECT 1 FROM no_such_table", {})


def test_a_write_after_the_session_commits_joins_its_next_transaction(engine: Engine) -> None:
    # The connection is kept between statements; a write made after the session committed must
    # still be in the session's (new) transaction, so its rollback undoes it.
    keys = cast(Table, ApiKey.__table__)
    columns = ["tenant_id", "name", "prefix", "key_hash", "scopes", "created_at"]
    insert = DriverQuery(keys.insert(), columns)
    row = {"tenant_id": "t", "prefix": "p", "scopes": "", "created_at": datetime.now(UTC)}
    with engine.connect() as conn, Session(bind=conn) as db:
        insert.in_session(db).run({**row, "name": "kept", "key_hash": "h1"})
        db.commit()
        insert.in_session(db).run({**row, "name": "undone", "key_hash": "h2"})
        db.rollback()
    with UnitOfWork(engine).read() as db:
        names = db.execute(select(ApiKey.name)).scalars().all()
    assert names == ["kept"]


def test_statements_on_the_session_see_its_pending_changes_as_the_orm_would(engine: Engine) -> None:
    # Autoflush, as before an ORM query: an object added or changed earlier in the transaction
    # (an archive added by a commit's Phase 1, read back from the archives' heads) is there.
    named = ":n" if engine.dialect.name == "sqlite" else "%(n)s"
    by_tenant = DriverQuery(select(ApiKey.name).where(ApiKey.tenant_id == bindparam("t")))
    with engine.connect() as conn, Session(bind=conn) as db:
        db.add(
            ApiKey(tenant_id="t", name="a", prefix="p", key_hash="h", created_at=datetime.now(UTC))
        )
        assert by_tenant.in_session(db).all_rows({"t": "t"}) == [("a",)]
        db.get_one(ApiKey, 1).name = "renamed"
        sql = f"SELECT name FROM api_keys WHERE tenant_id = {named}"
        assert list(session_rows(db, sql, {"n": "t"})) == [("renamed",)]
    with engine.connect() as conn, Session(bind=conn, autoflush=False) as db:
        db.add(
            ApiKey(tenant_id="u", name="b", prefix="p", key_hash="h2", created_at=datetime.now(UTC))
        )
        assert by_tenant.in_session(db).all_rows({"t": "u"}) == []
        assert db.new  # left pending, as the ORM leaves it
