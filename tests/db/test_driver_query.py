"""app/db/driver_query.py on both databases: a DriverQuery reads what the same statement reads
through SQLAlchemy, and the key lookup made on it sees every key change at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, bindparam, literal, literal_column, select, table
from sqlalchemy.exc import DBAPIError

from app.db.driver_query import DriverQuery
from app.db.models import ApiKey
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


def test_a_parameter_that_needs_conversion_is_refused(engine: Engine) -> None:
    query = DriverQuery(
        select(ApiKey.id).where(ApiKey.revoked_at < bindparam("at", type_=ApiKey.revoked_at.type))
    )
    with pytest.raises(TypeError, match="needs conversion"):
        UnitOfWork(engine).driver_row(query, {"at": datetime.now(UTC)})


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
