"""POST /import/{source}: one agent host transcript, sent as JSON Lines, stored as the hooks would."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from starlette.concurrency import run_in_threadpool

from app.api.deps import CallerDep, ServicesDep
from app.api.json_body import JsonRoute
from app.api.schemas.imports import ImportTranscriptResponse
from app.errors import InvalidArgument
from app.imports.records import ReadResult
from app.imports.service import ImportOptions, import_sessions
from app.imports.sources import UNNAMED, Source, read_lines

router = APIRouter(prefix="/import", tags=["import"], route_class=JsonRoute)
BODY_NAME = "request"
IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/x-ndjson": {
                "schema": {
                    "type": "array",
                    "minItems": 1,
                    # Any line is accepted: one that is not a JSON object is reported and skipped.
                    "items": {},
                    "description": "JSON Lines: the lines of one transcript file as the host wrote "
                    "them (an OpenClaw session's events, a Claude Code session file, a Codex "
                    "rollout file), one JSON value a line. A line that is not a JSON object is "
                    "reported in `problems` with its number and skipped.",
                }
            }
        },
    }
}


@router.post(
    "/{source}",
    response_model=ImportTranscriptResponse,
    operation_id="importTranscript",
    openapi_extra=IMPORT_BODY,
)
async def import_transcript_endpoint(
    request: Request,
    services: ServicesDep,
    caller: CallerDep,
    source: Annotated[Source, Path(description="The host that wrote the transcript.")],
    session_id: Annotated[
        str | None,
        Query(
            alias="sessionId",
            min_length=1,
            max_length=512,
            description="The session to store it in (default: the id the transcript names).",
        ),
    ] = None,
    session_key: Annotated[str | None, Query(alias="sessionKey", max_length=512)] = None,
    agent_id: Annotated[str | None, Query(alias="agentId", max_length=256)] = None,
) -> ImportTranscriptResponse:
    """Store a transcript's messages once (again: nothing new), then archive older ones."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument("the body must be UTF-8 JSON Lines") from exc
    if not text.strip():
        raise InvalidArgument("the body holds no transcript line")
    read: ReadResult = read_lines(source, text.splitlines(), BODY_NAME, session_id)
    if any(session.session_id == UNNAMED for session in read.sessions):
        raise InvalidArgument("the transcript names no session: give ?sessionId=")
    for session in read.sessions:
        session.session_key = session_key or session.session_key
        session.agent_id = agent_id or session.agent_id
    options = ImportOptions(caller.tenant_id, user_id=caller.user_id)
    settings = services.settings
    summary = await run_in_threadpool(import_sessions, services.uow, settings, read, options)
    if summary.archives:
        services.notify_worker()
    return ImportTranscriptResponse.of(summary)
