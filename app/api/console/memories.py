"""Console pages of memories: by category, one memory with its audit trail, edit and delete."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api.console.auth import ConsoleUser, console_user, same_origin
from app.api.console.rendering import ConsoleRoute, page, redirect
from app.api.deps import ServicesDep
from app.core.clock import isoformat
from app.errors import Conflict
from app.memory.admin.operator import MemoryHistory, browse_memories, memory_with_audit
from app.memory.records import CATEGORIES, record_json

router = APIRouter(prefix="/console", route_class=ConsoleRoute)
UserDep = Annotated[ConsoleUser, Depends(console_user)]
MemoryId = Annotated[str, Path(min_length=1, max_length=64)]
PAGE = 50
ACTOR = "console"


@router.get("/memories")
async def memories_page(
    request: Request,
    services: ServicesDep,
    user: UserDep,
    category: Annotated[str, Query(max_length=32)] = "",
    q: Annotated[str, Query(max_length=200)] = "",
    offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    deleted: Annotated[str | None, Query(max_length=64)] = None,
) -> Response:
    chosen = category if category in CATEGORIES else ""
    found = await run_in_threadpool(
        browse_memories, services.uow, user.caller, chosen, q, PAGE + 1, offset
    )
    context = {
        "user": user,
        "section": "memories",
        "memories": [record_json(r) for r in found.items[:PAGE]],
        "counts": found.counts,
        "category": chosen,
        "q": q,
        "offset": offset,
        "more": len(found.items) > PAGE,
        "page_size": PAGE,
        "deleted": deleted,
    }
    return page(request, "memories.html", context)


@router.get("/memories/{memory_id}")
async def memory_page(
    request: Request,
    memory_id: MemoryId,
    services: ServicesDep,
    user: UserDep,
    saved: Annotated[int | None, Query(ge=1)] = None,
) -> Response:
    found = await run_in_threadpool(memory_with_audit, services.uow, user.caller, memory_id)
    return page(
        request,
        "memory.html",
        {
            "user": user,
            "section": "memories",
            **history_context(found),
            "saved": saved,
            "draft": None,
            "conflict": None,
        },
    )


@router.post("/memories/{memory_id}", dependencies=[Depends(same_origin)])
async def edit_memory(
    request: Request,
    memory_id: MemoryId,
    services: ServicesDep,
    user: UserDep,
    version: Annotated[int, Form(ge=1)],
    content: Annotated[str, Form(min_length=1, max_length=100_000)],
    title: Annotated[str, Form(max_length=500)] = "",
    loaded_title: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    # An unchanged title is left out, so that a title derived from the text follows the new text.
    retitled = title.strip() and title.strip() != loaded_title.strip()
    changes = {"content": content, **({"title": title.strip()} if retitled else {})}
    try:
        view = await services.memory.patch(user.caller, memory_id, changes, version, actor=ACTOR)
    except Conflict as exc:
        # Keep what the person typed, show what changed meanwhile: nothing is silently overwritten.
        found = await run_in_threadpool(memory_with_audit, services.uow, user.caller, memory_id)
        context = {
            "user": user,
            "section": "memories",
            **history_context(found),
            "saved": None,
            "draft": {"title": title, "content": content},
            "conflict": exc.message,
        }
        return page(request, "memory.html", context, status=409)
    return redirect(request, f"/console/memories/{memory_id}?saved={view.version}")


@router.post("/memories/{memory_id}/delete", dependencies=[Depends(same_origin)])
async def delete_memory(
    request: Request, memory_id: MemoryId, services: ServicesDep, user: UserDep
) -> Response:
    await run_in_threadpool(services.memory.delete, user.caller, memory_id, ACTOR)
    return redirect(request, f"/console/memories?deleted={memory_id}")


def history_context(found: MemoryHistory) -> dict[str, Any]:
    """The memory page's records, keyed as the export file and the JSON API key them."""
    return {
        "memory": record_json(found.memory) if found.memory is not None else None,
        "audit": [
            {
                "action": e.action,
                "actor": e.actor,
                "reason": e.reason,
                "createdAt": isoformat(e.created_at),
                "changes": [asdict(c) for c in e.changes],
            }
            for e in found.audit
        ],
    }
