"""Request and response shapes of /assemble, /after-turn and /compact (docs/api.md, Hook endpoints)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool

from app.api.schemas.base import ApiModel, HookModel, Integer
from app.api.schemas.recall_options import AssembleOptions
from app.assembly.result import AssembleResult
from app.sessions.capture import CaptureResult, CommitReport
from app.sessions.compact import CompactDetails, CompactReport, CompactResult

SESSION_ID = Field(min_length=1, max_length=512, description="The host's session id.")


class HookBase(HookModel):
    session_id: str = SESSION_ID
    session_key: str | None = Field(None, max_length=1024)
    agent_id: str | None = Field(None, max_length=256)
    user_id: str | None = Field(None, max_length=256)
    token_budget: float | None = None
    runtime_context: dict[str, Any] | None = None
    runtime_settings: dict[str, Any] | None = None


class AssembleRequest(HookBase):
    messages: list[Any]
    phase: Literal["pre_prompt", "tool_loop"] | None = Field(
        None,
        description="The assemble phase; wins over the field heuristic (prompt / availableTools present: pre_prompt).",
    )
    available_tools: list[str] | None = None
    citations_mode: str | None = None
    model: str | None = None
    prompt: str | None = None
    options: AssembleOptions | None = None
    omitted_message_count: Integer = Field(
        0,
        ge=0,
        description=(
            "How many of the host's oldest messages were left out of `messages`, which then "
            "holds its newest ones. pre_prompt: the answer is a passthrough with reason "
            "`host_history_needed` when they do not show where the stored history ends. "
            "tool_loop: the answer is for the messages sent; the client puts the ones it left "
            "out back before it."
        ),
    )


class AssembleResponse(ApiModel):
    messages: list[Any]
    estimated_tokens: int
    system_prompt_addition: str | None = None
    prepend_context: str | None = None
    diagnostics: dict[str, Any]


def assemble_response(result: AssembleResult) -> dict[str, Any]:
    """The /assemble answer as the body that ``AssembleResponse`` validates: a plain dict, because
    the history can be long and the endpoint validates it once (not built into a model first)."""
    out: dict[str, Any] = {
        "messages": result.messages,
        "estimatedTokens": result.estimated_tokens,
        "diagnostics": result.diagnostics,
    }
    if result.system_prompt_addition is not None:
        out["systemPromptAddition"] = result.system_prompt_addition
    if result.prepend_context is not None:
        out["prependContext"] = result.prepend_context
    return out


class AfterTurnRequest(HookBase):
    messages: list[Any] | None = None
    message: Any | None = None
    pre_prompt_message_count: Integer = Field(0, ge=0)
    is_heartbeat: bool | None = None
    auto_compaction_summary: Any | None = None


class AfterTurnResponse(ApiModel):
    ok: bool
    ingested: int
    duplicates: int
    skipped: int
    pending_tokens: int
    commit: dict[str, Any]
    compact_recommended: bool
    duration_ms: int

    @classmethod
    def from_result(cls, result: CaptureResult, duration_ms: int) -> AfterTurnResponse:
        return cls(
            ok=True,
            ingested=result.ingested,
            duplicates=result.duplicates,
            skipped=result.skipped,
            pending_tokens=result.pending_tokens,
            commit=commit_report(result.commit),
            compact_recommended=result.compact_recommended,
            duration_ms=duration_ms,
        )


def commit_report(report: CommitReport) -> dict[str, Any]:
    """``commit`` of an /after-turn or /commit-turn answer: archiveId only when one was made,
    keepRecentCount only when the threshold was reached."""
    out: dict[str, Any] = {"triggered": report.triggered}
    if report.archive_id is not None:
        out["archiveId"] = report.archive_id
    out["reason"] = report.reason
    out["threshold"] = report.threshold
    if report.keep_recent_count is not None:
        out["keepRecentCount"] = report.keep_recent_count
    return out


class TurnAnchor(ApiModel):
    """Where the host recorded a turn's first (admission) or last (terminal) message."""

    entry_id: str | None = Field(None, max_length=256)


class CommitTurnRequest(HookBase):
    advancement_key: str = Field(
        min_length=1,
        max_length=512,
        description="One per logical turn; a retry sends the same key.",
    )
    messages: list[Any] = Field(
        description="This turn's messages only: the admitted user message through the final answer."
    )
    is_heartbeat: StrictBool = False
    admission: TurnAnchor | None = None
    terminal: TurnAnchor | None = None


class CommitTurnResponse(AfterTurnResponse):
    status: Literal["committed", "duplicate"]

    @classmethod
    def from_turn(cls, result: CaptureResult, duration_ms: int) -> CommitTurnResponse:
        fields = AfterTurnResponse.from_result(result, duration_ms).model_dump()
        return cls(status=result.status, **fields)


class CompactRequest(HookBase):
    force: bool | None = None
    current_token_count: float | None = None
    compaction_target: str | None = None
    custom_instructions: str | None = Field(None, max_length=20000)
    trigger: str | None = Field(
        None, max_length=64, description="What asked for compaction: overflow, manual, ..."
    )
    wait: bool = True
    timeout_ms: Integer = Field(120000, ge=0, le=600000)


class CompactResponse(ApiModel):
    ok: bool
    compacted: bool
    reason: str
    result: dict[str, Any] | None = None

    @classmethod
    def from_result(cls, result: CompactResult) -> CompactResponse:
        report = compact_report(result.result) if result.result is not None else None
        return cls(ok=result.ok, compacted=result.compacted, reason=result.reason, result=report)


def compact_report(report: CompactReport) -> dict[str, Any]:
    """``result`` of a /compact answer: summary and tokensAfter only when known."""
    out: dict[str, Any] = {}
    if report.summary is not None:
        out["summary"] = report.summary
    out["tokensBefore"] = report.tokens_before
    if report.tokens_after is not None:
        out["tokensAfter"] = report.tokens_after
    out["details"] = compact_details(report.details)
    return out


def compact_details(details: CompactDetails) -> dict[str, Any]:
    """``result.details``: the id of an archive this compaction made comes first; the id of an
    earlier archive it waited for comes after the wait's duration."""
    out: dict[str, Any] = {}
    if details.made_archive:
        out["archiveId"] = details.archive_id
    out["messagesArchived"] = details.messages_archived
    if details.duration_ms is not None:
        out["durationMs"] = details.duration_ms
        if not details.made_archive:
            out["archiveId"] = details.archive_id
    if details.memories_extracted is not None:
        out["memoriesExtracted"] = details.memories_extracted
    if details.failed:
        out["error"] = details.error
    return out
