"""Usage memories from the agent's stored history: how a skill went before, how tools behave."""

from __future__ import annotations

import json
from collections import Counter

from app.core.clock import utcnow
from app.core.rules.messages import Message, tool_calls, tool_result_id
from app.memory.recall.skills import (
    SKILL_PATH_RE,
    ToolStat,
    first_error_line,
    render_skill_memory,
    render_tool_usage,
)
from app.memory.records import one_line
from app.memory.service import MemoryService
from app.memory.store import repository as repo

SCAN_LIMIT = 500
RESULT_LIMIT = 5000
FOLLOWING_MESSAGES = 8


def skill_memory_block(service: MemoryService, tenant_id: str, agent_id: str, name: str) -> str:
    """Uses and success rate of a skill in the agent's sessions, plus its ``skills`` memories."""
    path = f"skills/{name}/SKILL.md"
    storage = service.uow.storage
    uses = successes = 0
    with service.uow.read() as db:
        for session_pk, seq, body in storage.tools.tool_calls_mentioning(
            db, tenant_id, agent_id, path, SCAN_LIMIT
        ):
            message: Message = json.loads(body)
            for call in tool_calls(message):
                if SKILL_PATH_RE.search(json.dumps(call.arguments, ensure_ascii=False)):
                    uses += 1
                    following = [
                        json.loads(b)
                        for b in storage.tools.messages_after(
                            db, session_pk, seq, FOLLOWING_MESSAGES
                        )
                    ]
                    result = next((m for m in following if tool_result_id(m) == call.id), None)
                    successes += int(result is not None and result.get("isError") is not True)
        notes = repo.list_memories(
            db, tenant_id, [("agent", agent_id)], utcnow(), category="skills", text=name, limit=5
        )
    return render_skill_memory(
        name,
        uses,
        successes,
        [one_line(m.content, 240) for m in notes if m.sensitivity == "allowed"],
    )


def tool_memory_block(
    service: MemoryService, tenant_id: str, agent_id: str, tools: list[str]
) -> str:
    """Calls, success rate and common errors per tool, with the agent's ``tools`` memories."""
    with service.uow.read() as db:
        rows = service.uow.storage.tools.tool_results(db, tenant_id, agent_id, tools, RESULT_LIMIT)
        notes = repo.list_memories(
            db, tenant_id, [("agent", agent_id)], utcnow(), category="tools", limit=50
        )
    calls: Counter[str] = Counter()
    errors: dict[str, Counter[str]] = {}
    for name, is_error, text in rows:
        calls[name] += 1
        if is_error:
            errors.setdefault(name, Counter())[first_error_line(text)] += 1
    stats = [
        ToolStat(
            name,
            count,
            sum(errors.get(name, Counter()).values()),
            [line for line, _ in errors.get(name, Counter()).most_common(2)],
        )
        for name, count in calls.items()
    ]
    practices = {
        tool: [
            one_line(m.content, 200)
            for m in notes
            if tool in f"{m.title} {m.content}" and m.sensitivity == "allowed"
        ][:2]
        for tool in tools
    }
    return render_tool_usage(stats, practices)
