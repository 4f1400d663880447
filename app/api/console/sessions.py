"""Console pages of sessions: the list with search, one session's timeline, one archive."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api.console.auth import ConsoleUser, console_user
from app.api.console.diff import diff_counts, guard_marks, side_by_side
from app.api.console.messages import message_view
from app.api.console.rendering import ConsoleRoute, page
from app.api.deps import ServicesDep
from app.api.schemas.archives import ArchiveView
from app.api.schemas.sessions import session_row_record, timeline_record
from app.sessions.admin import list_sessions, session_timeline
from app.sessions.archived import expand_archive
from app.sessions.hook_health import FLAG_HELP as HOOK_FLAG_HELP

router = APIRouter(prefix="/console", route_class=ConsoleRoute)
UserDep = Annotated[ConsoleUser, Depends(console_user)]
PAGE = 50
ARCHIVE_PAGE = 200


@router.get("/sessions")
async def sessions_page(
    request: Request,
    services: ServicesDep,
    user: UserDep,
    q: Annotated[str, Query(max_length=200)] = "",
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> Response:
    found = await run_in_threadpool(
        list_sessions, services.uow, user.caller.tenant_id, q, PAGE + 1, offset
    )
    rows = [session_row_record(row) for row in found]
    context = {
        "user": user,
        "section": "sessions",
        "sessions": rows[:PAGE],
        "q": q,
        "offset": offset,
        "more": len(rows) > PAGE,
        "page_size": PAGE,
    }
    return page(request, "sessions.html", context)


@router.get("/archives/{archive_id}")
async def archive_page(
    request: Request,
    archive_id: str,
    services: ServicesDep,
    user: UserDep,
    session: Annotated[str, Query(min_length=1, max_length=512)],
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
) -> Response:
    found = await run_in_threadpool(
        expand_archive,
        services.uow,
        user.caller.tenant_id,
        session,
        archive_id,
        offset,
        ARCHIVE_PAGE,
    )
    view = ArchiveView.from_result(found).model_dump(by_alias=True)
    messages = [message_view(m.seq, m.message) for m in found.messages]
    context = {
        "user": user,
        "section": "sessions",
        "archive": view,
        "messages": messages,
        "offset": offset,
        "more": offset + len(messages) < view["messageCount"],
        "page_size": ARCHIVE_PAGE,
        "marks": guard_marks(view["overview"]),
    }
    return page(request, "archive.html", context)


@router.get("/sessions/{session_id:path}")
async def session_page(
    request: Request,
    session_id: str,
    services: ServicesDep,
    user: UserDep,
    compare: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    await services.hook_notes.settle(user.caller.tenant_id, session_id)
    timeline = timeline_record(
        await run_in_threadpool(
            session_timeline,
            services.uow,
            user.caller.tenant_id,
            session_id,
            100,
            services.settings.hook_silent_after_s,
        )
    )
    versions = working_memory_versions(timeline["archives"])
    context = {
        "user": user,
        "section": "sessions",
        "session": timeline,
        "hook_flag_help": HOOK_FLAG_HELP,
        "versions": versions,
        "diff": chosen_diff(versions, compare),
        "live": [message_view(m["seq"], m["message"]) for m in timeline["live"]],
    }
    return page(request, "session.html", context)


def working_memory_versions(archives: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The completed archives' Working Memories in order, each with the version it replaced."""
    versions: list[dict[str, Any]] = []
    for archive in archives:
        if archive["status"] == "completed" and archive["overview"]:
            previous = versions[-1] if versions else None
            versions.append(
                {
                    **archive,
                    "previous": previous["archiveId"] if previous else None,
                    "marks": guard_marks(archive["overview"]),
                }
            )
    return versions


def chosen_diff(versions: list[dict[str, Any]], compare: str | None) -> dict[str, Any] | None:
    """The diff of ``compare`` against the version before it; by default the newest change."""
    by_id = {v["archiveId"]: v for v in versions}
    candidates = [v for v in versions if v["previous"] is not None]
    if not candidates:
        return None
    chosen = by_id.get(compare or "") or candidates[-1]
    if chosen["previous"] is None:
        chosen = candidates[0]
    old = by_id[chosen["previous"]]
    rows = side_by_side(old["overview"], chosen["overview"])
    return {
        "old": old["archiveId"],
        "new": chosen["archiveId"],
        "rows": rows,
        "counts": diff_counts(rows),
    }
