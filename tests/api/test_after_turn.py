"""POST /after-turn: idempotent capture, sanitation, skipping, the window and auto-commit."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pysqlite3.dbapi2 as sqlite

from app.core.rules.messages import message_tokens
from tests.conftest import app_client
from tests.helpers.messages import assistant, tool_call, tool_result, turn, user


def stored_rows(db_path: Path, session_id: str = "s1") -> list[tuple[int, str]]:
    conn = sqlite.connect(str(db_path))
    try:
        return conn.execute(
            "SELECT m.seq, m.body FROM messages m JOIN agent_sessions s ON s.id = m.session_pk "
            "WHERE s.session_id = ? ORDER BY m.seq",
            (session_id,),
        ).fetchall()
    finally:
        conn.close()


async def after_turn(client, messages, pre=0, session_id="s1", **extra):  # type: ignore[no-untyped-def]
    body = {"sessionId": session_id, "messages": messages, "prePromptMessageCount": pre, **extra}
    response = await client.post("/after-turn", json=body)
    assert response.status_code == 200, response.text
    return response.json()


class TestIdempotency:
    async def test_same_snapshot_twice_stores_nothing_the_second_time(self, client, db_path):
        snapshot = turn(1) + turn(2)
        first = await after_turn(client, snapshot)
        second = await after_turn(client, snapshot)
        assert (first["ingested"], first["duplicates"]) == (4, 0)
        assert (second["ingested"], second["duplicates"]) == (0, 4)
        assert len(stored_rows(db_path)) == 4

    async def test_overlapping_windows_store_each_message_once_in_order(self, client, db_path):
        history = turn(1)
        call = tool_call("c1", "exec", {"command": "ls"})
        result = tool_result("c1", "exec", "a.txt")
        final = assistant("done")
        # The tool loop resends earlier messages with a stale prePromptMessageCount.
        await after_turn(client, [*history, call], pre=0)
        await after_turn(client, [*history, call, result], pre=1)
        await after_turn(client, [*history, call, result, final], pre=2)
        bodies = [json.loads(body) for _, body in stored_rows(db_path)]
        assert bodies == [*history, call, result, final]
        assert [seq for seq, _ in stored_rows(db_path)] == [1, 2, 3, 4, 5]

    async def test_identical_messages_repeated_in_one_snapshot_are_both_stored(
        self, client, db_path
    ):
        repeated = {"role": "user", "content": "ok"}
        snapshot = [repeated, assistant("a"), dict(repeated)]
        await after_turn(client, snapshot)
        again = await after_turn(client, snapshot)
        assert again["ingested"] == 0
        assert [json.loads(b)["content"] for _, b in stored_rows(db_path)].count("ok") == 2

    async def test_ingest_single_message_form(self, client, db_path):
        message = user("single ingest")
        response = await client.post("/after-turn", json={"sessionId": "s1", "message": message})
        assert response.json()["ingested"] == 1
        assert json.loads(stored_rows(db_path)[0][1]) == message


class TestSkipping:
    async def test_heartbeat_stores_nothing(self, client, db_path):
        body = await after_turn(client, turn(1), isHeartbeat=True)
        assert (body["ingested"], body["skipped"]) == (0, 2)
        assert stored_rows(db_path) == []

    async def test_bypassed_session_stores_nothing(self, make_settings, db_path):
        settings = make_settings(capture={"bypass_session_patterns": ["agent:*:cron:**"]})
        async with app_client(settings) as client:
            body = await after_turn(client, turn(1), sessionKey="agent:main:cron:nightly:1")
            kept = await after_turn(
                client, turn(2), session_id="s2", sessionKey="agent:main:direct:1"
            )
        assert body["ingested"] == 0 and body["skipped"] == 2
        assert kept["ingested"] == 2
        assert stored_rows(db_path) == []
        assert len(stored_rows(db_path, "s2")) == 2

    async def test_system_messages_are_skipped(self, client, db_path):
        body = await after_turn(
            client, [{"role": "system", "content": "rules"}, user("hello there")]
        )
        assert (body["ingested"], body["skipped"]) == (1, 1)

    async def test_pre_prompt_count_beyond_the_array_is_clamped(self, client, db_path):
        body = await after_turn(client, turn(1), pre=99)
        assert body["ingested"] == 0


class TestSanitation:
    async def test_injected_context_is_stripped_before_storing(self, client, db_path):
        injected = "<openviking-context>\nSource: openviking-auto-recall\nmemo\n</openviking-context>\n\nreal question here"
        await after_turn(client, [user(injected)])
        stored = json.loads(stored_rows(db_path)[0][1])
        assert stored["content"] == "real question here"

    async def test_relevant_memories_and_metadata_stripped_from_text_blocks(self, client, db_path):
        message = {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "<relevant-memories>x</relevant-memories>"},
                {"type": "text", "text": "kept\nwith newline"},
                {
                    "type": "toolCall",
                    "id": "c9",
                    "name": "read",
                    "arguments": {"path": "<relevant-memories>"},
                },
            ],
            "custom": {"unknown": True},
        }
        await after_turn(client, [message])
        stored = json.loads(stored_rows(db_path)[0][1])
        assert stored["content"] == [message["content"][1], message["content"][2]]
        assert stored["custom"] == {"unknown": True}

    async def test_message_left_empty_is_dropped(self, client, db_path):
        body = await after_turn(client, [user("<relevant-memories>only this</relevant-memories>")])
        assert body["ingested"] == 0 and body["skipped"] == 1

    async def test_tool_result_stored_in_full(self, client, db_path):
        big = "line\n" * 20000
        await after_turn(
            client, [tool_call("c1", "cat", {"p": "x"}), tool_result("c1", "cat", big)]
        )
        stored = json.loads(stored_rows(db_path)[1][1])
        assert stored["content"][0]["text"] == big


class TestWindowAndAutoCommit:
    async def test_pending_tokens_follow_the_window(self, make_settings):
        settings = make_settings(commit={"keep_recent_count": 2, "token_threshold_ratio": 1.0})
        texts = ["a" * 400, "b" * 800, "c" * 1200, "d" * 1600, "e" * 2000]  # 100..500 tokens
        async with app_client(settings) as client:
            body = None
            for text in texts:
                body = await after_turn(client, [{"role": "user", "content": text}], session_id="w")
            session = (await client.get("/sessions/w")).json()
        # [100, 200, 300, 400, 500] with keep 2 -> 600 (reference example).
        assert body["pendingTokens"] == 600
        assert session["pendingTokens"] == 600

    async def test_auto_commit_fires_at_half_the_budget_with_keep_ten(self, client):
        budget = 4000
        threshold = math.floor(budget * 0.5)
        messages = []
        fired = None
        for i in range(40):
            messages += turn(i, words=30)
            body = await after_turn(client, messages, pre=len(messages) - 2, tokenBudget=budget)
            if body["commit"]["triggered"]:
                fired = body
                break
        assert fired is not None
        assert fired["commit"] == {
            "triggered": True,
            "archiveId": "archive_001",
            "reason": "threshold",
            "threshold": threshold,
            "keepRecentCount": 10,
        }
        session = (await client.get("/sessions/s1")).json()
        assert session["messageCount"] == 10
        assert session["keepRecentCount"] == 10
        assert fired["pendingTokens"] == 0

    async def test_below_threshold_reports_the_threshold(self, client):
        body = await after_turn(client, turn(1), tokenBudget=100000)
        assert body["commit"] == {
            "triggered": False,
            "reason": "below_threshold",
            "threshold": 50000,
        }

    async def test_threshold_uses_runtime_context_budget(self, client):
        body = await after_turn(client, turn(1), runtimeContext={"tokenBudget": 1000})
        assert body["commit"]["threshold"] == 500

    async def test_compact_recommended_above_seventy_percent(self, make_settings):
        settings = make_settings(commit={"token_threshold_ratio": 1.0})
        async with app_client(settings) as client:
            message = user("x" * 3000)  # 750 tokens
            body = await after_turn(client, [message], tokenBudget=1000)
        assert message_tokens(message) > 700
        assert body["compactRecommended"] is True


class TestConcurrency:
    async def _run_clients(
        self, client, sessions: list[str], turns: int, clients: int, serial_per_session: bool
    ) -> dict[str, list]:
        """``clients`` concurrent senders; with ``serial_per_session`` a session's turns are sent one
        at a time (as a host does), otherwise turns of one session race each other."""
        transcripts: dict[str, list] = {s: [] for s in sessions}
        locks = {s: asyncio.Lock() for s in sessions}
        work = [(s, t) for t in range(turns) for s in sessions]
        queue: asyncio.Queue = asyncio.Queue()
        for item in work:
            queue.put_nowait(item)

        async def worker() -> None:
            while not queue.empty():
                session_id, t = queue.get_nowait()
                async with locks[session_id]:
                    transcript = transcripts[session_id]
                    pre = len(transcript)
                    transcript.extend(
                        [user(f"{session_id} turn {t}"), assistant(f"{session_id} answer {t}")]
                    )
                    snapshot = list(transcript)
                    if serial_per_session:
                        await after_turn(
                            client, snapshot, pre=pre, session_id=session_id, tokenBudget=10_000_000
                        )
                if not serial_per_session:
                    await after_turn(
                        client, snapshot, pre=pre, session_id=session_id, tokenBudget=10_000_000
                    )

        await asyncio.gather(*(worker() for _ in range(clients)))
        return transcripts

    async def test_eight_clients_fifty_turns_one_session(self, client, db_path):
        transcripts = await self._run_clients(
            client, ["one"], turns=50, clients=8, serial_per_session=False
        )
        rows = stored_rows(db_path, "one")
        assert [seq for seq, _ in rows] == list(range(1, 101))
        assert sorted(b for _, b in rows) == sorted(
            json.dumps(m, separators=(",", ":")) for m in transcripts["one"]
        )

    async def test_eight_clients_many_sessions(self, client, db_path):
        sessions = [f"s{i}" for i in range(8)]
        transcripts = await self._run_clients(
            client, sessions, turns=50, clients=8, serial_per_session=True
        )
        for session_id in sessions:
            rows = stored_rows(db_path, session_id)
            assert [seq for seq, _ in rows] == list(range(1, 101))
            assert [json.loads(b) for _, b in rows] == transcripts[session_id]

    async def test_racing_duplicate_snapshots_store_once(self, client, db_path):
        snapshot = turn(1) + turn(2) + turn(3)
        results = await asyncio.gather(*(after_turn(client, snapshot) for _ in range(8)))
        assert sum(r["ingested"] for r in results) == 6
        assert [seq for seq, _ in stored_rows(db_path)] == [1, 2, 3, 4, 5, 6]
