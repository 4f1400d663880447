"""Commit Phase 1 and the Working Memory across many archives, through the HTTP API."""

from __future__ import annotations

from tests.helpers.messages import assistant, tool_call, tool_result, user


async def after_turn(client, messages, session_id="s1"):  # type: ignore[no-untyped-def]
    response = await client.post(
        "/after-turn", json={"sessionId": session_id, "messages": messages, "tokenBudget": 10**9}
    )
    assert response.status_code == 200
    return response.json()


async def commit(client, keep, session_id="s1", wait=True):  # type: ignore[no-untyped-def]
    response = await client.post(
        f"/sessions/{session_id}/commit", json={"keepRecentCount": keep, "wait": wait}
    )
    assert response.status_code == 200, response.text
    return response.json()


async def test_split_never_separates_a_tool_call_from_its_result(client):
    call = tool_call("c1", "exec", {"command": "make test"})
    result = tool_result("c1", "exec", "ok")
    messages = [user("run the tests"), call, result, assistant("all green")]
    await after_turn(client, messages)
    # keep 2 would cut between the call (index 1) and its result (index 2): the cut moves earlier.
    body = await commit(client, keep=2)
    archive = (await client.get("/archives/archive_001", params={"sessionId": "s1"})).json()
    assert body["status"] == "accepted"
    assert [m["message"] for m in archive["messages"]] == [messages[0]]
    session = (await client.get("/sessions/s1")).json()
    assert session["messageCount"] == 3


async def test_whole_session_inside_one_exchange_is_all_within_keep_window(client):
    call = tool_call("c1", "exec", {"command": "ls"})
    messages = [call, tool_result("c1", "exec", "x"), user("and?")]
    await after_turn(client, messages)
    body = await commit(client, keep=2)
    assert body == {
        "sessionId": "s1",
        "status": "skipped",
        "archiveId": None,
        "reason": "all_within_keep_window",
    }


async def test_archive_ids_are_sequential_and_never_reused(client):
    history: list = []
    ids = []
    for i in range(3):
        history += [user(f"request {i}"), assistant(f"answer {i}")]
        await after_turn(client, history)
        ids.append((await commit(client, keep=0))["archiveId"])
    assert ids == ["archive_001", "archive_002", "archive_003"]
    session = (await client.get("/sessions/s1")).json()
    assert (
        session["commitCount"] == 3
        and session["totalMessageCount"] == 6
        and session["messageCount"] == 0
    )
    assert [a["archiveId"] for a in session["archives"]] == ids


async def test_extractive_working_memory_keeps_facts_across_twenty_archives(client):
    history: list = []
    first_facts = [
        user("Please migrate the billing service; config lives in services/billing/config.yaml"),
        tool_call("c0", "exec", {"command": "alembic upgrade head"}),
        tool_result("c0", "exec", "Error: relation billing_events does not exist", is_error=True),
        assistant(
            "The migration failed. TODO: check whether the staging database has the billing schema?"
        ),
    ]
    history += first_facts
    await after_turn(client, history)
    await commit(client, keep=0)
    for i in range(1, 20):
        history += [
            user(f"Step {i}: update module_{i}.py and decide on retry count {i} because of load"),
            assistant(f"Updated src/pkg/module_{i}.py; we decided on {i} retries."),
        ]
        await after_turn(client, history)
        body = await commit(client, keep=0)
        assert body["archive"]["status"] == "completed"
    last = (await client.get("/archives/archive_020", params={"sessionId": "s1"})).json()
    overview = last["overview"]
    for section in (
        "## Session Title",
        "## Current State",
        "## Task & Goals",
        "## Key Facts & Decisions",
        "## Files & Context",
        "## Errors & Corrections",
        "## Open Issues",
    ):
        assert section in overview
    assert "services/billing/config.yaml" in overview
    assert "relation billing_events does not exist" in overview
    assert "staging database has the billing schema" in overview
    assert "src/pkg/module_19.py" in overview
    assert last["abstract"] and "\n" not in last["abstract"]
