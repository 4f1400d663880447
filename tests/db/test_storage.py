"""What SQLite says when storage fails, as the service classifies it (503 reasons, Phase 2 retries)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from app.db.engine import create_db_engine
from app.db.storage import StorageHealth, storage_problem
from app.db.uow import UnitOfWork
from app.settings import Settings


@pytest.fixture
def uow(db_path: Path) -> UnitOfWork:
    return UnitOfWork(create_db_engine(Settings(database_url=f"sqlite:///{db_path}")))


def test_a_full_disk_is_disk_full(uow: UnitOfWork) -> None:
    with uow.engine.connect() as conn:
        conn.exec_driver_sql("CREATE TABLE filler (x TEXT)")
        conn.commit()
        pages = conn.exec_driver_sql("PRAGMA page_count").scalar()
        conn.exec_driver_sql(
            f"PRAGMA max_page_count = {pages}"
        )  # as a full disk: no page may be added
        with pytest.raises(OperationalError) as raised:
            conn.exec_driver_sql("INSERT INTO filler VALUES (?)", ("x" * 100_000,))
    assert storage_problem(raised.value) == "disk_full"


def test_a_read_only_database_is_read_only_and_is_remembered(db_path: Path) -> None:
    ro = UnitOfWork(
        create_db_engine(Settings(database_url=f"sqlite:///file:{db_path}?mode=ro&uri=true"))
    )
    assert ro.health.recent_failure(60) is None
    with pytest.raises(OperationalError) as raised, ro.write() as db:
        db.execute(text("CREATE TABLE t (x)"))
    assert storage_problem(raised.value) == "read_only"
    # Through a unit of work the failure is remembered for /readyz, for a while.
    failure = ro.health.recent_failure(60)
    assert failure is not None and failure.reason == "read_only"
    assert ro.health.recent_failure(0) is None


def test_probe_write_changes_nothing_and_finds_a_read_only_file(
    uow: UnitOfWork, db_path: Path
) -> None:
    uow.probe_write()
    with uow.engine.connect() as conn:
        assert (
            conn.exec_driver_sql(
                "SELECT count(*) FROM sqlite_master WHERE name = 'ce_write_probe'"
            ).scalar()
            == 0
        )
    ro = UnitOfWork(
        create_db_engine(Settings(database_url=f"sqlite:///file:{db_path}?mode=ro&uri=true"))
    )
    with pytest.raises(OperationalError):
        ro.probe_write()


def test_other_errors_are_not_storage_problems() -> None:
    assert storage_problem(ValueError("database or disk is full")) is None
    assert storage_problem(OperationalError("SELECT x", {}, Exception("no such column: x"))) is None
    assert storage_problem(OperationalError("BEGIN", {}, Exception("database is locked"))) == "busy"


def test_health_forgets_after_the_window() -> None:
    health = StorageHealth()
    health.record_failure("disk_full")
    assert health.recent_failure(60).reason == "disk_full"  # type: ignore[union-attr]
    assert health.recent_failure(0) is None
