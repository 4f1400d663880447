"""The message text index after the turn (docs/architecture.md, "The message text index"): a turn
stores its messages unindexed; an archive's messages are indexed once, by Phase 2's first step or
by the first search that finds the archive unindexed, so search finds every archived message
whether a worker runs or not, and finds each once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from sqlalchemy import text

from app.db.engine import create_db_engine
from app.settings import Settings
from tests.api.test_archives import commit, ingest, message_hits, search
from tests.conftest import app_client
from tests.helpers.messages import assistant, user


def index_state(database_url: str) -> tuple[int, list[bool]]:
    """(entries in the message text index, each archive's indexed mark in order)."""
    engine = create_db_engine(Settings(database_url=database_url))
    try:
        with engine.connect() as conn:
            entries = conn.execute(text("SELECT count(*) FROM message_fts")).scalar_one()
            marks = conn.execute(
                text("SELECT messages_indexed FROM archives ORDER BY archive_index")
            ).scalars()
            return int(entries), [bool(m) for m in marks]
    finally:
        engine.dispose()


async def test_search_indexes_an_archive_that_no_worker_indexed(
    make_settings: Callable[..., Settings], database_url: str
) -> None:
    async with app_client(make_settings(worker={"enabled": False})) as client:
        await ingest(
            client,
            "s-idx",
            [user("heron at dawn"), assistant("a heron, noted"), user("heron still live")],
        )
        response = await client.post("/sessions/s-idx/commit", json={"keepRecentCount": 1})
        assert response.json()["status"] == "accepted", response.text
        # Neither the turn nor the commit indexed anything; no Phase 2 runs.
        assert index_state(database_url) == (0, [False])

        found = await search(client, "s-idx", "heron")
        assert [h["seq"] for h in message_hits(found)] == [1, 2]
        assert index_state(database_url) == (2, [True])

        # Indexed once: a second search finds the same messages, and the index is unchanged.
        again = await search(client, "s-idx", "heron", mode="ranked")
        assert sorted(h["seq"] for h in message_hits(again)) == [1, 2]
        assert index_state(database_url) == (2, [True])


async def test_phase2_indexes_the_archive_before_any_search(
    client: httpx.AsyncClient, database_url: str
) -> None:
    messages: list[dict[str, Any]] = [user(f"egret number {n}") for n in range(5)]
    await ingest(client, "s-p2", messages)
    await commit(client, "s-p2", keep=2)
    assert index_state(database_url) == (3, [True])
    await ingest(client, "s-p2", [user("egret number 5")])
    await commit(client, "s-p2", keep=0)
    assert index_state(database_url) == (6, [True, True])
    found = await search(client, "s-p2", "egret", limit=50)
    assert [h["seq"] for h in message_hits(found)] == [1, 2, 3, 4, 5, 6]
