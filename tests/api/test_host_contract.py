"""The OpenClaw 2026.9 host contract: commitTurn, replayed history, explicit phases, prompt recall,
uncommitted turns, entry ids and dated messages (the shapes are those the real host sends)."""

from __future__ import annotations

import copy
from typing import Any

from tests.conftest import app_client
from tests.helpers.messages import assistant, tool_call, tool_result, turn, user

SUMMARY = "[Session History Summary]\n"


def host_turn(i: int, call_id: str) -> list[dict[str, Any]]:
    """A tool turn as commitTurn carries it: provider's raw ids, ``details`` on the result."""
    result = tool_result(call_id, "read", f"The launch code is PELICAN-{i}.")
    result["details"] = {"kind": "text", "content": result["content"][0]["text"]}
    return [
        user(
            f"Please read notes {i}",
            idempotencyKey=f"run{i}:user",
            __openclaw={"senderIsOwner": True},
        ),
        {
            **tool_call(call_id, "read", {"path": f"notes{i}.md"}),
            "__openclaw": {"runId": f"run{i}"},
        },
        result,
        assistant(f"The code is PELICAN-{i}.", __openclaw={"runId": f"run{i}"}),
    ]


def as_replayed(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the host hands back to assemble: ids sanitised for replay, no ``details``."""
    out = copy.deepcopy(messages)
    for message in out:
        message.pop("details", None)
        if "toolCallId" in message:
            message["toolCallId"] = "".join(ch for ch in message["toolCallId"] if ch.isalnum())
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "toolCall":
                block["id"] = "".join(ch for ch in block["id"] if ch.isalnum())
    return out


async def commit_turn(client, messages, key, session_id="s1", **extra):  # type: ignore[no-untyped-def]
    body = {
        "sessionId": session_id,
        "sessionKey": "agent:main:e2e",
        "advancementKey": key,
        "messages": messages,
        "isHeartbeat": False,
        "runtimeContext": {"tokenBudget": 32000},
        **extra,
    }
    response = await client.post("/commit-turn", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def assemble(client, messages, session_id="s1", **extra):  # type: ignore[no-untyped-def]
    body = {
        "sessionId": session_id,
        "sessionKey": "agent:main:e2e",
        "messages": messages,
        "tokenBudget": 12000,
        **extra,
    }
    response = await client.post("/assemble", json=body)
    assert response.status_code == 200, response.text
    return response.json()


async def stored_messages(client, session_id="s1") -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Every stored message of the session in order: archive the live ones, read every archive."""
    committed = await client.post(
        f"/sessions/{session_id}/commit", json={"keepRecentCount": 0, "wait": True}
    )
    assert committed.status_code == 200, committed.text
    session = (await client.get(f"/sessions/{session_id}")).json()
    assert session["messageCount"] == 0
    stored: list[dict[str, Any]] = []
    for archive in session["archives"]:
        view = (
            await client.get(f"/archives/{archive['archiveId']}", params={"sessionId": session_id})
        ).json()
        stored += [m["message"] for m in view["messages"]]
    return stored


class TestCommitTurn:
    async def test_a_turn_is_stored_once_and_a_retried_key_is_a_duplicate(self, client):
        messages = host_turn(1, "call_stub_1")
        first = await commit_turn(client, messages, "turn-1")
        assert (
            first["status"] == "committed" and first["ingested"] == 4 and first["duplicates"] == 0
        )
        assert first["commit"]["threshold"] == 16000  # runtimeContext.tokenBudget 32000 x 0.5
        retry = await commit_turn(client, messages, "turn-1")
        assert (
            retry["status"] == "duplicate" and retry["ingested"] == 0 and retry["duplicates"] == 4
        )
        session = (await client.get("/sessions/s1")).json()
        assert session["totalMessageCount"] == 4

    async def test_a_key_stored_by_another_session_is_not_a_duplicate(self, client):
        await commit_turn(client, turn(1), "turn-0", session_id="s2")
        await commit_turn(client, host_turn(1, "call_stub_1"), "turn-1")
        other = await commit_turn(client, host_turn(1, "call_stub_1"), "turn-1", session_id="s2")
        assert other["status"] == "committed" and other["ingested"] == 4

    async def test_the_same_messages_under_a_new_key_store_nothing_twice(self, client):
        messages = host_turn(1, "call_stub_1")
        await commit_turn(client, messages, "turn-1")
        again = await commit_turn(client, messages, "turn-1-replayed")
        assert (
            again["status"] == "committed" and again["ingested"] == 0 and again["duplicates"] == 4
        )

    async def test_turns_are_appended_in_order(self, client):
        turns = [turn(1), host_turn(2, "call_a"), turn(3)]
        for index, messages in enumerate(turns):
            await commit_turn(client, messages, f"turn-{index}")
        assert await stored_messages(client) == [m for t in turns for m in t]

    async def test_heartbeat_turn_is_not_stored(self, client):
        beat = [
            user(
                "[OpenClaw heartbeat poll]",
                provenance={"kind": "internal_system", "sourceTool": "heartbeat"},
            ),
            assistant("NO_REPLY"),
        ]
        body = await commit_turn(client, beat, "beat-1", isHeartbeat=True)
        assert body["status"] == "committed" and body["ingested"] == 0 and body["skipped"] == 2

    async def test_a_turn_past_the_threshold_commits(self, client):
        # The newest 10 messages are the keep window; the 6 before them are pending.
        messages = [m for i in range(8) for m in turn(i, words=100)]
        await commit_turn(client, messages, "big", runtimeContext={"tokenBudget": 400})
        session = (await client.get("/sessions/s1")).json()
        assert session["commitCount"] == 1 and session["archives"][0]["archiveId"] == "archive_001"

    async def test_advancement_key_is_required_and_is_heartbeat_strict(self, client):
        missing = await client.post("/commit-turn", json={"sessionId": "s1", "messages": []})
        assert missing.status_code == 400 and missing.json()["error"]["code"] == "INVALID_ARGUMENT"
        loose = await client.post(
            "/commit-turn",
            json={"sessionId": "s1", "advancementKey": "k", "messages": [], "isHeartbeat": 0},
        )
        assert loose.status_code == 400


class TestReplayedHistory:
    async def test_a_replayed_tool_pair_is_returned_once(self, client):
        first, second = turn(1), host_turn(2, "call_stub_2")
        await commit_turn(client, first, "turn-1")
        await commit_turn(client, second, "turn-2")
        history = as_replayed(first + second)
        body = await assemble(client, history, prompt="and now?", phase="pre_prompt")
        assert body["diagnostics"]["messages"]["reconciled"] == 0
        assert len(body["messages"]) == 6
        results = [m for m in body["messages"] if m["role"] == "toolResult"]
        assert len(results) == 1
        session = (await client.get("/sessions/s1")).json()
        assert session["totalMessageCount"] == 6

    async def test_after_compaction_the_replayed_pair_is_not_re_added_after_the_summary(
        self, client
    ):
        first, second = turn(1), host_turn(2, "call_stub_2")
        await commit_turn(client, first, "turn-1")
        await commit_turn(client, second, "turn-2")
        compacted = await client.post(
            "/compact", json={"sessionId": "s1", "trigger": "overflow", "currentTokenCount": 9000}
        )
        assert compacted.json()["compacted"] is True
        body = await assemble(
            client, as_replayed(first + second), prompt="go on", phase="pre_prompt"
        )
        assert len(body["messages"]) == 1 and body["messages"][0]["content"].startswith(SUMMARY)
        assert body["diagnostics"]["messages"]["reconciled"] == 0


class TestUncommittedTurns:
    async def test_a_turn_missing_from_the_store_is_captured_once_in_order(self, client):
        first, lost, third = turn(1), host_turn(2, "call_x_2"), turn(3)
        await commit_turn(client, first, "turn-1")
        # turn 2's commit never reached the service; the host shows it in the next history.
        body = await assemble(
            client, as_replayed(first + lost), prompt="turn three", phase="pre_prompt"
        )
        assert body["diagnostics"]["messages"]["reconciled"] == 4
        await commit_turn(client, third, "turn-3")
        # The host's outbox retries turn 2 later, with the raw ids: nothing is stored twice.
        retry = await commit_turn(client, lost, "turn-2")
        assert retry["ingested"] == 0 and retry["duplicates"] == 4
        again = await assemble(
            client, as_replayed(first + lost + third), prompt="four", phase="pre_prompt"
        )
        assert again["diagnostics"]["messages"]["reconciled"] == 0 and len(again["messages"]) == 8
        stored = await stored_messages(client)
        assert [m["timestamp"] for m in stored] == [m["timestamp"] for m in first + lost + third]

    async def test_a_heartbeat_turn_at_the_tail_is_not_captured(self, client):
        first = turn(1)
        await commit_turn(client, first, "turn-1")
        beat = [
            user(
                "[OpenClaw heartbeat poll]",
                provenance={"kind": "internal_system", "sourceTool": "heartbeat"},
            ),
            assistant("HEARTBEAT_OK"),
        ]
        body = await assemble(client, first + beat, prompt="hello", phase="pre_prompt")
        assert body["diagnostics"]["messages"]["reconciled"] == 0
        assert body["messages"] == first

    async def test_an_unknown_session_is_not_created_by_assemble(self, client):
        body = await assemble(client, turn(1), session_id="nobody", prompt="hi", phase="pre_prompt")
        assert body["diagnostics"]["reason"] == "no_stored_context"
        assert (await client.get("/sessions/nobody")).status_code == 404


class TestPhases:
    async def test_explicit_phase_wins_over_the_fields(self, client):
        await commit_turn(client, turn(1), "turn-1")
        history = turn(1)
        loop = await assemble(
            client, history, phase="tool_loop", prompt="x", availableTools=["read"]
        )
        assert loop["diagnostics"]["phase"] == "tool_loop"
        pre = await assemble(client, history, phase="pre_prompt")
        assert pre["diagnostics"]["phase"] == "pre_prompt"
        bad = await client.post(
            "/assemble", json={"sessionId": "s1", "messages": [], "phase": "later"}
        )
        assert bad.status_code == 400

    async def test_tool_loop_recall_uses_the_prompt_and_appends_the_envelope(self, client):
        added = await client.post(
            "/memories",
            json={"content": "The user prefers green tea without sugar", "category": "preferences"},
        )
        assert added.json()["action"] == "ADD"
        history = turn(1)
        await commit_turn(client, history, "turn-1")
        body = await assemble(
            client,
            history,
            phase="tool_loop",
            prompt="Which tea does the user prefer?",
            availableTools=["read"],
        )
        assert body["messages"][:-1] == history
        envelope = body["messages"][-1]
        assert envelope["role"] == "user" and envelope["timestamp"] == history[-1]["timestamp"]
        text = envelope["content"][0]["text"]
        assert text.startswith("<openviking-context>") and "green tea without sugar" in text
        assert body["diagnostics"]["recall"]["query"] == "Which tea does the user prefer?"
        assert body["estimatedTokens"] > 0

    async def test_tool_loop_without_hits_passes_the_history_through(self, client):
        history = turn(1)
        body = await assemble(
            client, history, phase="tool_loop", prompt="Which tea does the user prefer?"
        )
        assert body["messages"] == history and body["diagnostics"]["reason"] == "no_recall_hits"

    async def test_an_injected_prompt_is_not_recalled_for_again(self, client):
        await client.post(
            "/memories", json={"content": "The user prefers green tea", "category": "preferences"}
        )
        prompt = "<openviking-context>\nx\n</openviking-context>\n\nWhich tea?"
        body = await assemble(client, [], phase="tool_loop", prompt=prompt)
        assert body["messages"] == [] and body["diagnostics"]["reason"] == "already_injected"


class TestCompactionAnswers:
    async def test_first_kept_entry_id_is_never_an_archive_id(self, client):
        await commit_turn(client, turn(1, words=300), "turn-1", admission={"entryId": "entry-1"})
        body = (await client.post("/compact", json={"sessionId": "s1", "trigger": "manual"})).json()
        assert body["compacted"] is True
        assert "firstKeptEntryId" not in body["result"]  # nothing is kept: no host entry to name
        assert body["result"]["details"]["archiveId"] == "archive_001"

    async def test_overflow_with_a_working_memory_still_being_built_waits_for_it(
        self, make_settings
    ):
        async with app_client(make_settings(worker={"fault_delay_ms": 300})) as client:
            await commit_turn(client, [m for i in range(8) for m in turn(i, words=80)], "turn-1")
            scheduled = await client.post(
                "/sessions/s1/commit", json={"keepRecentCount": 0, "wait": False}
            )
            assert scheduled.status_code == 200
            body = (
                await client.post(
                    "/compact",
                    json={"sessionId": "s1", "trigger": "overflow", "currentTokenCount": 50000},
                )
            ).json()
        assert (
            body["ok"] is True
            and body["compacted"] is True
            and body["reason"] == "commit_completed"
        )
        assert body["result"]["summary"].startswith("# Working Memory")
        assert body["result"]["details"]["archiveId"] == "archive_001"

    async def test_every_assembled_message_is_dated(self, client):
        messages = turn(1) + turn(2)
        await commit_turn(client, messages, "turn-1")
        await client.post("/sessions/s1/commit", json={"keepRecentCount": 2, "wait": True})
        body = await assemble(client, messages, prompt="next", phase="pre_prompt")
        # The summary is merged into the first kept user message, which keeps its own time.
        assert body["messages"][0]["content"][0]["text"].startswith(SUMMARY)
        assert all(isinstance(m.get("timestamp"), int) for m in body["messages"])
        assert body["messages"][0]["timestamp"] == messages[2]["timestamp"]


class TestHostBookkeeping:
    async def test_a_nested_tool_record_is_neither_stored_nor_returned(self, client):
        nested = {
            "role": "custom",
            "customType": "openclaw.nested-tool.v1",
            "excludeFromContext": True,
            "content": [],
            "timestamp": 1795416088200,
        }
        messages = host_turn(1, "call_1")
        messages.insert(2, nested)
        body = await commit_turn(client, messages, "turn-1")
        assert body["ingested"] == 4 and body["skipped"] == 1
        assembled = await assemble(client, [], prompt="next", phase="pre_prompt")
        assert [m["role"] for m in assembled["messages"]] == [
            "user",
            "assistant",
            "toolResult",
            "assistant",
        ]


class TestArchiveIds:
    async def test_the_summary_names_the_archives_behind_it(self, client):
        await commit_turn(client, turn(1, words=100), "turn-1")
        await client.post("/sessions/s1/commit", json={"keepRecentCount": 0, "wait": True})
        await commit_turn(client, turn(2, words=100), "turn-2")
        await client.post("/sessions/s1/commit", json={"keepRecentCount": 0, "wait": True})
        body = await assemble(client, [], prompt="next", phase="pre_prompt")
        summary = body["messages"][0]["content"]
        assert summary.startswith(SUMMARY)
        assert summary.endswith("archive_001 (2 messages), archive_002 (2 messages)")
        assert "archive expand tool" in summary
