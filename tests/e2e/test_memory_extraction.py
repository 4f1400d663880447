"""Memories learned from archives with a model: ADD, a contradiction that UPDATEs or DELETEs with an
audit row, and a failure lesson that the task gate recalls on a similar task."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest

from tests.conftest import app_client
from tests.e2e.stub_llm import StubLLM, chat_answer
from tests.helpers.messages import assistant, tool_call, tool_result, user

WM = "# Working Memory\n\n## Session Title\nBilling work\n\n## Current State\nWorking.\n"


@pytest.fixture
def stub():  # type: ignore[no-untyped-def]
    server = StubLLM()
    server.url = server.start()  # type: ignore[attr-defined]
    server.default_create = lambda body: chat_answer(WM)
    server.default_update = lambda body: chat_answer(tool_arguments={"sections": {}})
    yield server
    server.stop()


def candidate(
    category: str, title: str, content: str, seqs: list[int] | None = None
) -> dict[str, Any]:
    return {
        "category": category,
        "title": title,
        "abstract": title,
        "content": content,
        "confidence": 0.9,
        "sensitivity": "allowed",
        "observed_at": "",
        "source_seqs": seqs or [],
    }


def propose(*memories: dict[str, Any]):  # type: ignore[no-untyped-def]
    return lambda body: chat_answer(
        tool_arguments={"memories": list(memories)}, tool_name="propose_memories"
    )


def decide_on_first_neighbour(action: str, merged: str | None = None):  # type: ignore[no-untyped-def]
    def respond(body: dict[str, Any]):  # type: ignore[no-untyped-def]
        prompt = body["messages"][-1]["content"]
        target = re.search(r'"id": "([0-9a-f-]{36})"', prompt).group(1)  # type: ignore[union-attr]
        args = {"action": action, "target_id": target, "reason": "the user changed their mind"}
        if merged:
            args["merged_content"] = merged
        return chat_answer(tool_arguments=args, tool_name="decide_memory")

    return respond


def settings_for(make_settings, stub, **extra):  # type: ignore[no-untyped-def]
    return make_settings(llm={"base_url": stub.url, "model": "stub", "max_attempts": 1}, **extra)  # type: ignore[attr-defined]


async def commit(client: httpx.AsyncClient, history: list, new: list) -> dict:
    pre = len(history)
    history.extend(new)
    await client.post(
        "/after-turn", json={"sessionId": "s1", "messages": history, "prePromptMessageCount": pre}
    )
    body = (
        await client.post("/sessions/s1/commit", json={"keepRecentCount": 0, "wait": True})
    ).json()
    assert body["archive"]["status"] == "completed", body
    return body


async def memories(client: httpx.AsyncClient, category: str) -> list[dict]:
    return (await client.get("/memories", params={"category": category})).json()["items"]


async def test_preference_is_learned_then_updated_on_contradiction(
    make_settings, stub, db_path: Path
):
    stub.by_tool["propose_memories"] = [
        propose(
            candidate(
                "preferences",
                "Prefers green tea",
                "The user prefers green tea in the afternoon.",
                [5],
            )
        ),
        propose(
            candidate(
                "preferences",
                "Prefers black coffee",
                "The user now prefers black coffee, not tea.",
                [1],
            )
        ),
    ]
    stub.by_tool["decide_memory"] = [
        decide_on_first_neighbour("UPDATE", "The user prefers black coffee (no longer green tea).")
    ]
    async with app_client(settings_for(make_settings, stub)) as client:
        history: list = []
        await commit(
            client,
            history,
            [
                user("hi"),
                assistant("hello"),
                user("let us plan"),
                assistant("ok"),
                user("I prefer green tea in the afternoon"),
                assistant("noted"),
            ],
        )
        learned = await memories(client, "preferences")
        assert [m["content"] for m in learned] == ["The user prefers green tea in the afternoon."]
        assert learned[0]["source"]["archiveId"] == "archive_001" and learned[0]["source"][
            "messageSeqs"
        ] == [5]
        history.extend([user("Actually I prefer black coffee now, not tea"), assistant("updated")])
        await client.post(
            "/after-turn",
            json={
                "sessionId": "s1",
                "messages": history,
                "prePromptMessageCount": len(history) - 2,
            },
        )
        compact = (
            await client.post("/compact", json={"sessionId": "s1", "currentTokenCount": 999999})
        ).json()
        after = await memories(client, "preferences")
        archive = (await client.get("/archives/archive_002", params={"sessionId": "s1"})).json()
    assert [m["content"] for m in after] == ["The user prefers black coffee (no longer green tea)."]
    assert after[0]["id"] == learned[0]["id"] and after[0]["version"] == 2
    assert (
        compact["compacted"] is True and compact["result"]["details"]["archiveId"] == "archive_002"
    )
    assert compact["result"]["details"]["memoriesExtracted"] == {"preferences": 1}
    assert archive["status"] == "completed"
    conn = sqlite.connect(str(db_path))
    actions = [
        r[0]
        for r in conn.execute(
            "SELECT action FROM memory_audit WHERE memory_id = ? ORDER BY id", (after[0]["id"],)
        )
    ]
    actor = conn.execute("SELECT actor FROM memory_audit WHERE action = 'UPDATE'").fetchone()[0]
    conn.close()
    assert actions == ["ADD", "UPDATE"] and actor == "extraction"


async def test_contradiction_can_supersede_with_delete(make_settings, stub, db_path: Path):
    stub.by_tool["propose_memories"] = [
        propose(candidate("entities", "Primary database", "The primary database is db-prod-7.")),
        propose(
            candidate(
                "entities",
                "Primary database moved",
                "The primary database is now db-prod-9; db-prod-7 is retired.",
            )
        ),
    ]
    stub.by_tool["decide_memory"] = [decide_on_first_neighbour("DELETE")]
    async with app_client(settings_for(make_settings, stub)) as client:
        history: list = []
        await commit(client, history, [user("our primary database is db-prod-7"), assistant("ok")])
        old = (await memories(client, "entities"))[0]
        await commit(
            client, history, [user("we moved the primary database to db-prod-9"), assistant("ok")]
        )
        current = await memories(client, "entities")
        old_now = (await client.get(f"/memories/{old['id']}")).json()
    assert [m["content"] for m in current] == [
        "The primary database is now db-prod-9; db-prod-7 is retired."
    ]
    assert (
        old_now["supersededBy"] == current[0]["id"]
    )  # kept for the audit trail, hidden from lists
    conn = sqlite.connect(str(db_path))
    assert (
        conn.execute(
            "SELECT count(*) FROM memory_audit WHERE memory_id = ? AND action = 'DELETE'",
            (old["id"],),
        ).fetchone()[0]
        == 1
    )
    conn.close()


async def test_failure_lesson_becomes_an_experience_the_gate_recalls(make_settings, stub):
    lesson = (
        "## Situation\n- Deploying the billing service with kubectl\n"
        "## Approach\n- Pin the image tag before kubectl apply\n"
        "## Reflect\n- An unpinned tag caused image pull backoff"
    )
    stub.by_tool["propose_memories"] = [
        propose(candidate("experiences", "Pin image tags when deploying billing", lesson, [2, 3]))
    ]
    settings = settings_for(
        make_settings, stub, embedding={"provider": "local"}, recall={"experience_enabled": True}
    )
    async with app_client(settings) as client:
        history: list = []
        await commit(
            client,
            history,
            [
                user("deploy the billing service"),
                tool_call("c1", "exec", {"command": "kubectl apply -f billing.yaml"}),
                tool_result("c1", "exec", "Error: image pull backoff", is_error=True),
                assistant("The tag was unpinned; pinned it and redeployed."),
            ],
        )
        experiences = await memories(client, "experiences")
        task = [user("Please deploy the billing service to staging with kubectl")]
        assembled = (
            await client.post("/assemble", json={"sessionId": "s2", "messages": task})
        ).json()
        chat = [user("what is the difference between tea and coffee?")]
        casual = (await client.post("/assemble", json={"sessionId": "s2", "messages": chat})).json()
    assert experiences and experiences[0]["uri"].startswith(
        "viking://agent/main/memories/experiences/"
    )
    injected = assembled["messages"][-1]["content"]
    assert assembled["diagnostics"]["mode"] == "assembled"
    assert assembled["diagnostics"]["recall"]["experience"]["gate"] == "task_execution"
    assert injected.startswith("<openviking-context>\n## Agent Experiences")
    assert "Pin the image tag before kubectl apply" in injected and injected.endswith(
        task[0]["content"]
    )
    assert "## Long-term Memories" not in injected.split("## Agent Experiences")[0]
    assert "Agent Experiences" not in json.dumps(casual["messages"])


async def test_envelope_is_stripped_again_by_after_turn(make_settings, stub, db_path: Path):
    settings = make_settings(embedding={"provider": "local"})
    async with app_client(settings) as client:
        added = await client.post(
            "/memories", json={"content": "The user prefers green tea", "category": "preferences"}
        )
        assert added.json()["action"] == "ADD"
        question = user("what drink does the user prefer, green tea or coffee?")
        assembled = (
            await client.post("/assemble", json={"sessionId": "s9", "messages": [question]})
        ).json()
        injected = assembled["messages"][-1]
        assert "<openviking-context>" in json.dumps(injected)
        reply = assistant("green tea")
        stored = await client.post(
            "/after-turn", json={"sessionId": "s9", "messages": [injected, reply]}
        )
        assert stored.json()["ingested"] == 2
        again = await client.post(
            "/after-turn", json={"sessionId": "s9", "messages": [question, reply]}
        )
    assert again.json()["ingested"] == 0  # the stripped message is the host's original message
    conn = sqlite.connect(str(db_path))
    bodies = [r[0] for r in conn.execute("SELECT body FROM messages")]
    conn.close()
    assert not any("openviking" in b or "Long-term Memories" in b for b in bodies)


async def test_fake_api_key_never_reaches_memory_or_search_tables(
    make_settings, stub, db_path: Path
):
    secret = "sk-proj-" + "Zq9" * 15
    stub.by_tool["propose_memories"] = [
        propose(candidate("entities", "Deploy key", f"The deploy key is {secret}."))
    ]
    async with app_client(
        settings_for(make_settings, stub, embedding={"provider": "local"})
    ) as client:
        history: list = []
        await commit(client, history, [user(f"use the key {secret} for deploys"), assistant("ok")])
        await client.post(
            "/memories", json={"content": f"API key {secret} for billing", "category": "entities"}
        )
        found = (
            await client.post("/archives/search", json={"sessionId": "s1", "query": secret[:20]})
        ).json()
        await asyncio.sleep(0)
    assert found["count"] == 0
    conn = sqlite.connect(str(db_path))
    # Virtual tables are read through their shadow tables, which hold the indexed data.
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    searchable = [
        t for t in tables if t.startswith(("memor", "message_fts", "archive_fts", "embedding"))
    ]
    for table in searchable:
        for row in conn.execute(f'SELECT * FROM "{table}"'):
            assert secret not in repr(row) and secret.encode() not in b"".join(
                c for c in row if isinstance(c, bytes)
            ), table
    search_texts = [r[0] for r in conn.execute("SELECT search_text FROM messages")]
    conn.close()
    assert all(secret not in t for t in search_texts)
    assert searchable, "the scan must look at some tables"
