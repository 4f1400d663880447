"""Import of exported memories (JSON Lines): records come back exactly as they were exported."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from app.core.clock import utcnow
from app.core.rules.redaction import redact_text, redact_value
from app.core.threads import to_thread
from app.db.models import Memory
from app.errors import InvalidArgument, PayloadTooLarge
from app.memory.admin import repository as admin_repo
from app.memory.records import CATEGORIES, MASKED_TEXT, SENSITIVITIES, MemoryRecord, new_memory_id
from app.memory.results import ImportOutcome
from app.memory.service import Caller, MemoryService
from app.memory.store.writes import (
    PreparedChunks,
    audit,
    chunks_for,
    remove_memories,
    write_chunks_many,
)

REQUIRED = ("id", "uri", "category", "content", "ownerKind", "ownerId")


def parse_lines(
    body: str,
    check: Callable[[dict[str, Any]], object] | None = None,
    max_records: int | None = None,
) -> list[MemoryRecord]:
    """One JSON object per non-empty line; a bad line is a 400 naming the line, more than
    ``max_records`` records a 413. ``check`` validates a record's fields (raising ValueError), so
    that no bad value reaches the database."""
    records: list[MemoryRecord] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        if max_records is not None and len(records) >= max_records:
            raise PayloadTooLarge(
                f"an import holds at most {max_records} records; split the file",
                {"maxRecords": max_records},
            )
        records.append(parse_record(line, number, check))
    return records


def parse_record(
    line: str, number: int, check: Callable[[dict[str, Any]], object] | None = None
) -> MemoryRecord:
    """One exported memory from its line (``number`` names it in errors); see ``parse_lines``."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise InvalidArgument(f"line {number} is not JSON", {"line": number}) from exc
    if not isinstance(record, dict) or any(k not in record for k in REQUIRED):
        raise InvalidArgument(
            f"line {number} is not a memory record", {"line": number, "required": list(REQUIRED)}
        )
    if (
        record["category"] not in CATEGORIES
        or record.get("sensitivity", "allowed") not in SENSITIVITIES
    ):
        raise InvalidArgument(
            f"line {number} has an unknown category or sensitivity", {"line": number}
        )
    if MASKED_TEXT in (record.get("content"), record.get("title"), record.get("abstract")):
        # An export made without the read-sensitive scope: importing it would destroy the text.
        raise InvalidArgument(
            f"line {number} is a masked export; export with the read-sensitive scope",
            {"line": number},
        )
    if check is not None:
        try:
            check(record)
        except ValueError as exc:
            raise InvalidArgument(
                f"line {number} is not a valid memory record: {_first_error(exc)}", {"line": number}
            ) from exc
    return _record(record)


def _record(raw: dict[str, Any]) -> MemoryRecord:
    """The record of an exported line; a field left out takes the value a new memory has."""
    return MemoryRecord(
        id=raw["id"],
        uri=raw["uri"],
        category=raw["category"],
        title=raw.get("title") or "",
        abstract=raw.get("abstract") or "",
        content=raw["content"] or "",
        confidence=float(raw.get("confidence", 1.0)),
        sensitivity=raw.get("sensitivity", "allowed"),
        priority=int(raw.get("priority", 0)),
        expires_at=raw.get("expiresAt"),
        version=int(raw.get("version", 1)),
        source=raw.get("source") or {},
        observed_at=raw.get("observedAt"),
        created_at=raw.get("createdAt"),
        updated_at=raw.get("updatedAt"),
        superseded_by=raw.get("supersededBy"),
        owner_kind=raw["ownerKind"],
        owner_id=raw["ownerId"],
        embedding_model=None,
    )


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return (
            f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
        )
    return str(exc)


def _when(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    # Exports always carry the offset; a hand-written time without one is taken as UTC.
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        # 9999-12-31T23:59-10:00 is past year 9999 in UTC (and 0001-01-01T00:00+05:00 before year
        # 1): the nearest time the database can hold says the same thing.
        return (datetime.max if parsed.year > 1 else datetime.min).replace(tzinfo=UTC)  # noqa: DTZ901


def _redacted(record: MemoryRecord) -> MemoryRecord:
    """A record whose texts may be stored, indexed and embedded."""
    return replace(
        record,
        uri=redact_text(record.uri),
        title=redact_text(record.title),
        abstract=redact_text(record.abstract),
        content=redact_text(record.content),
        source=redact_value(record.source)[0],
    )


def redact_records(records: list[MemoryRecord]) -> list[MemoryRecord]:
    """Records ready for ``prepare_batch`` and ``store_records``: every text redacted."""
    return [_redacted(record) for record in records]


def _row(tenant_id: str, record: MemoryRecord) -> Memory:
    """The row of a record already passed through ``_redacted``."""
    now = utcnow()
    return Memory(
        id=record.id,
        tenant_id=tenant_id,
        owner_kind=record.owner_kind,
        owner_id=record.owner_id,
        uri=record.uri,
        category=record.category,
        title=record.title,
        abstract=record.abstract,
        content=record.content,
        confidence=record.confidence,
        sensitivity=record.sensitivity,
        priority=record.priority,
        version=record.version,
        source_json=json.dumps(record.source, ensure_ascii=False),
        superseded_by=record.superseded_by,
        expires_at=_when(record.expires_at),
        observed_at=_when(record.observed_at),
        created_at=_when(record.created_at) or now,
        updated_at=_when(record.updated_at) or now,
    )


async def import_memories(
    service: MemoryService, caller: Caller, records: list[MemoryRecord]
) -> ImportOutcome:
    """Insert (or replace, by id) every record of the caller's tenant, re-indexing its text."""
    # Redaction in a worker thread, before the vectors and the write lock.
    records = await to_thread(redact_records, records)
    prepared = await prepare_batch(service, [r.content for r in records])
    # The write runs in a worker thread: the write lock is never awaited on the event loop.
    imported = await to_thread(store_records, service, caller, records, prepared)
    return ImportOutcome(len(records), imported)


async def prepare_batch(service: MemoryService, texts: list[str]) -> list[PreparedChunks]:
    """Chunks and vectors of many memories with one embedding call (``prepare_many``)."""
    # The texts are already redacted (``redact_records``, or stored memories).
    return await service.prepare_many([chunks_for(text) for text in texts])


def store_records(
    service: MemoryService,
    caller: Caller,
    records: list[MemoryRecord],
    prepared: list[PreparedChunks],
) -> list[str]:
    """Write prepared records in one transaction, replacing by id, with a few statements for the
    whole batch; returns each record's id."""
    now = utcnow()
    storage = service.uow.storage
    with service.uow.write() as db:
        held = admin_repo.owners_of_ids(db, [r.id for r in records])
        # Another tenant's id is answered as if it did not exist: the record gets a new id.
        records = [
            r
            if r.id not in held or held[r.id].tenant_id == caller.tenant_id
            else replace(r, id=new_memory_id())
            for r in records
        ]
        latest = {r.id: (r, p) for r, p in zip(records, prepared, strict=True)}  # last id wins
        replaced = [memory_id for memory_id in latest if memory_id in held]
        if replaced:
            remove_memories(db, storage, replaced)
        memories = [(_row(caller.tenant_id, record), chunks) for record, chunks in latest.values()]
        admin_repo.add_memories(db, [memory for memory, _ in memories])
        write_chunks_many(db, storage, memories)
        for memory, _ in memories:
            audit(db, memory, "ADD", "import", "import", None, now)
    return [r.id for r in records]


__all__ = [
    "import_memories",
    "parse_lines",
    "parse_record",
    "redact_records",
    "store_records",
]
