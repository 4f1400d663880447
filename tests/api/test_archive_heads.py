"""What a pre-prompt assemble reads of every archive of its session: each archive's place and
state, in order, answered on SQLite from an index without reading the archive rows (whose
overviews, a Working Memory each, come before those columns)."""

from __future__ import annotations

import pytest

from app.archives.read import repository
from app.archives.read import store as archives_store
from app.db.models import ArchiveStatus
from app.sessions import repository as sessions_repo
from tests.api.test_assemble import SUMMARY, _set_archive, after_turn, commit, pre_prompt
from tests.conftest import app_client
from tests.helpers.messages import turn


def _history(first: int, last: int) -> list[dict[str, object]]:
    return [m for i in range(first, last + 1) for m in turn(i)]


async def test_the_heads_of_every_archive_in_order_and_the_summary_that_lists_them(
    make_settings,
):
    keeping = app_client(make_settings())
    async with keeping as client:
        uow = keeping.app.state.services.uow
        history = _history(1, 12)  # two messages a turn
        for end in (8, 16, 24):
            await after_turn(client, history[:end])
            await commit(client, keep=2)
        _set_archive(uow, 3, ArchiveStatus.FAILED)
        with uow.read() as db:
            session = sessions_repo.find_session(db, "default", "s1")
            assert session is not None
            heads = archives_store.archive_heads(db, session)
        assert [(h.archive_id, h.status) for h in heads] == [
            ("archive_001", "completed"),
            ("archive_002", "completed"),
            ("archive_003", "failed"),
        ]
        assert [h.message_count for h in heads] == [6, 8, 8]
        assert all(h.completed_at is not None and h.completed_at.tzinfo for h in heads[:2])
        body = await pre_prompt(client, history)
        archives = body["diagnostics"]["archives"]
        assert (archives["total"], archives["completed"], archives["failed"]) == (3, 2, 1)
        summary = body["messages"][0]["content"][0]["text"]
        assert summary.startswith(SUMMARY)
        # The summary stands for the completed archives; the failed one's messages follow it.
        assert "archive_001 (6 messages), archive_002 (8 messages)" in summary
        assert "archive_003" not in summary


@pytest.mark.sqlite_only
async def test_the_heads_are_read_from_the_index_alone(make_settings):
    keeping = app_client(make_settings())
    async with keeping:
        engine = keeping.app.state.services.uow.engine
        sql = str(repository._ARCHIVE_HEADS.statement.compile(dialect=engine.dialect))
        with engine.connect() as connection:
            plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", (1,)).all()
    details = " ".join(str(row[-1]) for row in plan)
    assert "COVERING INDEX ix_archives_session_heads" in details, details
