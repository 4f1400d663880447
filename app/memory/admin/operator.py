"""Operator use cases over memories: browse a tenant's memories by category, read one with its
audit trail, export and import them in batches (JSON Lines)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from app.core.clock import isoformat, utcnow
from app.core.threads import to_thread
from app.db.models import Memory
from app.db.uow import UnitOfWork
from app.errors import NotFound
from app.memory.admin import repository as admin_repo
from app.memory.admin.repository import HeldId
from app.memory.admin.transfer import prepare_batch, redact_records, store_records
from app.memory.records import CATEGORIES, MASKED_TEXT, MemoryRecord, memory_record, record_json
from app.memory.service import Caller, MemoryService
from app.memory.store import repository as repo

EXPORT_PAGE = 500


@dataclass(frozen=True, slots=True)
class MemoryBrowse:
    """A page of a tenant's current memories and how many there are per category."""

    items: list[MemoryRecord]
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str  # the field's name in the audit snapshot (the export format's camelCase)
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class AuditEntry:
    action: str
    actor: str
    reason: str | None
    created_at: datetime
    changes: list[FieldChange]


@dataclass(frozen=True, slots=True)
class MemoryHistory:
    """A memory (None once deleted) and its audit trail, oldest change first."""

    memory: MemoryRecord | None
    audit: list[AuditEntry]


TEXT_FIELDS = ("title", "abstract", "content")
# Fields that change with every edit and say nothing by themselves in an audit trail.
UNINTERESTING = frozenset({"updatedAt", "embeddingModel"})


def browse_memories(
    uow: UnitOfWork,
    caller: Caller,
    category: str | None,
    text: str | None,
    limit: int = 50,
    offset: int = 0,
) -> MemoryBrowse:
    """Current memories of the caller's tenant (every user and agent) and counts per category."""
    now = utcnow()
    with uow.read() as db:
        rows = admin_repo.browse(
            db, caller.tenant_id, now, category or None, (text or "").strip() or None, limit, offset
        )
        counts = admin_repo.category_counts(db, caller.tenant_id, now)
    return MemoryBrowse(
        items=[memory_record(m, can_read_sensitive=caller.can_read_sensitive) for m in rows],
        counts={c: counts.get(c, 0) for c in CATEGORIES},
    )


def memory_with_audit(uow: UnitOfWork, caller: Caller, memory_id: str) -> MemoryHistory:
    """The memory (None once deleted) and its audit trail, oldest change first."""
    with uow.read() as db:
        memory = repo.get_memory(db, caller.tenant_id, memory_id)
        entries = repo.audit_of(db, caller.tenant_id, memory_id)
        record = (
            memory_record(memory, can_read_sensitive=caller.can_read_sensitive)
            if memory is not None
            else None
        )
    if record is None and not entries:
        raise NotFound("memory", memory_id)
    return MemoryHistory(record, [_audit_entry(e, caller.can_read_sensitive) for e in entries])


def _audit_entry(entry: Any, can_read_sensitive: bool) -> AuditEntry:
    before = json.loads(entry.before_json) if entry.before_json else None
    after = json.loads(entry.after_json) if entry.after_json else None
    hide = not can_read_sensitive and any(
        (s or {}).get("sensitivity") == "masked" for s in (before, after)
    )
    changes = [
        FieldChange(
            k, _shown(k, (before or {}).get(k), hide), _shown(k, (after or {}).get(k), hide)
        )
        for k in _changed_fields(before, after)
    ]
    return AuditEntry(entry.action, entry.actor, entry.reason, entry.created_at, changes)


def _changed_fields(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    if before is None:  # added: the text and the category are the news, not every field
        return [k for k in ("content", "category") if (after or {}).get(k)]
    if after is None:  # deleted: what was lost
        return [k for k in ("content",) if before.get(k)]
    return [k for k in after if k not in UNINTERESTING and before.get(k) != after.get(k)]


def _shown(field: str, value: Any, hide: bool) -> Any:
    return MASKED_TEXT if hide and field in TEXT_FIELDS and value else value


def _view(memory: Memory, *, can_read_sensitive: bool) -> dict[str, Any]:
    """The console's and the export file's memory: the record with camelCase keys."""
    return record_json(memory_record(memory, can_read_sensitive=can_read_sensitive))


def count_memories(uow: UnitOfWork, tenant_id: str) -> int:
    """Every memory of the tenant, superseded and expired ones included (what an export holds)."""
    with uow.read() as db:
        return admin_repo.count_all(db, tenant_id)


def export_records(uow: UnitOfWork, tenant_id: str) -> Iterator[dict[str, Any]]:
    """Every memory of the tenant as /memories/export writes it, a page at a time, by id."""
    after = ""
    while True:
        with uow.read() as db:
            page = admin_repo.page_after(db, tenant_id, after, EXPORT_PAGE)
            views = [_view(m, can_read_sensitive=True) for m in page]
        if not views:
            return
        yield from views
        after = views[-1]["id"]


@dataclass(frozen=True, slots=True)
class BatchOutcome:
    imported: int
    skipped: int


async def import_batch(
    service: MemoryService, tenant_id: str, records: list[MemoryRecord]
) -> BatchOutcome:
    """Store one batch of exported records: one embedding call, one transaction.

    A record already present at the same version and time is skipped, so an interrupted import
    run again resumes where it stopped and re-embeds nothing. A record whose id another tenant
    holds gets an id derived from the tenant and the original, the same on every run.
    """
    holders = await to_thread(_holders, service.uow, tenant_id, [r.id for r in records])
    fresh: list[MemoryRecord] = []
    for record in records:
        held = holders.get(record.id)
        if held is not None and held.tenant_id != tenant_id:
            record = replace(record, id=_tenant_copy_id(tenant_id, record.id))
            held = holders.get(record.id)
        if held is None or not _same_revision(held, record):
            fresh.append(record)
    if fresh:
        fresh = await to_thread(redact_records, fresh)
        prepared = await prepare_batch(service, [r.content for r in fresh])
        await to_thread(store_records, service, Caller(tenant_id), fresh, prepared)
    return BatchOutcome(imported=len(fresh), skipped=len(records) - len(fresh))


def _holders(uow: UnitOfWork, tenant_id: str, ids: list[str]) -> dict[str, HeldId]:
    """Who holds each id of the batch, and each id a foreign-held record would be moved to."""
    with uow.read() as db:
        found = admin_repo.owners_of_ids(db, ids)
        foreign = [
            _tenant_copy_id(tenant_id, i) for i, row in found.items() if row.tenant_id != tenant_id
        ]
        found.update(admin_repo.owners_of_ids(db, foreign))
    return found


def _tenant_copy_id(tenant_id: str, memory_id: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant_id}/{memory_id}"))


def _same_revision(held: HeldId, record: MemoryRecord) -> bool:
    """Whether the stored memory is the record's revision: same version, same change time (to the
    millisecond, the precision of an export)."""
    when = record.updated_at
    if not when or record.version != held.version:
        return False
    try:
        parsed = datetime.fromisoformat(when.replace("Z", "+00:00"))
    except ValueError:
        return False
    return parsed.tzinfo is not None and isoformat(parsed) == isoformat(held.updated_at)
