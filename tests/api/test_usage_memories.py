"""Skill memories on a SKILL.md read, tool usage memories in the system prompt, and recall for the
pre_prompt ``prompt`` as prependContext (docs/recall.md; docs/lifecycle.md pre_prompt step 7)."""

from __future__ import annotations

from tests.helpers.messages import assistant, tool_call, tool_result, user

SKILL = "skills/deploy-helper/SKILL.md"


async def store(client, messages, session_id="s1"):  # type: ignore[no-untyped-def]
    response = await client.post(
        "/after-turn", json={"sessionId": session_id, "messages": messages, "tokenBudget": 10**9}
    )
    assert response.status_code == 200


async def test_skill_read_gets_the_skills_history_appended(client):
    earlier = [
        user("deploy it"),
        tool_call("a1", "read", {"path": f"/ws/{SKILL}"}),
        tool_result("a1", "read", "# Deploy helper"),
        tool_call("a2", "read", {"path": SKILL}),
        tool_result("a2", "read", "Error: permission denied", is_error=True),
    ]
    await store(client, earlier, "old")
    added = await client.post(
        "/memories", json={"content": "deploy-helper: run the dry-run first", "category": "skills"}
    )
    assert added.json()["action"] == "ADD"
    now = [
        user("deploy again"),
        tool_call("a3", "read", {"path": SKILL}),
        tool_result("a3", "read", "# Deploy helper\nsteps"),
    ]
    await store(client, now, "new")
    body = (await client.post("/assemble", json={"sessionId": "new", "messages": now})).json()
    assert body["diagnostics"]["reason"] == "skill_memory"
    last = body["messages"][-1]
    assert last["content"][0] == now[-1]["content"][0]
    block = last["content"][-1]["text"]
    assert block.startswith("## Skill Memory: deploy-helper")
    assert "Used 3 time(s); success rate 67%" in block
    assert "deploy-helper: run the dry-run first" in block
    assert body["messages"][:-1] == now[:-1]


async def test_other_tool_results_pass_through(client):
    messages = [
        user("list"),
        tool_call("b1", "exec", {"command": "ls"}),
        tool_result("b1", "exec", "a b"),
    ]
    body = (await client.post("/assemble", json={"sessionId": "s1", "messages": messages})).json()
    assert body["diagnostics"]["reason"] == "non_user_tail" and body["messages"] == messages


async def test_tool_usage_memories_in_the_system_prompt(client):
    history: list = [user("work")]
    for i in range(6):
        failed = i < 2
        history += [
            tool_call(f"e{i}", "exec", {"command": f"step {i}"}),
            tool_result(
                f"e{i}",
                "exec",
                "Error: permission denied\nat line 3" if failed else "ok",
                is_error=failed,
            ),
        ]
    for i in range(3):
        history += [
            tool_call(f"r{i}", "read", {"path": f"f{i}"}),
            tool_result(f"r{i}", "read", "text"),
        ]
    history.append(assistant("done"))
    await store(client, history)
    await client.post(
        "/memories", json={"content": "exec: quote paths with spaces", "category": "tools"}
    )
    body = (
        await client.post(
            "/assemble",
            json={
                "sessionId": "s1",
                "messages": history,
                "availableTools": ["exec", "read"],
                "prompt": "continue",
            },
        )
    ).json()
    addition = body["systemPromptAddition"]
    assert "## Tool Usage Memories" in addition
    assert "- exec: 6 calls, 67% success" in addition
    assert "common error: Error: permission denied" in addition
    assert "practice: exec: quote paths with spaces" in addition
    assert "- read:" not in addition  # fewer than 5 recorded calls


async def test_prompt_recall_becomes_prepend_context(client):
    added = await client.post(
        "/memories",
        json={"content": "The user prefers green tea without sugar", "category": "preferences"},
    )
    assert added.json()["action"] == "ADD"
    messages = [user("hello there")]
    await store(client, messages)
    body = (
        await client.post(
            "/assemble",
            json={
                "sessionId": "s1",
                "messages": messages,
                "prompt": "which tea does the user prefer?",
            },
        )
    ).json()
    context = body["prependContext"]
    assert context.startswith("<openviking-context>\n## Long-term Memories")
    assert "- [preferences] The user prefers green tea without sugar" in context
    assert body["messages"] == messages  # the history itself carries no injection


async def test_embedding_calls_are_counted_in_metrics(make_settings):
    from tests.conftest import app_client

    async with app_client(make_settings(embedding={"provider": "local"})) as client:
        await client.post(
            "/memories", json={"content": "The user prefers green tea", "category": "preferences"}
        )
        await client.post("/memories/search", json={"query": "tea"})
        await client.post("/memories/search", json={"query": "tea"})
        metrics = (await client.get("/metrics")).text
    assert (
        'ce_embedding_calls_total{outcome="ok"} 2.0' in metrics
    )  # one passage, one query; the repeat is cached
    assert "ce_embedding_call_duration_seconds_count 2.0" in metrics
