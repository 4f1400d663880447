"""Transcript readers and the import plan: branches, heartbeats, cold archives, repeats, batches."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import zstandard

from app.imports.codex import codex_session
from app.imports.lines import Line, json_lines, to_datetime
from app.imports.openclaw import read_openclaw
from app.imports.openclaw_events import add_events
from app.imports.plan import batches, fingerprints, plan, without_heartbeats
from app.imports.records import HostMessage, Problem, TranscriptSession
from tests.helpers.host_store import AGENT_DB


def message_entry(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent, "message": message}


def user(text: str, ts: int, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts, **extra}


def answer(text: str, ts: int) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": ts}


def read_events(events: list[dict[str, Any]]) -> TranscriptSession:
    session = TranscriptSession("s", "test")
    add_events(session, [Line(i + 1, e) for i, e in enumerate(events)])
    return session


def texts(session: TranscriptSession) -> list[str]:
    out = []
    for item in session.messages:
        content = item.message["content"]
        out.append(content if isinstance(content, str) else content[0]["text"])
    return out


def test_a_rewound_branch_is_left_out_and_counted() -> None:
    session = read_events(
        [
            {"type": "session", "id": "s"},
            message_entry("a", None, user("first", 1)),
            message_entry("b", "a", answer("abandoned answer", 2)),
            message_entry("c", "a", answer("kept answer", 3)),
            {"type": "custom", "customType": "x", "id": "d", "parentId": "c"},
        ]
    )
    assert texts(session) == ["first", "kept answer"]
    assert session.skipped == {
        "session header": 1,
        "not on the conversation's branch (rewound)": 1,
        "bookkeeping entry (custom)": 1,
    }


def test_a_dangling_parent_keeps_every_entry() -> None:
    session = read_events(
        [message_entry("a", "gone", user("one", 1)), message_entry("b", "a", answer("two", 2))]
    )
    assert texts(session) == ["one", "two"]
    session = read_events(
        [message_entry("a", None, user("one", 1)), message_entry("b", "zzz", answer("two", 2))]
    )
    assert texts(session) == ["one", "two"]


def test_host_bookkeeping_messages_are_skipped_and_times_fall_back_to_the_entry() -> None:
    events = [
        message_entry("a", None, {"role": "custom", "content": "nested tool record"}),
        message_entry("b", "a", {"role": "user", "content": "hi", "excludeFromContext": True}),
        {
            **message_entry("c", "b", {"role": "user", "content": "no stamp"}),
            "timestamp": "2026-10-02T09:00:00Z",
        },
    ]
    session = read_events(events)
    assert texts(session) == ["no stamp"]
    assert session.messages[0].at == datetime(2026, 10, 2, 9, tzinfo=UTC)
    assert session.skipped == {
        "bookkeeping message (role custom)": 1,
        "bookkeeping message (role user)": 1,
    }


def test_heartbeat_turns_are_dropped_whole() -> None:
    beat = {"kind": "internal_system", "sourceTool": "heartbeat"}
    session = read_events(
        [
            message_entry("a", None, user("real question", 1)),
            message_entry("b", "a", answer("real answer", 2)),
            message_entry("c", "b", user("HEARTBEAT", 3, provenance=beat)),
            message_entry("d", "c", answer("HEARTBEAT_OK", 4)),
            message_entry("e", "d", user("next", 5)),
        ]
    )
    kept, dropped = without_heartbeats(session.messages)
    assert [m.message["timestamp"] for m in kept] == [1, 2, 5] and dropped == 2


def test_bad_lines_are_numbered_and_lone_surrogates_made_well_formed() -> None:
    problems: list[Problem] = []
    lines = ['{"a": "cut \\ud83d"}', "", "nope", "[1]", '{"b": "\\ud83d\\ude42 pair"}']
    values = [line.value for line in json_lines(lines, "f.jsonl", problems)]
    assert values == [{"a": "cut \ufffd"}, {"b": "\U0001f642 pair"}]
    assert [(p.source, p.line) for p in problems] == [("f.jsonl", 3), ("f.jsonl", 4)]
    assert problems[0].describe().startswith("f.jsonl:3: not JSON")


def test_host_times() -> None:
    assert to_datetime(1790931605000) == datetime(2026, 10, 2, 9, 0, 5, tzinfo=UTC)
    assert to_datetime(1790931605) == datetime(2026, 10, 2, 9, 0, 5, tzinfo=UTC)
    assert to_datetime("2026-10-02T09:00:05.000Z") == datetime(2026, 10, 2, 9, 0, 5, tzinfo=UTC)
    assert to_datetime("2026-10-02T09:00:05") == datetime(2026, 10, 2, 9, 0, 5, tzinfo=UTC)
    assert [to_datetime(v) for v in ("soon", True, None, 10**30, "")] == [None] * 5


def test_plan_counts_repeats_and_sees_a_reordering() -> None:
    assert plan(["a", "b", "a"], {}) == plan(["a", "b", "a"], {"x": 1})
    found = plan(["a", "b", "a", None, "c"], {"a": 1, "b": 1})
    assert (found.first_new, found.new, found.reordering) == (2, 2, False)
    assert plan(["a", "b"], {"a": 1, "b": 1}).first_new is None
    # The session holds b (captured live) but not the a before it: appending a would reorder.
    assert plan(["a", "b"], {"b": 1}).reordering


def test_fingerprints_are_those_of_capture() -> None:
    same = [HostMessage(user("[Mon 2026-11-23 06:41 UTC] hello", 1), None)]
    plain = [HostMessage(user("hello", 1), None)]
    assert fingerprints(same) == fingerprints(plain)  # the host's time prefix is sanitized away
    assert fingerprints([HostMessage({"role": "system", "content": "x"}, None)]) == [None]


def test_batches_start_at_user_messages() -> None:
    roles = ["user", "assistant", "toolResult", "assistant"] * 3
    messages = [HostMessage({"role": r, "content": "x"}, None) for r in roles]
    assert batches(messages, 6) == [(0, 4), (4, 8), (8, 12)]
    assert batches(messages, 100) == [(0, 12)]
    long_turn = [HostMessage({"role": "user", "content": "x"}, None)] + [
        HostMessage({"role": "assistant", "content": "x"}, None) for _ in range(9)
    ]
    assert batches(long_turn, 4) == [(0, 4), (4, 8), (8, 10)]


def _event(i: int, text: str) -> str:
    return json.dumps(message_entry(f"e{i}", f"e{i - 1}" if i else None, user(text, 1000 + i)))


def test_a_session_in_cold_storage_is_read_before_its_recent_events(tmp_path: Path) -> None:
    agent = tmp_path / "agents" / "ops" / "agent"
    agent.mkdir(parents=True)
    db = sqlite3.connect(agent / "openclaw-agent.sqlite")
    db.executescript(
        "CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT);"
        "CREATE TABLE transcript_events (session_id TEXT, seq INTEGER, event_json TEXT,"
        " created_at INTEGER, event_zstd BLOB, PRIMARY KEY (session_id, seq));"
        "CREATE TABLE session_transcript_cold_archives (session_id TEXT PRIMARY KEY,"
        " archive_name TEXT, storage TEXT, archive_blob BLOB, last_seq INTEGER);"
    )
    cold = "".join(_event(i, f"cold {i}") + "\n" for i in range(3))
    frame = zstandard.ZstdCompressor(level=1).compress(_event(4, "hot, compressed").encode())
    db.execute("INSERT INTO session_windows VALUES ('s1', 'agent:ops:k')")
    db.execute(
        "INSERT INTO session_transcript_cold_archives VALUES ('s1', 'x.jsonl.zst', 'sqlite', ?, 2)",
        (zstandard.ZstdCompressor().compress(cold.encode()),),
    )
    db.execute("INSERT INTO transcript_events VALUES ('s1', 2, ?, 1, NULL)", (_event(2, "cold 2"),))
    db.execute("INSERT INTO transcript_events VALUES ('s1', 3, ?, 2, NULL)", (_event(3, "hot"),))
    db.execute("INSERT INTO transcript_events VALUES ('s1', 4, NULL, 3, ?)", (frame,))
    db.execute("INSERT INTO transcript_events VALUES ('s1', 5, NULL, 4, ?)", (b"not zstd",))
    db.commit()
    db.close()
    read = read_openclaw(tmp_path)
    (session,) = read.sessions
    assert (session.session_id, session.session_key, session.agent_id) == (
        "s1",
        "agent:ops:k",
        "ops",
    )
    assert texts(session) == ["cold 0", "cold 1", "cold 2", "hot", "hot, compressed"]
    assert [p.line for p in read.problems] == [5]
    assert read.problems[0].error.startswith("unreadable compressed event (")


def test_an_older_hosts_session_file_takes_its_key_from_the_index(tmp_path: Path) -> None:
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "sessions.json").write_text(json.dumps({"agent:main:web": {"sessionId": "abc"}}))
    header = json.dumps({"type": "session", "id": "abc"})
    (sessions / "abc.jsonl").write_text(f"{header}\n{_event(0, 'old host')}\n")
    read = read_openclaw(tmp_path)
    (session,) = read.sessions
    assert (session.session_id, session.session_key, session.agent_id) == (
        "abc",
        "agent:main:web",
        "main",
    )
    assert texts(session) == ["old host"]
    assert (
        read_openclaw(tmp_path / "agents" / "main" / "sessions" / "abc.jsonl")
        .sessions[0]
        .session_key
        == "agent:main:web"
    )


def test_a_folder_without_a_store_is_one_problem(tmp_path: Path) -> None:
    read = read_openclaw(tmp_path)
    assert (
        read.sessions == [] and read.problems[0].error == "no OpenClaw transcript store found here"
    )


def test_an_older_codex_rollout_holds_the_items_themselves() -> None:
    lines = [
        json.dumps(
            {"id": "old-rollout", "timestamp": "2025-05-01T10:00:00Z", "instructions": None}
        ),
        json.dumps({"record_type": "state"}),
        json.dumps(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ),
        json.dumps({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}),
        json.dumps({"type": "function_call_output", "call_id": "c1", "output": "plain text"}),
    ]
    (session,) = codex_session(lines, "old.jsonl", "fallback").sessions
    assert session.session_id == "old-rollout"
    assert [m.message["role"] for m in session.messages] == ["user", "assistant", "toolResult"]
    assert session.messages[2].message["toolName"] == "shell"
    assert session.messages[2].message["content"] == [{"type": "text", "text": "plain text"}]


def test_the_database_is_read_while_the_host_writes_to_it(tmp_path: Path) -> None:
    """WAL, as the host runs it: a write transaction open meanwhile neither blocks the read nor
    is blocked by it, and the read sees the last committed state."""
    agent = tmp_path / "agents" / "main" / "agent"
    agent.mkdir(parents=True)
    shutil.copyfile(AGENT_DB, agent / AGENT_DB.name)
    host = sqlite3.connect(agent / AGENT_DB.name, isolation_level=None)
    host.execute("PRAGMA journal_mode = WAL")
    host.execute("BEGIN IMMEDIATE")
    host.execute("DELETE FROM transcript_events")  # not committed while the import reads
    read = read_openclaw(tmp_path)
    host.execute("COMMIT")
    host.close()
    assert read.problems == [] and len(read.sessions[0].messages) == 12
