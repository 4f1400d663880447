"""GET/DELETE /sessions/{sessionId}, POST /sessions/{sessionId}/commit."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Path
from starlette.concurrency import run_in_threadpool

from app.api.deps import ServicesDep, TenantDep
from app.api.json_body import JsonRoute
from app.api.schemas.sessions import (
    ArchiveSummary,
    CommitRequest,
    CommitResponse,
    DeleteResponse,
    SessionView,
)
from app.sessions.service import commit_session, delete_session, get_session_view, wait_for_archive

router = APIRouter(prefix="/sessions", tags=["sessions"], route_class=JsonRoute)
SessionIdPath = Annotated[str, Path(alias="sessionId", min_length=1, max_length=512)]


@router.get("/{sessionId}", response_model=SessionView, operation_id="getSession")
async def get_session_endpoint(
    session_id: SessionIdPath, services: ServicesDep, tenant: TenantDep
) -> SessionView:
    """The session's counters, window and archives."""
    await services.hook_notes.settle(tenant, session_id)
    view = await run_in_threadpool(
        get_session_view, services.uow, tenant, session_id, services.settings.hook_silent_after_s
    )
    return SessionView.from_result(view)


@router.delete("/{sessionId}", response_model=DeleteResponse, operation_id="deleteSession")
async def delete_session_endpoint(
    session_id: SessionIdPath, services: ServicesDep, tenant: TenantDep
) -> DeleteResponse:
    """Delete the session with its messages, archives and search index entries."""
    deleted = await run_in_threadpool(delete_session, services.uow, tenant, session_id)
    return DeleteResponse.from_result(deleted)


@router.post(
    "/{sessionId}/commit",
    response_model=CommitResponse,
    response_model_exclude_unset=True,
    operation_id="commitSession",
)
async def commit_session_endpoint(
    session_id: SessionIdPath,
    services: ServicesDep,
    tenant: TenantDep,
    body: Annotated[CommitRequest | None, Body()] = None,
) -> CommitResponse:
    """Archive all but the most recent ``keepRecentCount`` messages; optionally wait for Phase 2."""
    body = body or CommitRequest()
    outcome = await run_in_threadpool(
        commit_session,
        services.uow,
        tenant,
        session_id,
        body.keep_recent_count,
        body.custom_instructions,
    )
    if not outcome.archived or outcome.archive_pk is None:
        return CommitResponse(
            session_id=session_id, status="skipped", archive_id=None, reason=outcome.reason
        )
    services.notify_worker()
    response = CommitResponse(
        session_id=session_id, status="accepted", archive_id=outcome.archive_id
    )
    if body.wait:
        state = await wait_for_archive(services.uow, outcome.archive_pk, body.timeout_ms / 1000)
        response.archive = (
            ArchiveSummary.from_result(state.summary).model_dump(by_alias=True)
            if state is not None
            else None
        )
    return response
