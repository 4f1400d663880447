"""Group commit (app/db/group_commit.py): a write returns only after an fsync of the WAL that began
after its commit, and writers that wait together share one fsync."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text

from app.db.engine import create_db_engine, group_commit_for
from app.db.group_commit import GroupCommit
from app.db.uow import UnitOfWork
from app.settings import Settings

WRITERS = 8


class RecordingSync:
    """A stand-in fsync that records each call; the first one can be held open."""

    def __init__(self) -> None:
        self.calls: list[Path] = []
        self.first_may_finish = threading.Event()
        self.first_may_finish.set()
        self.fail_first = False

    def __call__(self, path: Path) -> None:
        self.calls.append(path)
        if len(self.calls) == 1:
            self.first_may_finish.wait(5)
            if self.fail_first:
                raise OSError("EIO")


def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_each_wait_runs_an_fsync_of_the_wal(tmp_path: Path) -> None:
    sync = RecordingSync()
    group = GroupCommit(tmp_path / "x.db", sync)
    group.wait_durable()
    group.wait_durable()
    assert sync.calls == [tmp_path / "x.db-wal"] * 2 and group.syncs == 2


def test_writers_waiting_during_an_fsync_share_the_next_one(tmp_path: Path) -> None:
    sync = RecordingSync()
    sync.first_may_finish.clear()
    group = GroupCommit(tmp_path / "x.db", sync)
    first = threading.Thread(target=group.wait_durable)
    first.start()
    wait_until(lambda: len(sync.calls) == 1)  # the first fsync is running
    others = [threading.Thread(target=group.wait_durable) for _ in range(WRITERS - 1)]
    for thread in others:
        thread.start()
    wait_until(lambda: group._requested == WRITERS)
    # The fsync already running began before their commits: none of them may return on it.
    sync.first_may_finish.set()
    first.join(5)
    for thread in others:
        thread.join(5)
    assert not any(t.is_alive() for t in [first, *others])
    assert group.syncs == 2  # one for the first writer, one shared by the seven that waited


def test_a_failed_fsync_is_raised_and_the_waiters_sync_again(tmp_path: Path) -> None:
    sync = RecordingSync()
    sync.first_may_finish.clear()
    sync.fail_first = True
    group = GroupCommit(tmp_path / "x.db", sync)
    errors: list[BaseException] = []

    def leader() -> None:
        try:
            group.wait_durable()
        except OSError as exc:
            errors.append(exc)

    first = threading.Thread(target=leader)
    first.start()
    wait_until(lambda: len(sync.calls) == 1)
    waiter = threading.Thread(target=group.wait_durable)
    waiter.start()
    wait_until(lambda: group._requested == 2)
    sync.first_may_finish.set()
    first.join(5)
    waiter.join(5)
    assert len(errors) == 1 and not waiter.is_alive()
    assert group.syncs == 1 and len(sync.calls) == 2  # the waiter was covered by a new fsync


def test_a_write_unit_of_work_waits_for_the_wal_fsync(tmp_path: Path) -> None:
    engine = create_db_engine(Settings(database_url=f"sqlite:///{tmp_path / 'g.db'}"))
    try:
        group = group_commit_for(engine)
        assert group is not None
        uow = UnitOfWork(engine)
        with uow.write() as db:
            db.execute(text("CREATE TABLE t (x INTEGER)"))
        before = group.syncs
        with uow.write() as db:
            db.execute(text("INSERT INTO t VALUES (1)"))
        assert group.syncs == before + 1
        with uow.read() as db:
            db.execute(text("SELECT count(*) FROM t")).scalar_one()
        assert group.syncs == before + 1  # reads wait for nothing
        with pytest.raises(RuntimeError), uow.write() as db:
            db.execute(text("INSERT INTO t VALUES (2)"))
            raise RuntimeError("rolled back")
        assert group.syncs == before + 1  # a rolled-back write has nothing to make durable
    finally:
        engine.dispose()
