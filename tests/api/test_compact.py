"""POST /compact: every outcome of docs/api.md, honest token counts."""

from __future__ import annotations

from sqlalchemy import update

from app.db.models import Job
from tests.conftest import app_client
from tests.helpers.messages import turn


async def after_turn(client, messages, session_id="s1"):  # type: ignore[no-untyped-def]
    response = await client.post(
        "/after-turn", json={"sessionId": session_id, "messages": messages}
    )
    assert response.status_code == 200
    return response.json()


async def compact(client, session_id="s1", **extra):  # type: ignore[no-untyped-def]
    response = await client.post("/compact", json={"sessionId": session_id, **extra})
    assert response.status_code == 200, response.text
    return response.json()


async def test_unknown_session(client):
    assert await compact(client, "nobody") == {
        "ok": True,
        "compacted": False,
        "reason": "session_not_found",
    }


async def test_completed_compaction_reduces_tokens(client):
    history = [m for i in range(30) for m in turn(i, words=60)]
    await after_turn(client, history)
    body = await compact(client, customInstructions="focus on decisions")
    assert body["ok"] is True and body["compacted"] is True and body["reason"] == "commit_completed"
    result = body["result"]
    assert result["tokensAfter"] < result["tokensBefore"]
    # A host transcript entry id, never an archive id: nothing was kept, so there is none.
    assert "firstKeptEntryId" not in result
    assert result["summary"].startswith("# Working Memory")
    assert result["details"]["archiveId"] == "archive_001"
    assert result["details"]["messagesArchived"] == 60
    session = (await client.get("/sessions/s1")).json()
    assert session["messageCount"] == 0 and session["archives"][0]["status"] == "completed"


async def test_nothing_left_to_compact(client):
    history = turn(1)
    await after_turn(client, history)
    await compact(client)
    again = await compact(client)
    assert (
        again["ok"] is True
        and again["compacted"] is False
        and again["reason"] == "nothing_to_compact"
    )
    # Honest: the summary is all that is left and nothing shrank.
    assert again["result"]["tokensAfter"] == again["result"]["tokensBefore"] > 0
    assert again["result"]["details"]["messagesArchived"] == 0


async def test_current_token_count_is_tokens_before(client):
    await after_turn(client, [m for i in range(10) for m in turn(i, words=40)])
    body = await compact(client, currentTokenCount=99999)
    assert body["result"]["tokensBefore"] == 99999
    assert body["compacted"] is True


async def test_not_reduced_is_never_reported_as_compacted(client):
    await after_turn(client, turn(1, words=2))
    body = await compact(client, currentTokenCount=1)
    assert body["compacted"] is False
    assert body["ok"] is True
    assert body["result"]["tokensAfter"] >= body["result"]["tokensBefore"] == 1


async def test_wait_false_schedules(client):
    await after_turn(client, turn(1))
    body = await compact(client, wait=False)
    assert body["reason"] == "commit_scheduled" and body["compacted"] is False
    assert body["result"]["details"]["archiveId"] == "archive_001"


async def test_timeout_reports_and_archive_completes_later(make_settings):
    harness = app_client(make_settings(worker={"fault_delay_ms": 600}))
    async with harness as client:
        await after_turn(client, turn(1))
        body = await compact(client, timeoutMs=50)
        assert body == {
            "ok": False,
            "compacted": False,
            "reason": "commit_timeout",
            "result": {
                "tokensBefore": body["result"]["tokensBefore"],
                "details": {
                    "archiveId": "archive_001",
                    "messagesArchived": 2,
                    "durationMs": body["result"]["details"]["durationMs"],
                },
            },
        }
        committed = await client.post(
            "/sessions/s1/commit", json={"wait": True, "keepRecentCount": 0}
        )
        assert committed.json()["reason"] == "no_messages"
        for _ in range(100):
            archives = (await client.get("/sessions/s1")).json()["archives"]
            if archives[0]["status"] == "completed":
                break
            import asyncio

            await asyncio.sleep(0.05)
        assert archives[0]["status"] == "completed"


async def test_failed_archive_reports_commit_failed(make_settings):
    harness = app_client(make_settings(worker={"enabled": False}))
    async with harness as client:
        await after_turn(client, turn(1))
        uow = harness.app.state.services.uow
        # Simulate Phase 2 having failed for good.
        from app.db.models import Archive

        body_task = compact(client, timeoutMs=2000)
        import asyncio

        task = asyncio.ensure_future(body_task)
        await asyncio.sleep(0.2)
        with uow.write() as db:
            db.execute(
                update(Archive).values(
                    status="failed", error="model exploded", error_stage="working_memory"
                )
            )
            db.execute(update(Job).values(status="failed"))
        body = await task
    assert body["ok"] is False and body["compacted"] is False and body["reason"] == "commit_failed"
    assert body["result"]["details"]["error"] == "model exploded"
