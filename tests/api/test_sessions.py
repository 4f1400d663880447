"""GET/DELETE /sessions/{sessionId} and POST /sessions/{sessionId}/commit (docs/api.md, Sessions)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest

from tests.helpers.messages import assistant, tool_call, tool_result, turn, user


async def ingest(
    client: httpx.AsyncClient, session_id: str, messages: list[dict[str, Any]], **extra: Any
) -> None:
    response = await client.post(
        "/after-turn", json={"sessionId": session_id, "messages": messages, **extra}
    )
    assert response.status_code == 200, response.text
    assert response.json()["ingested"] == len(messages)


async def commit(client: httpx.AsyncClient, session_id: str, **body: Any) -> httpx.Response:
    return await client.post(f"/sessions/{session_id}/commit", json=body)


async def get_session(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    response = await client.get(f"/sessions/{session_id}")
    assert response.status_code == 200, response.text
    return response.json()


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body


def is_iso_utc(value: Any) -> bool:
    return (
        isinstance(value, str) and value.endswith("Z") and datetime.fromisoformat(value) is not None
    )


@contextmanager
def open_db(path: Path) -> Iterator[sqlite.Connection]:
    conn = sqlite.connect(str(path))
    try:
        yield conn
    finally:
        conn.close()


def fts_count(path: Path, table: str, term: str) -> int:
    with open_db(path) as conn:
        phrase = '"' + term.replace('"', '""') + '"'
        return int(
            conn.execute(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (phrase,)
            ).fetchone()[0]
        )


def row_counts(path: Path, session_id: str) -> dict[str, int]:
    with open_db(path) as conn:
        pks = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM agent_sessions WHERE session_id = ?", (session_id,)
            )
        ]
        counts = {"sessions": len(pks), "messages": 0, "archives": 0, "jobs": 0}
        for pk in pks:
            for table in ("messages", "archives", "jobs"):
                counts[table] += conn.execute(
                    f"SELECT count(*) FROM {table} WHERE session_pk = ?", (pk,)
                ).fetchone()[0]
        return counts


# --- GET --------------------------------------------------------------------------------------


async def test_get_session_shape_before_and_after_commit(client: httpx.AsyncClient) -> None:
    messages = [m for i in range(6) for m in turn(i, words=5)]  # 12 messages, default keep 10
    await ingest(client, "s-get", messages, sessionKey="agent:ops:main", userId="u-7")
    before = await get_session(client, "s-get")
    assert before["sessionId"] == "s-get"
    assert before["sessionKey"] == "agent:ops:main"
    assert before["agentId"] == "ops"
    assert before["userId"] == "u-7"
    assert before["messageCount"] == 12
    assert before["totalMessageCount"] == 12
    assert before["keepRecentCount"] == 10
    assert before["pendingTokens"] > 0  # the two oldest messages lie outside the keep window
    assert before["commitCount"] == 0
    assert before["lastCommitAt"] is None
    assert before["archives"] == []
    assert is_iso_utc(before["createdAt"]) and is_iso_utc(before["updatedAt"])

    response = await commit(client, "s-get", keepRecentCount=4, wait=True)
    assert response.status_code == 200
    after = await get_session(client, "s-get")
    assert after["messageCount"] == 4  # live only
    assert after["totalMessageCount"] == 12
    assert after["keepRecentCount"] == 4
    assert after["pendingTokens"] == 0
    assert after["commitCount"] == 1
    assert is_iso_utc(after["lastCommitAt"])
    assert len(after["archives"]) == 1
    summary = after["archives"][0]
    assert summary["archiveId"] == "archive_001"
    assert summary["status"] == "completed"
    assert summary["messageCount"] == 8
    assert is_iso_utc(summary["createdAt"]) and is_iso_utc(summary["completedAt"])
    assert summary["error"] is None

    await ingest(client, "s-get", [user("one more"), assistant("and its answer")])
    later = await get_session(client, "s-get")
    assert (later["messageCount"], later["totalMessageCount"]) == (6, 14)
    assert later["pendingTokens"] > 0  # two messages beyond the keep window of 4


async def test_get_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/sessions/never-seen")
    assert_envelope(response, 404, "NOT_FOUND")


# --- commit -----------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [-1, 10001, "three", 2.5, None])
async def test_commit_rejects_keep_recent_count_out_of_range(
    client: httpx.AsyncClient, keep: Any
) -> None:
    await ingest(client, "s-range", [user("a"), assistant("b")])
    before = await get_session(client, "s-range")
    response = await commit(client, "s-range", keepRecentCount=keep)
    body = assert_envelope(response, 400, "INVALID_ARGUMENT")
    errors = body["error"]["details"]["errors"]
    assert errors and all(set(e) == {"loc", "message"} for e in errors)
    assert any("keepRecentCount" in e["loc"] for e in errors)
    assert all(isinstance(e["message"], str) and e["message"] for e in errors)
    assert await get_session(client, "s-range") == before


async def test_commit_accepts_range_bounds(client: httpx.AsyncClient) -> None:
    await ingest(client, "s-bounds", [user("first"), assistant("second"), user("third")])
    upper = await commit(client, "s-bounds", keepRecentCount=10000)
    assert upper.status_code == 200, upper.text
    assert upper.json()["status"] == "skipped"
    assert upper.json()["reason"] == "all_within_keep_window"
    assert (await get_session(client, "s-bounds"))["keepRecentCount"] == 10000

    lower = await commit(client, "s-bounds", keepRecentCount=0, wait=True)
    assert lower.status_code == 200, lower.text
    assert lower.json()["status"] == "accepted"
    assert lower.json()["archiveId"] == "archive_001"
    assert (await get_session(client, "s-bounds"))["messageCount"] == 0


async def test_commit_skipped_reasons(client: httpx.AsyncClient) -> None:
    unknown = await commit(client, "no-such-session", keepRecentCount=0)
    assert_envelope(unknown, 404, "NOT_FOUND")

    await ingest(client, "s-skip", [user("one"), assistant("two"), user("three")])
    within = await commit(client, "s-skip", keepRecentCount=3)
    assert within.status_code == 200
    assert within.json()["status"] == "skipped"
    assert within.json()["reason"] == "all_within_keep_window"
    assert within.json().get("archiveId") is None
    state = await get_session(client, "s-skip")
    assert (state["commitCount"], state["messageCount"], state["archives"]) == (0, 3, [])

    accepted = await commit(client, "s-skip", keepRecentCount=0, wait=True)
    assert accepted.json()["status"] == "accepted"
    empty = await commit(client, "s-skip", keepRecentCount=0)
    assert empty.status_code == 200
    assert empty.json()["status"] == "skipped"
    assert empty.json()["reason"] == "no_messages"
    assert empty.json().get("archiveId") is None
    state = await get_session(client, "s-skip")
    assert state["commitCount"] == 1
    assert [a["archiveId"] for a in state["archives"]] == ["archive_001"]
    assert state["pendingTokens"] == 0


async def test_commit_without_body_uses_defaults(client: httpx.AsyncClient) -> None:
    await ingest(client, "s-nobody", [user("x1"), assistant("x2")])
    response = await client.post("/sessions/s-nobody/commit")
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "accepted"
    assert (await get_session(client, "s-nobody"))["messageCount"] == 0


async def test_commit_wait_returns_completed_archive(client: httpx.AsyncClient) -> None:
    await ingest(
        client,
        "s-wait",
        [
            user("please check disk usage"),
            tool_call("c1", "shell", {"cmd": "df -h"}),
            tool_result("c1", "shell", "/dev/sda1 40%"),
            assistant("disk is at 40 percent"),
            user("thanks"),
        ],
    )
    response = await commit(client, "s-wait", keepRecentCount=1, wait=True, timeoutMs=30000)
    assert response.status_code == 200
    body = response.json()
    assert body["sessionId"] == "s-wait"
    assert body["status"] == "accepted"
    assert body["archiveId"] == "archive_001"
    assert body["archive"]["archiveId"] == "archive_001"
    assert body["archive"]["status"] == "completed"
    assert body["archive"]["messageCount"] == 4
    assert body["archive"]["error"] is None
    view = (await client.get("/archives/archive_001", params={"sessionId": "s-wait"})).json()
    assert view["status"] == "completed" and view["overview"]


async def test_commit_without_wait_completes_in_background(client: httpx.AsyncClient) -> None:
    await ingest(client, "s-nowait", [user("background please"), assistant("sure")])
    response = await commit(client, "s-nowait", keepRecentCount=0, wait=False)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "accepted" and body["archiveId"] == "archive_001"
    assert "archive" not in body or body["archive"] is None
    for _ in range(200):
        archives = (await get_session(client, "s-nowait"))["archives"]
        if archives[0]["status"] == "completed":
            break
        assert archives[0]["status"] in ("pending", "running")
        await asyncio.sleep(0.05)
    assert archives[0]["status"] == "completed"


async def test_commit_keeps_tool_exchange_together(client: httpx.AsyncClient) -> None:
    await ingest(
        client,
        "s-split",
        [
            user("run it"),
            tool_call("c9", "build", {"target": "all"}),
            tool_result("c9", "build", "ok"),
        ],
    )
    # Keeping one message would separate the call from its result: the split moves earlier.
    response = await commit(client, "s-split", keepRecentCount=1, wait=True)
    assert response.json()["status"] == "accepted"
    assert response.json()["archive"]["messageCount"] == 1
    assert (await get_session(client, "s-split"))["messageCount"] == 2


# --- delete -----------------------------------------------------------------------------------


async def test_delete_removes_messages_archives_and_index(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    await ingest(
        client, "s-del", [user("zebraquartz archived one"), assistant("zebraquartz archived two")]
    )
    await commit(client, "s-del", keepRecentCount=0, wait=True)
    await ingest(client, "s-del", [user("zebraquartz second archive")])
    await commit(client, "s-del", keepRecentCount=0, wait=True)
    await ingest(client, "s-del", [user("zebraquartz still live")])
    await ingest(client, "s-keep", [user("ottermango archived"), assistant("ottermango reply")])
    await commit(client, "s-keep", keepRecentCount=1, wait=True)

    assert row_counts(db_path, "s-del") == {"sessions": 1, "messages": 4, "archives": 2, "jobs": 2}
    # The archived messages are in the text index, the live one is not (it is never searched).
    assert fts_count(db_path, "message_fts", "zebraquartz") == 3
    assert fts_count(db_path, "archive_fts", "zebraquartz") == 2  # both overviews
    keep_before = row_counts(db_path, "s-keep")
    keep_fts_before = fts_count(db_path, "message_fts", "ottermango")
    keep_view_before = await get_session(client, "s-keep")
    keep_archive_before = (
        await client.get("/archives/archive_001", params={"sessionId": "s-keep"})
    ).json()

    response = await client.delete("/sessions/s-del")
    assert response.status_code == 200, response.text
    assert response.json() == {"sessionId": "s-del", "deleted": {"messages": 4, "archives": 2}}

    assert row_counts(db_path, "s-del") == {"sessions": 0, "messages": 0, "archives": 0, "jobs": 0}
    assert fts_count(db_path, "message_fts", "zebraquartz") == 0
    assert fts_count(db_path, "archive_fts", "zebraquartz") == 0
    assert_envelope(await client.get("/sessions/s-del"), 404, "NOT_FOUND")
    assert_envelope(
        await client.get("/archives/archive_001", params={"sessionId": "s-del"}), 404, "NOT_FOUND"
    )
    assert_envelope(
        await client.post("/archives/search", json={"sessionId": "s-del", "query": "zebraquartz"}),
        404,
        "NOT_FOUND",
    )
    assert_envelope(await client.delete("/sessions/s-del"), 404, "NOT_FOUND")

    # The other session is untouched.
    assert row_counts(db_path, "s-keep") == keep_before
    assert fts_count(db_path, "message_fts", "ottermango") == keep_fts_before == 1
    assert await get_session(client, "s-keep") == keep_view_before
    assert (
        await client.get("/archives/archive_001", params={"sessionId": "s-keep"})
    ).json() == keep_archive_before
    found = await client.post(
        "/archives/search", json={"sessionId": "s-keep", "query": "ottermango"}
    )
    assert [h["seq"] for h in found.json()["results"] if h["kind"] == "message"] == [1]


async def test_deleted_session_id_starts_fresh(client: httpx.AsyncClient, db_path: Path) -> None:
    await ingest(client, "s-again", [user("old content pelicanfig")])
    await commit(client, "s-again", keepRecentCount=0, wait=True)
    assert (await client.delete("/sessions/s-again")).status_code == 200
    # The same messages are new again after a delete, and numbering restarts.
    await ingest(client, "s-again", [user("new content")])
    state = await get_session(client, "s-again")
    assert (
        state["messageCount"],
        state["totalMessageCount"],
        state["commitCount"],
        state["archives"],
    ) == (1, 1, 0, [])
    response = await commit(client, "s-again", keepRecentCount=0, wait=True)
    assert response.json()["archiveId"] == "archive_001"
    view = (await client.get("/archives/archive_001", params={"sessionId": "s-again"})).json()
    assert [m["message"]["content"] for m in view["messages"]] == ["new content"]
    assert fts_count(db_path, "message_fts", "pelicanfig") == 0


async def test_delete_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    assert_envelope(await client.delete("/sessions/never-existed"), 404, "NOT_FOUND")
