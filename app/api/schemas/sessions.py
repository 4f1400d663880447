"""Shapes of /sessions (docs/api.md, Sessions)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from app.api.schemas.base import ApiModel, Integer, RequestModel
from app.archives.read import views as archive_views
from app.core.clock import isoformat
from app.sessions import admin
from app.sessions import service as sessions
from app.sessions.hooks import HookHealth


class ArchiveSummary(ApiModel):
    archive_id: str
    status: str
    message_count: int
    created_at: str | None
    completed_at: str | None
    error: str | None

    @classmethod
    def from_result(cls, summary: archive_views.ArchiveSummary) -> ArchiveSummary:
        return cls(
            archive_id=summary.archive_id,
            status=summary.status,
            message_count=summary.message_count,
            created_at=isoformat(summary.created_at),
            completed_at=isoformat(summary.completed_at),
            error=summary.error,
        )


class HookCalls(ApiModel):
    calls: int
    first_at: str | None
    last_at: str | None
    host_version: str | None
    plugin_version: str | None


class HookHealthView(ApiModel):
    """When each hook last arrived and from which host and plugin; ``flags`` says what is wrong
    (docs/api.md, Hook health)."""

    flags: list[str]
    last_hook_at: str | None
    host_version: str | None
    plugin_version: str | None
    hooks: dict[str, HookCalls]

    @classmethod
    def from_result(cls, health: HookHealth) -> HookHealthView:
        newest = health.newest
        return cls(
            flags=list(health.flags),
            last_hook_at=isoformat(newest.last_at) if newest else None,
            host_version=newest.host_version if newest else None,
            plugin_version=newest.plugin_version if newest else None,
            hooks={
                r.hook: HookCalls(
                    calls=r.calls,
                    first_at=isoformat(r.first_at),
                    last_at=isoformat(r.last_at),
                    host_version=r.host_version,
                    plugin_version=r.plugin_version,
                )
                for r in health.records
            },
        )


class LlmUsage(ApiModel):
    prompt_tokens: int
    completion_tokens: int


class SessionView(ApiModel):
    session_id: str
    session_key: str | None
    agent_id: str
    user_id: str
    message_count: int
    total_message_count: int
    pending_tokens: int
    keep_recent_count: int
    commit_count: int
    last_commit_at: str | None
    created_at: str | None
    updated_at: str | None
    llm_usage: LlmUsage
    archives: list[ArchiveSummary]
    hooks: HookHealthView

    @classmethod
    def from_result(cls, view: sessions.SessionView) -> SessionView:
        return cls(
            session_id=view.session_id,
            session_key=view.session_key,
            agent_id=view.agent_id,
            user_id=view.user_id,
            message_count=view.message_count,
            total_message_count=view.total_message_count,
            pending_tokens=view.pending_tokens,
            keep_recent_count=view.keep_recent_count,
            commit_count=view.commit_count,
            last_commit_at=isoformat(view.last_commit_at),
            created_at=isoformat(view.created_at),
            updated_at=isoformat(view.updated_at),
            llm_usage=LlmUsage(
                prompt_tokens=view.llm_prompt_tokens,
                completion_tokens=view.llm_completion_tokens,
            ),
            archives=[ArchiveSummary.from_result(a) for a in view.archives],
            hooks=HookHealthView.from_result(view.hooks),
        )


class CommitRequest(RequestModel):
    keep_recent_count: Integer = Field(0, ge=0, le=10000)
    wait: bool = False
    timeout_ms: Integer = Field(120000, ge=0, le=600000)
    custom_instructions: str | None = Field(None, max_length=20000)


class CommitResponse(ApiModel):
    session_id: str
    status: str
    archive_id: str | None
    reason: str | None = None
    archive: dict[str, Any] | None = None


class DeletedCounts(ApiModel):
    messages: int
    archives: int


class DeleteResponse(ApiModel):
    session_id: str
    deleted: DeletedCounts

    @classmethod
    def from_result(cls, deleted: sessions.DeletedSession) -> DeleteResponse:
        return cls(
            session_id=deleted.session_id,
            deleted=DeletedCounts(messages=deleted.messages, archives=deleted.archives),
        )


# The operator's records (console pages, `sessions` command JSON): camelCase like the API.


def archive_detail_record(detail: admin.ArchiveDetail) -> dict[str, Any]:
    return {
        **ArchiveSummary.from_result(detail.summary).model_dump(by_alias=True),
        "firstSeq": detail.first_seq,
        "lastSeq": detail.last_seq,
        "overview": detail.overview,
        "abstract": detail.abstract,
        "workingMemoryPath": detail.working_memory_path,
        "errorStage": detail.error_stage,
        "memoriesExtracted": detail.memories_extracted,
        "memoryError": detail.memory_error,
    }


def session_row_record(row: admin.SessionRow) -> dict[str, Any]:
    return {
        "tenantId": row.tenant_id,
        "sessionId": row.session_id,
        "sessionKey": row.session_key,
        "agentId": row.agent_id,
        "userId": row.user_id,
        "messageCount": row.message_count,
        "totalMessageCount": row.total_message_count,
        "pendingTokens": row.pending_tokens,
        "archiveCount": row.archive_count,
        "archiveStatuses": row.archive_statuses,
        "updatedAt": isoformat(row.updated_at),
    }


def timeline_record(timeline: admin.SessionTimeline) -> dict[str, Any]:
    return {
        **SessionView.from_result(timeline.view).model_dump(by_alias=True),
        "archives": [archive_detail_record(a) for a in timeline.archives],
        "live": [
            {
                "seq": m.seq,
                "role": m.role,
                "message": m.message,
                "createdAt": isoformat(m.created_at),
            }
            for m in timeline.live
        ],
    }


def export_record(record: admin.ExportRecord) -> dict[str, Any]:
    """One JSON Lines record of `sessions export`."""
    if isinstance(record, admin.SessionRow):
        return {
            "type": "session",
            **session_row_record(record),
            "createdAt": isoformat(record.created_at),
        }
    if isinstance(record, admin.ArchiveDetail):
        return {"type": "archive", **archive_detail_record(record)}
    return {
        "type": "message",
        "seq": record.seq,
        "archiveId": record.archive_id,
        "role": record.role,
        "createdAt": isoformat(record.created_at),
        "message": record.message,
    }
