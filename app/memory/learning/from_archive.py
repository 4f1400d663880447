"""Phase 2 step 3: extract long-term memories and agent experiences from an archive and apply the
ADD / UPDATE / DELETE / NONE decisions, each audited (docs/recall.md, Writing memories)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.core.clock import utcnow
from app.core.rules.redaction import redact_secrets
from app.core.threads import to_thread
from app.db.models import Memory
from app.memory.learning.extraction import Candidate, Decision, decide, extract_candidates
from app.memory.records import memory_uri, new_memory_id, one_line, owner_of, snapshot
from app.memory.search.hybrid import SearchInput, search_memories
from app.memory.service import Caller, MemoryService
from app.memory.store import repository as repo
from app.memory.store.writes import PreparedChunks, audit, write_chunks
from app.providers.protocols import ChatModel

NEIGHBOURS = 5


@dataclass(frozen=True, slots=True)
class ArchiveForLearning:
    tenant_id: str
    user_id: str
    agent_id: str
    session_id: str
    archive_id: str
    messages: list[dict[str, Any]]
    seqs: list[int]
    working_memory: str
    message_time: str


async def learn_from_archive(
    service: MemoryService, model: ChatModel, archive: ArchiveForLearning
) -> tuple[dict[str, int], dict[str, int]]:
    """Extract, decide and apply; returns (counts per category of applied changes, token usage)."""
    caller = Caller(archive.tenant_id, archive.user_id, archive.agent_id)
    candidates, usage = await extract_candidates(
        model,
        archive.messages,
        archive.working_memory,
        message_time=archive.message_time,
        user_id=archive.user_id,
        agent_id=archive.agent_id,
    )
    counts: dict[str, int] = {}
    for candidate in candidates:
        if candidate.sensitivity == "never-store":
            continue
        neighbours = await _neighbours(service, caller, candidate)
        decision, spent = await decide(model, candidate, neighbours)
        for key, value in spent.items():
            usage[key] = usage.get(key, 0) + value
        if decision.action == "NONE":
            continue
        prepared = await service.prepare(_content_of(decision))
        # The store runs in a worker thread: the write lock is never awaited on the event loop.
        applied = await to_thread(_apply, service, caller, archive, decision, prepared)
        if applied:
            counts[candidate.category] = counts.get(candidate.category, 0) + 1
    return counts, usage


async def _neighbours(
    service: MemoryService, caller: Caller, candidate: Candidate
) -> list[dict[str, Any]]:
    query = f"{candidate.title}\n{candidate.content}"[:2000]
    found = await search_memories(
        service, caller, SearchInput(query=query, categories=[candidate.category], limit=NEIGHBOURS)
    )
    return [
        {"id": h.record.id, "title": h.record.title, "content": h.record.content, "score": h.score}
        for h in found.results
    ]


def _content_of(decision: Decision) -> str:
    text = (
        decision.merged_content
        if decision.action == "UPDATE" and decision.merged_content
        else decision.candidate.content
    )
    return redact_secrets(text)[0]


def _apply(
    service: MemoryService,
    caller: Caller,
    archive: ArchiveForLearning,
    decision: Decision,
    prepared: PreparedChunks,
) -> bool:
    now = utcnow()
    with service.uow.write() as db:
        target = (
            repo.get_memory(db, caller.tenant_id, decision.target_id)
            if decision.target_id
            else None
        )
        if decision.action == "UPDATE" and target is not None:
            before = snapshot(target)
            target.content = _content_of(decision)
            target.abstract = one_line(target.content)
            target.version += 1
            target.updated_at = now
            write_chunks(db, service.uow.storage, target, prepared)
            audit(db, target, "UPDATE", "extraction", decision.reason, before, now)
            return True
        memory = _new_memory(caller, archive, decision.candidate, now)
        repo.add_memory(db, memory)
        write_chunks(db, service.uow.storage, memory, prepared)
        audit(db, memory, "ADD", "extraction", decision.reason, None, now)
        if decision.action == "DELETE" and target is not None:
            # A memory proven false is superseded: kept for the audit trail, hidden from recall.
            before = snapshot(target)
            target.superseded_by = memory.id
            target.version += 1
            target.updated_at = now
            audit(db, target, "DELETE", "extraction", decision.reason, before, now)
        return True


def _new_memory(
    caller: Caller, archive: ArchiveForLearning, candidate: Candidate, now: datetime
) -> Memory:
    owner = owner_of(candidate.category, caller.user_id, caller.agent_id)
    memory_id = new_memory_id()
    content = redact_secrets(candidate.content)[0]
    title = redact_secrets(candidate.title or one_line(content, 80))[0]
    source = {
        "kind": "archive",
        "sessionId": archive.session_id,
        "archiveId": archive.archive_id,
        "messageSeqs": candidate.source_seqs,
    }
    observed = _parse_date(candidate.observed_at)
    return Memory(
        id=memory_id,
        tenant_id=caller.tenant_id,
        owner_kind=owner[0],
        owner_id=owner[1],
        uri=memory_uri(candidate.category, owner, title, memory_id),
        category=candidate.category,
        title=title,
        abstract=redact_secrets(candidate.abstract)[0] or one_line(content),
        content=content,
        confidence=candidate.confidence,
        sensitivity=candidate.sensitivity,
        priority=0,
        version=1,
        source_json=json.dumps(source, ensure_ascii=False),
        observed_at=observed,
        created_at=now,
        updated_at=now,
    )


def _parse_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=utcnow().tzinfo)
