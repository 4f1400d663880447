"""What each MCP tool does: the same use cases as the HTTP API, for the caller's tenant only.

Each answer is text, as the plugin's tools answer; recalled and archived text is marked as data
recorded earlier, not instructions (a stored message may hold text that reads like one).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from app.api.deps import Services
from app.api.mcp.tools import DATA_NOTE, DEFAULT_SEARCH_MODE, MEMORY_CATEGORIES, SEARCH_MODES
from app.archives.service import SearchRequest, embed_search_query, expand_archive_text, search_text
from app.core.threads import to_thread
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.service import Caller
from app.memory.store.fields import NewMemory
from app.sessions.admin import list_sessions
from app.sessions.archived import expand_archive, search_archives

EMBED_TIMEOUT_S = 2.0
Handler = Callable[[Services, Caller, dict[str, Any]], Awaitable[str]]


class ToolInputError(ValueError):
    """Arguments the tool cannot use: the agent is told, as a tool error."""


def required_string(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ToolInputError(f"{key} is required")
    return value.strip()


def limit_of(args: dict[str, Any], default: int, most: int) -> int:
    value = args.get("limit")
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1:
        raise ToolInputError("limit must be a positive number")
    return min(most, int(value))


async def archive_expand(services: Services, caller: Caller, args: dict[str, Any]) -> str:
    session_id, archive_id = required_string(args, "sessionId"), required_string(args, "archiveId")
    view = await to_thread(
        expand_archive, services.uow, caller.tenant_id, session_id, archive_id, 0, None
    )
    return f"Archived messages ({DATA_NOTE}):\n{expand_archive_text(view)}"


async def archive_search(services: Services, caller: Caller, args: dict[str, Any]) -> str:
    session_id, query = required_string(args, "sessionId"), required_string(args, "query")
    mode = args.get("mode") or DEFAULT_SEARCH_MODE
    if mode not in SEARCH_MODES:
        raise ToolInputError(f"mode must be one of {', '.join(SEARCH_MODES)}")
    request = SearchRequest(session_id, query, mode, limit=limit_of(args, 20, 200))
    vector = None
    if mode == "ranked":
        vector = await embed_search_query(services.memory.embedder, query, EMBED_TIMEOUT_S)
    timeout_s = services.settings.archives.regex_timeout_ms / 1000
    found = await to_thread(
        search_archives, services.uow, caller.tenant_id, request, timeout_s, vector
    )
    return f"Archive matches ({DATA_NOTE}):\n{search_text(found)}"


async def memory_search(services: Services, caller: Caller, args: dict[str, Any]) -> str:
    query = required_string(args, "query")
    found = await search_memories(
        services.memory, caller, SearchInput(query=query, limit=limit_of(args, 10, 50))
    )
    if not found.results:
        return f'No memory matches "{query}".'
    lines = [
        f"{i}. [{hit.record.category}] {hit.record.content or hit.record.abstract} "
        f"(score {hit.score:.3f})"
        for i, hit in enumerate(found.results, start=1)
    ]
    return f'Memories matching "{query}" ({DATA_NOTE}):\n' + "\n".join(lines)


async def memory_commit(services: Services, caller: Caller, args: dict[str, Any]) -> str:
    content, category = required_string(args, "content"), required_string(args, "category")
    if category not in MEMORY_CATEGORIES:
        raise ToolInputError(f"category must be one of {', '.join(MEMORY_CATEGORIES)}")
    new = NewMemory(content=content, category=category, source={"kind": "mcp"})
    outcome = await services.memory.commit_memory(caller, new, actor="mcp")
    memory_id = outcome.memory.id if outcome.memory is not None else None
    if outcome.action == "ADD":
        return f"Remembered ({memory_id})."
    if outcome.action == "UPDATE":
        return f"Updated an existing memory ({memory_id})."
    return f"Nothing stored{': ' + outcome.reason if outcome.reason else ' (already known)'}."


async def sessions_list(services: Services, caller: Caller, args: dict[str, Any]) -> str:
    query = args.get("query") if isinstance(args.get("query"), str) else None
    rows = await to_thread(
        list_sessions, services.uow, caller.tenant_id, query, limit_of(args, 20, 200)
    )
    if not rows:
        return "No sessions."
    lines = [
        f"- sessionId={r.session_id} key={r.session_key or '-'} agent={r.agent_id} "
        f"messages={r.total_message_count} archives={r.archive_count} "
        f"updated={r.updated_at.isoformat() if r.updated_at else '-'}"
        for r in rows
    ]
    return "Sessions, most recently updated first:\n" + "\n".join(lines)


HANDLERS: dict[str, Handler] = {
    "archive_expand": archive_expand,
    "archive_search": archive_search,
    "memory_search": memory_search,
    "memory_commit": memory_commit,
    "sessions_list": sessions_list,
}
