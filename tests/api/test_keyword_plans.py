"""Keyword search finds the same messages, in the same order, whichever way SQLite reads them: by
id when the index matches few rows, walking the session in order when it matches many
(app/db/sqlite/message_fts.py, FEW_MATCHES)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest

import app.db.sqlite.message_text as sqlite_message_text
from app.db.sqlite.message_fts import MAX_INDEXED_CHARS, fts_query, matching_in_order
from tests.api.test_archives import archive, message_hits, search
from tests.helpers.messages import assistant, user

pytestmark = pytest.mark.sqlite_only


def session_messages(first: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = []
    for i in range(first, first + 12):
        text = f"row {i} keeps the gauge" if i % 3 == 0 else f"row {i} says nothing much"
        messages.append(user(text) if i % 2 else assistant(text))
    # Past the indexed part: found by the partially indexed messages' scan.
    messages.append(user("x" * (MAX_INDEXED_CHARS + 10) + " gauge at the very end"))
    return messages


@pytest.mark.parametrize("few_matches", [0, 10**6], ids=["walk", "by-id"])
async def test_both_plans_find_every_message_in_order(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, few_matches: int
) -> None:
    monkeypatch.setattr(sqlite_message_text, "FEW_MATCHES", few_matches)
    stored = session_messages(0) + session_messages(100)
    first = await archive(client, "s-plan", stored[:13])
    second = await archive(client, "s-plan", stored[13:])
    await archive(client, "s-other", session_messages(0))  # another session's matches
    expected = [seq for seq, m in enumerate(stored, start=1) if "gauge" in str(m["content"])]
    assert len(expected) == 10
    found = await search(client, "s-plan", "gauge", limit=50)
    assert [h["seq"] for h in message_hits(found)] == expected
    # Each hit names its own archive.
    assert [h["archiveId"] for h in message_hits(found)] == [
        first if seq <= 13 else second for seq in expected
    ]
    limited = await search(client, "s-plan", "gauge", limit=3)
    assert [h["seq"] for h in message_hits(limited)] == expected[:3]
    assert limited["truncated"] is True
    narrowed = await search(client, "s-plan", "gauge", archiveId=first, limit=50)
    assert [h["seq"] for h in message_hits(narrowed)] == [seq for seq in expected if seq <= 13]


@pytest.mark.parametrize("by_id", [False, True], ids=["walk", "by-id"])
@pytest.mark.parametrize("marked_by_id", [False, True], ids=["marked-walk", "marked-by-id"])
async def test_long_messages_of_other_sessions_are_never_read(
    client: httpx.AsyncClient, db_path: Path, by_id: bool, marked_by_id: bool
) -> None:
    # Every long message of every session and tenant carries the partial-index mark; whichever
    # plan reads the searched session's, its whole text is lowered and scanned for the term only
    # for that session's own long messages, not for the other sessions' (a rare term once read
    # every long message of the database).
    stored = session_messages(0)
    await archive(client, "s-plan", stored)
    long_text = "y" * (MAX_INDEXED_CHARS + 10)
    await archive(client, "s-long", [user(f"{long_text} gauge {i}") for i in range(5)])
    lowered: list[int] = []

    def counting_lower(value: str | None) -> str | None:
        lowered.append(len(value or ""))
        return None if value is None else value.lower()

    conn = sqlite.connect(str(db_path))
    try:
        conn.create_function("lower", 1, counting_lower)  # replaces SQLite's own lower()
        session_pk = conn.execute(
            "SELECT id FROM agent_sessions WHERE session_id = 's-plan'"
        ).fetchone()[0]
        params: dict[str, object] = {"q": fts_query(["gauge"], any_term=False), "s": session_pk}
        sql = matching_in_order(
            ["gauge"],
            params,
            "AND m.archive_pk IS NOT NULL",
            by_id=by_id,
            marked_by_id=marked_by_id,
        )
        seqs = [row[2] for row in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()
    assert seqs == [seq for seq, m in enumerate(stored, start=1) if "gauge" in str(m["content"])]
    assert len(lowered) == 1 and lowered[0] > MAX_INDEXED_CHARS  # the session's one long message
