"""GET /archives/{archiveId}, POST /archives/search."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse
from starlette.concurrency import run_in_threadpool

from app.api.deps import IdentityDep, ServicesDep, TenantDep, services_of
from app.api.json_body import JsonRoute
from app.api.rate_limit import RATE_LIMITED, SEARCH_LIMIT
from app.api.schemas.archives import (
    ARCHIVE_ID_PATTERN,
    ArchiveSearchRequest,
    ArchiveSearchResponse,
    ArchiveView,
)
from app.archives.service import SearchRequest, embed_search_query, expand_archive_text, search_text
from app.sessions.archived import expand_archive, search_archives

router = APIRouter(prefix="/archives", tags=["archives"], route_class=JsonRoute)
TEXT_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/plain": {"schema": {"type": "string"}}}}
}
# The offset must fit the database's integer type; no archive holds anywhere near this many messages.
MAX_OFFSET = 2**31 - 1
# Past this the ranked search goes on lexically rather than keep the agent waiting.
EMBED_TIMEOUT_S = 2.0


@router.get(
    "/{archiveId}",
    response_model=ArchiveView,
    responses=TEXT_RESPONSE,
    operation_id="expandArchive",
)
async def expand_archive_endpoint(
    services: ServicesDep,
    tenant: TenantDep,
    archive_id: Annotated[
        str,
        Path(
            alias="archiveId",
            pattern=ARCHIVE_ID_PATTERN,
            description="archive_NNN; any other shape is a 400.",
        ),
    ],
    session_id: Annotated[str, Query(alias="sessionId", min_length=1, max_length=512)],
    format: Annotated[Literal["json", "text"], Query()] = "json",
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> object:
    """One archive with its original messages, as JSON or as a text tool result."""
    view = await run_in_threadpool(
        expand_archive, services.uow, tenant, session_id, archive_id, offset, limit
    )
    if format == "text":
        return PlainTextResponse(expand_archive_text(view))
    return ArchiveView.from_result(view)


@router.post(
    "/search",
    response_model=ArchiveSearchResponse,
    responses={**TEXT_RESPONSE, **RATE_LIMITED},
    operation_id="searchArchives",
    dependencies=SEARCH_LIMIT,
)
async def search_archives_endpoint(
    http: Request, body: ArchiveSearchRequest, identity: IdentityDep
) -> object:
    """Search a session's archived messages and overviews: keyword, regex or ranked."""
    # The services and the tenant are read here, as the hooks read them: the agent's search tool
    # calls this, and FastAPI solves each dependency of a request at a cost of its own.
    services, tenant = services_of(http), identity.tenant_id
    request = SearchRequest(
        session_id=body.session_id,
        query=body.query,
        mode=body.mode,
        archive_id=body.archive_id,
        case_sensitive=body.case_sensitive,
        limit=body.limit,
        since=body.since,
        until=body.until,
        context=body.context,
        fusion=body.fusion,
    )
    timeout_s = services.settings.archives.regex_timeout_ms / 1000
    vector = None
    if body.mode == "ranked":
        vector = await embed_search_query(services.memory.embedder, body.query, EMBED_TIMEOUT_S)
    result = await run_in_threadpool(
        search_archives, services.uow, tenant, request, timeout_s, vector
    )
    if body.format == "text":
        return PlainTextResponse(search_text(result))
    return ArchiveSearchResponse.from_result(result)
