"""/memories: commit, list, read, edit, delete, search, forget, export and import."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.api.deps import CallerDep, ServicesDep
from app.api.json_body import JsonRoute
from app.api.rate_limit import RATE_LIMITED, SEARCH_LIMIT
from app.api.schemas.base import ErrorEnvelope
from app.api.schemas.memories import (
    CommitMemoryRequest,
    CommitMemoryResponse,
    DeleteMemoryResponse,
    ForgetRequest,
    ForgetResponse,
    ImportRecord,
    ImportResponse,
    MemoryList,
    MemoryObject,
    PatchMemoryRequest,
    SearchMemoriesRequest,
    SearchMemoriesResponse,
)
from app.errors import InvalidArgument
from app.memory.admin.transfer import import_memories, parse_lines
from app.memory.records import MemoryRecord
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.service import Caller
from app.memory.store.fields import CURSOR_PATTERN, NewMemory

router = APIRouter(prefix="/memories", tags=["memories"], route_class=JsonRoute)
MemoryIdPath = Annotated[str, Path(alias="memoryId", min_length=1, max_length=64)]
# The memory's version, bare, quoted or weak: 3, "3", W/"3".
IF_MATCH_PATTERN = r'^(W/)?"?[0-9]+"?$'
# JSON Lines: the records of the array, one JSON object per line (as /memories/export writes them).
IMPORT_BODY = {
    "requestBody": {
        "content": {
            "application/x-ndjson": {
                "schema": {
                    "type": "array",
                    "description": "JSON Lines: one ImportRecord per line, as /memories/export writes them (at most "
                    "CE_MEMORY__IMPORT_MAX_RECORDS lines).",
                    "items": ImportRecord.model_json_schema(by_alias=True),
                }
            }
        }
    }
}
JSONL: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}}}
}


def _owners(
    caller: Caller, user_id: str | None, agent_id: str | None
) -> tuple[Caller, list[tuple[str, str]]]:
    # docs/api.md, Identity: the X-User-Id header wins over a userId in the body or query.
    user = caller.user_id if caller.user_from_header else (user_id or caller.user_id)
    scoped = Caller(
        caller.tenant_id,
        user,
        agent_id or caller.agent_id,
        caller.can_read_sensitive,
        caller.user_from_header,
    )
    return scoped, [("user", scoped.user_id), ("agent", scoped.agent_id)]


# exclude_unset, not exclude_none: a NONE answer has no memory, but a memory keeps its null fields.
@router.post(
    "",
    response_model=CommitMemoryResponse,
    response_model_exclude_unset=True,
    operation_id="commitMemory",
)
async def commit_memory_endpoint(
    body: CommitMemoryRequest, services: ServicesDep, caller: CallerDep
) -> object:
    """Remember something explicitly (deduplicated: ADD, UPDATE of the profile, or NONE)."""
    scoped, _ = _owners(caller, body.user_id, body.agent_id)
    new = NewMemory(
        content=body.content,
        category=body.category,
        title=body.title,
        priority=body.priority,
        confidence=body.confidence,
        sensitivity=body.sensitivity,
        ttl_days=body.ttl_days,
        source=body.source or {"kind": "api"},
    )
    return CommitMemoryResponse.of(await services.memory.commit_memory(scoped, new))


@router.get("", response_model=MemoryList, operation_id="listMemories")
async def list_memories_endpoint(
    services: ServicesDep,
    caller: CallerDep,
    category: Annotated[str | None, Query(max_length=32)] = None,
    user_id: Annotated[str | None, Query(alias="userId", max_length=256)] = None,
    agent_id: Annotated[str | None, Query(alias="agentId", max_length=256)] = None,
    q: Annotated[str | None, Query(max_length=500)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    # Declared `str` (not `str | None`) so the OpenAPI document keeps one plain string schema.
    cursor: Annotated[
        str,  # noqa: RUF013
        Query(pattern=CURSOR_PATTERN, description="nextCursor of the previous page."),
    ] = None,  # type: ignore[assignment]
) -> object:
    """The current memories of a user and an agent, newest first."""
    scoped, owners = _owners(caller, user_id, agent_id)
    page = await run_in_threadpool(
        services.memory.list_memories, scoped, owners, category, q, limit, cursor
    )
    return MemoryList.of(page)


# A bare Response class: the errors of this route are JSON envelopes, only its 200 is JSON Lines.
@router.get("/export", responses=JSONL, response_class=Response, operation_id="exportMemories")
async def export_memories_endpoint(
    services: ServicesDep,
    caller: CallerDep,
    user_id: Annotated[str | None, Query(alias="userId", max_length=256)] = None,
    agent_id: Annotated[str | None, Query(alias="agentId", max_length=256)] = None,
) -> Response:
    """Every memory of a user and an agent, one JSON object per line."""
    scoped, owners = _owners(caller, user_id, agent_id)
    records = await run_in_threadpool(services.memory.export, scoped, owners)
    # Serialising every memory of a user is CPU work: a worker thread, not the event loop.
    body = await run_in_threadpool(_json_lines, records)
    return Response(body, media_type="application/x-ndjson")


def _json_lines(records: list[MemoryRecord]) -> str:
    return "".join(MemoryObject.of(r).model_dump_json(by_alias=True) + "\n" for r in records)


@router.post(
    "/import",
    response_model=ImportResponse,
    operation_id="importMemories",
    openapi_extra=IMPORT_BODY,
    responses={
        413: {
            "model": ErrorEnvelope,
            "description": "Body over the size limit or more records than CE_MEMORY__IMPORT_MAX_RECORDS",
        }
    },
)
async def import_memories_endpoint(
    request: Request, services: ServicesDep, caller: CallerDep
) -> object:
    """Load memories exported by /memories/export (JSON Lines in the body)."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument("the body must be UTF-8 JSON Lines") from exc
    limit = services.settings.memory.import_max_records
    # Parsing and validating up to 32 MiB of records is CPU work: a worker thread, not the loop.
    records = await run_in_threadpool(parse_lines, text, ImportRecord.model_validate, limit)
    return ImportResponse.of(await import_memories(services.memory, caller, records))


@router.post(
    "/search",
    response_model=SearchMemoriesResponse,
    response_model_exclude_unset=True,
    operation_id="searchMemories",
    dependencies=SEARCH_LIMIT,
    responses=RATE_LIMITED,
)
async def search_memories_endpoint(
    body: SearchMemoriesRequest, services: ServicesDep, caller: CallerDep
) -> object:
    """Hybrid search (BM25 + vectors, decay, MMR) over a user's memories and an agent's experiences."""
    scoped, _ = _owners(caller, body.user_id, body.agent_id)
    request = SearchInput(
        query=body.query,
        categories=list(body.categories) if body.categories else None,
        target_uri=body.target_uri,
        limit=body.limit,
        score_threshold=body.score_threshold,
        mode=body.mode,
        explain=body.explain,
    )
    return SearchMemoriesResponse.of(await search_memories(services.memory, scoped, request))


@router.post("/forget", response_model=ForgetResponse, operation_id="forgetMemories")
async def forget_memories_endpoint(
    body: ForgetRequest, services: ServicesDep, caller: CallerDep
) -> object:
    """Delete the memories of the last N days and/or about a subject (dryRun lists them only)."""
    scoped, owners = _owners(caller, body.user_id, body.agent_id)
    outcome = await run_in_threadpool(
        services.memory.forget, scoped, owners, body.days, body.subject, body.dry_run
    )
    return ForgetResponse.of(outcome)


@router.get("/{memoryId}", response_model=MemoryObject, operation_id="getMemory")
async def get_memory_endpoint(
    memory_id: MemoryIdPath, services: ServicesDep, caller: CallerDep
) -> object:
    """One memory (masked content without the read-sensitive scope)."""
    return MemoryObject.of(await run_in_threadpool(services.memory.get, caller, memory_id))


@router.patch(
    "/{memoryId}",
    response_model=MemoryObject,
    operation_id="patchMemory",
    responses={409: {"model": ErrorEnvelope, "description": "Stale version"}},
)
async def patch_memory_endpoint(
    memory_id: MemoryIdPath,
    body: PatchMemoryRequest,
    services: ServicesDep,
    caller: CallerDep,
    # Typed str with a None default: the document shows a string header, not a nullable one.
    if_match: Annotated[
        str,  # noqa: RUF013
        Header(alias="If-Match", max_length=32, pattern=IF_MATCH_PATTERN),
    ] = None,  # type: ignore[assignment]
) -> object:
    """Edit a memory; its version must match (If-Match or body.version), else 409."""
    version = body.version
    if if_match is not None:
        try:
            version = int(if_match.strip().strip('"').removeprefix("W/").strip('"'))
        except ValueError as exc:
            raise InvalidArgument(
                "If-Match must be the memory's version number", {"header": "If-Match"}
            ) from exc
    changes = body.model_dump(exclude_unset=True, exclude={"version"})
    return MemoryObject.of(await services.memory.patch(caller, memory_id, changes, version))


@router.delete("/{memoryId}", response_model=DeleteMemoryResponse, operation_id="deleteMemory")
async def delete_memory_endpoint(
    memory_id: MemoryIdPath, services: ServicesDep, caller: CallerDep
) -> object:
    """Delete a memory with its chunks, vectors and index rows."""
    deleted = await run_in_threadpool(services.memory.delete, caller, memory_id)
    return DeleteMemoryResponse.of(deleted)
