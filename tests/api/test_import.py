"""POST /import/{source}: a host's transcript as JSON Lines, stored as the hooks stored it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx

from tests.helpers.host_store import event_lines, live_stored, session_id
from tests.helpers.transcripts import session_events

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CLAUDE = next((FIXTURES / "claude-code").glob("*/*.jsonl"))
CODEX = next((FIXTURES / "codex").glob("**/*.jsonl"))


async def post_import(
    client: httpx.AsyncClient, source: str, lines: list[str], **params: str
) -> dict[str, Any]:
    response = await client.post(
        f"/import/{source}",
        content="\n".join(lines) + "\n",
        params=params,
        headers={"content-type": "application/x-ndjson"},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def stored_messages(client: httpx.AsyncClient, sid: str) -> list[dict[str, Any]]:
    """Every stored message of the session in order: archive everything, read the archives."""
    commit = await client.post(f"/sessions/{sid}/commit", json={"keepRecentCount": 0, "wait": True})
    assert commit.status_code == 200, commit.text
    session = (await client.get(f"/sessions/{sid}")).json()
    rows: list[dict[str, Any]] = []
    for archive in session["archives"]:
        view = await client.get(f"/archives/{archive['archiveId']}", params={"sessionId": sid})
        rows += view.json()["messages"]
    return [row["message"] for row in sorted(rows, key=lambda r: r["seq"])]


async def test_the_real_host_store_is_stored_as_the_live_hooks_stored_it(client):
    answer = await post_import(client, "openclaw", event_lines())
    live = live_stored()
    assert answer["sessions"] == 1 and answer["messages"] == len(live) == 12
    assert answer["problems"] == [] and answer["duplicates"] == 0
    assert answer["skipped"]["bookkeeping entry (custom)"] == 7
    stored = await stored_messages(client, session_id())
    # Same messages, same order, roles, tool call and result, host timestamps, sanitation (the
    # cut emoji made U+FFFD, the trailing newline of an answer trimmed).
    assert stored == [row["message"] for row in live]
    roles = [m["role"] for m in stored]
    assert roles[2:6] == ["user", "assistant", "toolResult", "assistant"]
    assert stored[3]["content"][0]["id"] == stored[4]["toolCallId"] == "call_stub_2"
    assert stored[7]["content"][0]["text"].endswith("\ufffd")


async def test_importing_twice_stores_nothing(client):
    await post_import(client, "openclaw", event_lines())
    again = await post_import(client, "openclaw", event_lines())
    assert again["messages"] == 0 and again["duplicates"] == 12 and again["archives"] == 0
    session = (await client.get(f"/sessions/{session_id()}")).json()
    assert session["totalMessageCount"] == 12


async def test_a_later_live_turn_of_the_imported_session_is_not_stored_twice(client):
    await post_import(client, "openclaw", event_lines())
    last_turn = [row["message"] for row in live_stored()[-2:]]
    new = {"role": "user", "content": "PLAIN-6: and now?", "timestamp": 1796162030000}
    body = {
        "sessionId": session_id(),
        "sessionKey": "agent:main:import-fixture",
        "advancementKey": "turn-after-import",
        "messages": [*last_turn, new],
    }
    response = await client.post("/commit-turn", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["ingested"] == 1
    assert (await client.get(f"/sessions/{session_id()}")).json()["totalMessageCount"] == 13


async def test_bad_lines_are_reported_by_line_number_and_skipped(client):
    lines = event_lines()
    lines.insert(5, '{"type": "message", "message": ')  # cut short
    lines.insert(8, "[1, 2]")
    answer = await post_import(client, "openclaw", lines)
    assert [(p["source"], p["line"]) for p in answer["problems"]] == [
        ("request", 6),
        ("request", 9),
    ]
    assert "not JSON" in answer["problems"][0]["error"]
    assert answer["problems"][1]["error"] == "not a JSON object"
    assert answer["messages"] == 12  # every good line of the session is stored


async def test_a_body_that_is_not_utf8_is_refused_and_stores_nothing(client):
    response = await client.post("/import/openclaw", content=b"\xff\xfe{}\n")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_ARGUMENT"


async def test_an_empty_body_is_refused(client):
    response = await client.post("/import/codex", content=b"\n \n")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the body holds no transcript line"


async def test_a_transcript_that_names_no_session_needs_a_session_id(client):
    lines = [line for line in event_lines() if '"type":"session"' not in line]
    refused = await client.post("/import/openclaw", content="\n".join(lines))
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == "the transcript names no session: give ?sessionId="
    answer = await post_import(client, "openclaw", lines, sessionId="named-here")
    assert answer["messages"] == 12
    assert (await client.get("/sessions/named-here")).json()["totalMessageCount"] == 12


async def test_an_unknown_source_is_refused(client):
    response = await client.post("/import/cursor", content=b"{}\n")
    assert response.status_code == 400


async def test_claude_code_session_pairs_tool_calls_and_skips_bookkeeping(client):
    lines = CLAUDE.read_text().splitlines()
    answer = await post_import(client, "claude-code", lines)
    assert [(p["line"], p["error"][:8]) for p in answer["problems"]] == [(8, "not JSON")]
    assert answer["skipped"] == {
        "bookkeeping entry (summary)": 1,
        "bookkeeping entry (system)": 1,
        "host meta message": 1,
        "subagent (sidechain) message": 1,
    }
    stored = await stored_messages(client, CLAUDE.stem)
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult", "assistant"]
    # The thinking block and the tool call, streamed on two lines, are one answer.
    assert [b["type"] for b in stored[1]["content"]] == ["thinking", "toolCall"]
    call, result = stored[1]["content"][1], stored[2]
    assert call == {
        "type": "toolCall",
        "id": "toolu_01",
        "name": "Bash",
        "arguments": {"command": "grep -n retry billing/refunds.py"},
    }
    assert (result["toolCallId"], result["toolName"]) == ("toolu_01", "Bash")
    assert result["content"] == [{"type": "text", "text": "41: for attempt in range(2):"}]
    assert stored[0]["timestamp"] == 1790931605000  # 2026-10-02T09:00:05Z, the host's time


async def test_codex_rollout_pairs_function_calls_and_skips_host_context(client):
    lines = CODEX.read_text().splitlines()
    answer = await post_import(client, "codex", lines)
    assert [p["line"] for p in answer["problems"]] == [11]
    stored = await stored_messages(client, "5b0e7c1d-8f2a-4e3b-9c4d-1a2b3c4d5e6f")
    assert [m["role"] for m in stored] == ["user", "assistant", "toolResult", "assistant"]
    assert stored[0]["content"].startswith("List the invoice templates")
    call = stored[1]["content"][0]
    assert (call["id"], call["name"], call["arguments"]) == (
        "call_A1",
        "shell",
        {"command": ["ls", "templates"]},
    )
    assert (stored[2]["toolCallId"], stored[2]["toolName"]) == ("call_A1", "shell")
    assert stored[2]["content"][0]["text"] == "invoice-basic.html\ninvoice-nine.html\n"
    assert answer["skipped"]["host context message (user)"] == 1
    assert answer["skipped"]["bookkeeping item (reasoning)"] == 1


async def test_the_imported_history_is_searchable_and_assembled_with_its_working_memory(client):
    events = session_events("long-session", 60)
    answer = await post_import(client, "openclaw", [json.dumps(e) for e in events])
    assert answer["messages"] == 60 and answer["archives"] == 1
    archive = await wait_for_completed_archive(client, "long-session")
    # All but the live window of 10, less the tool call whose result the window keeps.
    assert archive["messageCount"] == 49
    assert (await client.get("/sessions/long-session")).json()["messageCount"] == 11
    found = await client.post(
        "/archives/search",
        json={"sessionId": "long-session", "query": "kv/shard-7", "mode": "keyword"},
    )
    assert found.status_code == 200, found.text
    hits = found.json()["results"]
    assert hits and any("kv/shard-7" in hit["snippet"] for hit in hits)
    assembled = await client.post(
        "/assemble",
        json={"sessionId": "long-session", "messages": [], "prompt": "next?", "tokenBudget": 64000},
    )
    body = assembled.json()
    first = body["messages"][0]
    text = first["content"] if isinstance(first["content"], str) else first["content"][0]["text"]
    assert text.startswith("[Session History Summary]")
    assert archive["archiveId"] in text


async def wait_for_completed_archive(client: httpx.AsyncClient, sid: str) -> dict[str, Any]:
    for _ in range(400):
        archives = (await client.get(f"/sessions/{sid}")).json()["archives"]
        if archives and archives[0]["status"] in ("completed", "failed"):
            assert archives[0]["status"] == "completed", archives[0]
            return dict(archives[0])
        await asyncio.sleep(0.05)
    raise AssertionError("Phase 2 did not finish")
