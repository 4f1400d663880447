"""POST /assemble, /commit-turn, /after-turn, /compact: the OpenClaw hooks forwarded by the plugin."""

from __future__ import annotations

import time
from functools import partial

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from app.api.deps import IdentityDep, UserIdHeader, hook_identity, services_of
from app.api.hook_calls import note_hook_call
from app.api.json_body import JsonRoute
from app.api.schemas.hooks import (
    AfterTurnRequest,
    AfterTurnResponse,
    AssembleRequest,
    AssembleResponse,
    CommitTurnRequest,
    CommitTurnResponse,
    CompactRequest,
    CompactResponse,
    assemble_response,
)
from app.assembly.service import AssembleInput, assemble, assembled_tokens
from app.sessions.capture import TurnAdvancement, TurnInput, capture_turn
from app.sessions.compact import CompactInput, compact_session

router = APIRouter(tags=["hooks"], route_class=JsonRoute)
# The hooks read the services from the request and the tenant from the identity, not as
# dependencies of their own: FastAPI solves each dependency of every request at a cost several
# times what the dependency does, and the host calls these on every turn.


@router.post(
    "/assemble",
    response_model=AssembleResponse,
    response_model_exclude_none=True,
    operation_id="assemble",
)
async def assemble_endpoint(
    http: Request, body: AssembleRequest, identity: IdentityDep, user_id: UserIdHeader = None
) -> dict[str, object]:
    """Rebuild the prompt history (pre_prompt) or inject recalled context (tool_loop)."""
    services = services_of(http)
    fields = body.model_fields_set
    pre_prompt = (
        bool({"prompt", "available_tools", "citations_mode"} & fields)
        if body.phase is None
        else body.phase == "pre_prompt"
    )
    ident = hook_identity(identity.tenant_id, body, user_id)
    phase = "pre_prompt" if pre_prompt else "tool_loop"
    request = AssembleInput(
        identity=ident,
        messages=body.messages,
        phase=phase,
        token_budget=body.token_budget,
        prompt=body.prompt,
        available_tools=list(body.available_tools or []),
        options=body.options.as_dict() if body.options else {},
        runtime_context=body.runtime_context,
        # tool_loop: the messages left out still take their share of the budget recall fills.
        omitted_messages=body.omitted_message_count,
        tool_loop_follows=services.hook_notes.makes_tool_loops(ident.tenant_id, ident.session_id),
    )
    # Noted after its work, whatever its outcome (a tool_loop call is held, not written:
    # app/sessions/hook_notes.py).
    try:
        result = await assemble(
            services.uow, services.settings, services.recall, request, services.history_cache
        )
    finally:
        await note_hook_call(http, services, ident, f"assemble.{phase}")
    return assemble_response(result)


@router.post("/after-turn", response_model=AfterTurnResponse, operation_id="afterTurn")
async def after_turn_endpoint(
    http: Request, body: AfterTurnRequest, identity: IdentityDep, user_id: UserIdHeader = None
) -> AfterTurnResponse:
    """Store the turn's new messages (idempotent) and commit when the window passes the threshold."""
    services = services_of(http)
    started = time.perf_counter()
    messages = (
        body.messages
        if body.messages is not None
        else ([body.message] if body.message is not None else [])
    )
    ident = hook_identity(identity.tenant_id, body, user_id)
    turn = TurnInput(
        identity=ident,
        messages=messages,
        pre_prompt_message_count=body.pre_prompt_message_count,
        is_heartbeat=bool(body.is_heartbeat),
        token_budget=_budget(body.token_budget, body.runtime_context),
    )
    try:
        result = await run_in_threadpool(capture_turn, services.uow, services.settings, turn)
    finally:
        await note_hook_call(http, services, ident, "afterTurn")
    if result.archive_scheduled:
        services.notify_worker()
    return AfterTurnResponse.from_result(result, _elapsed_ms(started))


@router.post("/commit-turn", response_model=CommitTurnResponse, operation_id="commitTurn")
async def commit_turn_endpoint(
    http: Request, body: CommitTurnRequest, identity: IdentityDep, user_id: UserIdHeader = None
) -> CommitTurnResponse:
    """Store one host turn atomically, once per advancement key; auto-commit as /after-turn does."""
    services = services_of(http)
    started = time.perf_counter()
    ident = hook_identity(identity.tenant_id, body, user_id)
    turn = TurnInput(
        identity=ident,
        messages=body.messages,
        is_heartbeat=body.is_heartbeat,
        token_budget=_budget(body.token_budget, body.runtime_context),
        advancement=TurnAdvancement(
            key=body.advancement_key,
            admission_entry_id=body.admission.entry_id if body.admission else None,
            terminal_entry_id=body.terminal.entry_id if body.terminal else None,
        ),
    )
    try:
        result = await run_in_threadpool(capture_turn, services.uow, services.settings, turn)
    finally:
        await note_hook_call(http, services, ident, "commitTurn")
    if result.archive_scheduled:
        services.notify_worker()
    return CommitTurnResponse.from_turn(result, _elapsed_ms(started))


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


@router.post(
    "/compact",
    response_model=CompactResponse,
    response_model_exclude_none=True,
    operation_id="compact",
)
async def compact_endpoint(
    http: Request, body: CompactRequest, identity: IdentityDep, user_id: UserIdHeader = None
) -> CompactResponse:
    """Archive everything now and (by default) wait for the Working Memory."""
    services = services_of(http)
    ident = hook_identity(identity.tenant_id, body, user_id)
    request = CompactInput(
        identity=ident,
        token_budget=body.token_budget,
        current_token_count=body.current_token_count,
        custom_instructions=body.custom_instructions,
        trigger=body.trigger or _runtime_trigger(body.runtime_context),
        wait=body.wait,
        timeout_ms=body.timeout_ms,
    )
    estimate = partial(
        assembled_tokens, services.uow, services.settings, request.identity, request.token_budget
    )
    try:
        result = await compact_session(
            services.uow, services.settings, services.notify_worker, request, estimate
        )
    finally:
        await note_hook_call(http, services, ident, "compact")
    return CompactResponse.from_result(result)


def _budget(token_budget: float | None, runtime_context: dict[str, object] | None) -> int | None:
    """tokenBudget from the request, else runtimeContext.tokenBudget (docs/lifecycle.md, Capture 5)."""
    for candidate in (token_budget, (runtime_context or {}).get("tokenBudget")):
        if (
            isinstance(candidate, int | float)
            and not isinstance(candidate, bool)
            and candidate >= 1
        ):
            return int(candidate)
    return None


def _runtime_trigger(runtime_context: dict[str, object] | None) -> str | None:
    trigger = (runtime_context or {}).get("trigger")
    return trigger if isinstance(trigger, str) else None
