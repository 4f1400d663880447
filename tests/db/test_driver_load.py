"""app/db/driver_load.py on both databases: objects loaded on the driver behave in the session as
the ORM's own loads do."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, bindparam, select
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import DetachedInstanceError

from app.db.driver_load import DriverLoad
from app.db.models import ApiKey
from app.db.uow import UnitOfWork
from app.keys.service import create_key
from tests.helpers.databases import migrated_engine

BY_TENANT = ApiKey.tenant_id == bindparam("tenant")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    with migrated_engine(request, request.param, tmp_path) as built:
        yield built


def _key(name: str, tenant: str = "acme") -> ApiKey:
    return ApiKey(
        tenant_id=tenant,
        name=name,
        prefix="p",
        key_hash=f"h-{name}",
        scopes="read",
        created_at=datetime.now(UTC),
    )


def test_a_loaded_object_joins_the_session_as_a_query_would(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    created = create_key(uow, tenant_id="acme", name="before", scopes=())
    load = DriverLoad(ApiKey, BY_TENANT)
    with uow.write() as db:
        loaded = load.first(db, {"tenant": "acme"})
        assert loaded is not None and loaded.name == "before"
        assert loaded.created_at.tzinfo is not None  # converted as the ORM converts it
        assert load.first(db, {"tenant": "acme"}) is loaded  # the session's own object
        assert db.get(ApiKey, loaded.id) is loaded
        assert load.first(db, {"tenant": "nobody"}) is None
        loaded.name = "after"  # flushed at commit like any loaded object's change
    with uow.read() as db:
        stored = db.get(ApiKey, int(created.view.key_id))
        assert stored is not None and stored.name == "after"


def test_all_rows_come_in_order_and_as_the_sessions_objects(engine: Engine) -> None:
    with UnitOfWork(engine).write() as db:
        db.add_all([_key("b"), _key("c"), _key("a"), _key("z", tenant="other")])
    load = DriverLoad(ApiKey, BY_TENANT, order_by=[ApiKey.name])
    with UnitOfWork(engine).read() as db:
        held = db.execute(select(ApiKey).where(ApiKey.name == "c")).scalar_one()
        loaded = load.all(db, {"tenant": "acme"})
        assert [k.name for k in loaded] == ["a", "b", "c"]
        assert loaded[2] is held
        assert load.all(db, {"tenant": "nobody"}) == []


def test_a_deferred_column_is_read_when_first_used(engine: Engine) -> None:
    with UnitOfWork(engine).write() as db:
        db.add(_key("k"))
    load = DriverLoad(ApiKey, BY_TENANT, deferred=[ApiKey.scopes, ApiKey.key_hash])
    with UnitOfWork(engine).read() as db:
        (loaded,) = load.all(db, {"tenant": "acme"})
        assert {"scopes", "key_hash"}.isdisjoint(loaded.__dict__)
        assert loaded.scopes == "read" and loaded.key_hash == "h-k"
    with pytest.raises(ValueError, match="primary key"):
        DriverLoad(ApiKey, BY_TENANT, deferred=[ApiKey.id])


def test_changes_made_in_the_transaction_are_flushed_before_a_load(engine: Engine) -> None:
    # As the ORM's autoflush: a row added or changed earlier in the transaction is found as it is.
    load = DriverLoad(ApiKey, BY_TENANT, order_by=[ApiKey.name])
    with engine.connect() as conn, Session(bind=conn) as db:
        db.add(_key("first"))
        db.flush()
        moved = db.execute(select(ApiKey)).scalar_one()
        moved.tenant_id = "moved"
        db.add(_key("second"))
        assert [k.name for k in load.all(db, {"tenant": "acme"})] == ["second"]
        assert load.first(db, {"tenant": "moved"}) is moved


def test_without_autoflush_nothing_is_flushed(engine: Engine) -> None:
    load = DriverLoad(ApiKey, BY_TENANT)
    with engine.connect() as conn, Session(bind=conn, autoflush=False) as db:
        db.add(_key("pending"))
        assert load.all(db, {"tenant": "acme"}) == []
        assert db.new  # still pending, as the ORM leaves it


def test_leading_columns_come_beside_each_object(engine: Engine) -> None:
    with UnitOfWork(engine).write() as db:
        db.add_all([_key("b"), _key("a")])
    load = DriverLoad(
        ApiKey, BY_TENANT, order_by=[ApiKey.name], leading=[ApiKey.prefix, ApiKey.name]
    )
    with UnitOfWork(engine).read() as db:
        led = load.all_led(db, {"tenant": "acme"})
        assert [(lead, key.name) for lead, key in led] == [(("p", "a"), "a"), (("p", "b"), "b")]
        first = load.first(db, {"tenant": "acme"})
        assert first is led[0][1] and first.name == "a"


def test_an_unattached_load_leaves_the_session_alone(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    with uow.write() as db:
        db.add_all([_key("held"), _key("free")])
    load = DriverLoad(ApiKey, BY_TENANT, order_by=[ApiKey.name], attach=False)
    with uow.write() as db:
        held = db.execute(select(ApiKey).where(ApiKey.name == "held")).scalar_one()
        free, again = load.all(db, {"tenant": "acme"})
        assert again is held  # an object the session holds is still the one returned
        assert free.name == "free" and free.created_at.tzinfo is not None
        assert free not in db
        free.name = "changed"  # read only: nothing of it reaches the database
    with uow.read() as db:
        assert db.execute(select(ApiKey.name).order_by(ApiKey.name)).scalars().all() == [
            "free",
            "held",
        ]


def test_an_unattached_load_refuses_to_read_a_deferred_column(engine: Engine) -> None:
    uow = UnitOfWork(engine)
    with uow.write() as db:
        db.add(_key("only"))
    load = DriverLoad(ApiKey, BY_TENANT, deferred=[ApiKey.scopes], attach=False)
    with uow.read() as db:
        (key,) = load.all(db, {"tenant": "acme"})
        assert key not in db and key.name == "only"
        # Not read, and not answered as None: the object is detached.
        with pytest.raises(DetachedInstanceError):
            _ = key.scopes
