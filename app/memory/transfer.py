"""Import of exported memories (JSON Lines): records come back as they were exported, their texts
(content, title, abstract, URI, source) through the redaction boundary."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from app.core.clock import utcnow
from app.core.redaction import redact_text, redact_value
from app.db.models import Memory
from app.errors import InvalidArgument, PayloadTooLarge
from app.memory import repository as repo
from app.memory.records import CATEGORIES, MASKED_TEXT, SENSITIVITIES, memory_view, new_memory_id
from app.memory.service import Caller, MemoryService
from app.memory.store import audit, chunks_for, remove_memories, write_chunks

REQUIRED = ("id", "uri", "category", "content", "ownerKind", "ownerId")


def parse_lines(body: str, check: Callable[[dict[str, Any]], object] | None = None,
                max_records: int | None = None) -> list[dict[str, Any]]:
    """One JSON object per non-empty line; a bad line is a 400 naming the line, more than
    ``max_records`` records a 413. ``check`` validates a record's fields (raising ValueError), so
    that no bad value reaches the database."""
    records: list[dict[str, Any]] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        if max_records is not None and len(records) >= max_records:
            raise PayloadTooLarge(f"an import holds at most {max_records} records; split the file",
                                  {"maxRecords": max_records})
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise InvalidArgument(f"line {number} is not JSON", {"line": number}) from exc
        if not isinstance(record, dict) or any(k not in record for k in REQUIRED):
            raise InvalidArgument(f"line {number} is not a memory record", {"line": number, "required": list(REQUIRED)})
        if record["category"] not in CATEGORIES or record.get("sensitivity", "allowed") not in SENSITIVITIES:
            raise InvalidArgument(f"line {number} has an unknown category or sensitivity", {"line": number})
        if MASKED_TEXT in (record.get("content"), record.get("title"), record.get("abstract")):
            # An export made without the read-sensitive scope: importing it would destroy the text.
            raise InvalidArgument(f"line {number} is a masked export; export with the read-sensitive scope", {"line": number})
        if check is not None:
            try:
                check(record)
            except ValueError as exc:
                raise InvalidArgument(f"line {number} is not a valid memory record: {_first_error(exc)}",
                                      {"line": number}) from exc
        records.append(record)
    return records


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
    return str(exc)


def _when(value: Any) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    # Exports always carry the offset; a hand-written time without one is taken as UTC.
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        # 9999-12-31T23:59-10:00 is past year 9999 in UTC (and 0001-01-01T00:00+05:00 before year
        # 1): the nearest time the database can hold says the same thing.
        return (datetime.max if parsed.year > 1 else datetime.min).replace(tzinfo=UTC)


def _redacted(record: dict[str, Any]) -> dict[str, Any]:
    """A record whose texts may be stored."""
    texts = {key: redact_text(record.get(key) or "") for key in ("uri", "title", "abstract", "content")}
    return {**record, **texts, "source": redact_value(record.get("source") or {})[0]}


def _row(tenant_id: str, record: dict[str, Any]) -> Memory:
    now = utcnow()
    return Memory(
        id=record["id"], tenant_id=tenant_id, owner_kind=record["ownerKind"], owner_id=record["ownerId"],
        uri=record["uri"], category=record["category"], title=record["title"],
        abstract=record["abstract"], content=record["content"],
        confidence=float(record.get("confidence", 1.0)), sensitivity=record.get("sensitivity", "allowed"),
        priority=int(record.get("priority", 0)), version=int(record.get("version", 1)),
        source_json=json.dumps(record["source"], ensure_ascii=False),
        superseded_by=record.get("supersededBy"), expires_at=_when(record.get("expiresAt")),
        observed_at=_when(record.get("observedAt")), created_at=_when(record.get("createdAt")) or now,
        updated_at=_when(record.get("updatedAt")) or now,
    )


def _prepared_records(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[list[str]]]:
    redacted = [_redacted(record) for record in records]
    return redacted, [chunks_for(record["content"]) for record in redacted]


async def import_memories(service: MemoryService, caller: Caller, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Insert (or replace, by id) every record of the caller's tenant, re-indexing its text."""
    # Redaction and chunking in a worker thread, before the write lock; then the vectors.
    records, chunks = await asyncio.to_thread(_prepared_records, records)
    prepared = [await service.prepare_chunks(texts) for texts in chunks]
    # The write runs in a worker thread: the write lock is never awaited on the event loop.
    imported = await asyncio.to_thread(_store, service, caller, records, prepared)
    return {"imported": len(records), "ids": imported}


def _store(service: MemoryService, caller: Caller, records: list[dict[str, Any]], prepared: list[Any]) -> list[str]:
    now = utcnow()
    imported: list[str] = []
    with service.uow.write() as db:
        for record, chunks in zip(records, prepared, strict=True):
            taken = db.get(Memory, record["id"])
            if taken is not None and taken.tenant_id != caller.tenant_id:
                # Another tenant's id is answered as if it did not exist: the record gets a new id.
                record = {**record, "id": new_memory_id()}
            existing = repo.get_memory(db, caller.tenant_id, record["id"])
            if existing is not None:
                remove_memories(db, service.uow.dialect, [existing.id])
                db.flush()
            memory = repo.add_memory(db, _row(caller.tenant_id, record))
            write_chunks(db, service.uow.dialect, memory, chunks)
            audit(db, memory, "ADD", "import", "import", None, now)
            imported.append(memory.id)
    return imported


__all__ = ["import_memories", "memory_view", "parse_lines"]
