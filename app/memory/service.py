"""The memory API's use cases: commit_memory, read, edit, delete, forget, export, import
(docs/api.md, Memories; docs/recall.md, Writing memories)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.clock import utcnow
from app.core.threads import to_thread
from app.db.models import Memory
from app.db.uow import UnitOfWork
from app.errors import Conflict, InvalidArgument, NotFound
from app.memory.records import (
    CATEGORIES,
    SENSITIVITIES,
    MemoryRecord,
    memory_record,
    memory_uri,
    owner_of,
    snapshot,
)
from app.memory.results import CommitOutcome, Deleted, ForgetOutcome, MemoryPage
from app.memory.store import repository as repo
from app.memory.store.commit import Writer, commit_write
from app.memory.store.embedding_cache import CachedEmbedder
from app.memory.store.fields import (
    NewMemory,
    apply_changes,
    clean_changes,
    clean_new_memory,
    forgettable,
    make_cursor,
    parse_cursor,
)
from app.memory.store.preparing import DEFAULT_LIMITS, EmbeddingLimits, prepare_many
from app.memory.store.writes import PreparedChunks, audit, chunks_for, remove_memories, write_chunks


@dataclass(frozen=True, slots=True)
class Caller:
    tenant_id: str
    user_id: str = "default"
    agent_id: str = "main"
    can_read_sensitive: bool = True
    user_from_header: bool = False


class MemoryService:
    def __init__(
        self,
        uow: UnitOfWork,
        embedder: CachedEmbedder | None,
        limits: EmbeddingLimits = DEFAULT_LIMITS,
    ) -> None:
        self.uow = uow
        self.embedder = embedder
        self.limits = limits

    async def prepare(self, text: str) -> PreparedChunks:
        """Chunks and their vectors, computed outside any transaction; no embedder → keyword only."""
        return await self.prepare_chunks(await to_thread(chunks_for, text))

    async def prepare_chunks(self, texts: list[str]) -> PreparedChunks:
        """Vectors of the first chunks of a memory (see ``EmbeddingLimits``) and of their passages."""
        prepared = (await self.prepare_many([texts]))[0]
        if not prepared.vectors:  # nothing within the budget (blank text): keyword search only
            return PreparedChunks(texts, None, None)
        return prepared

    async def prepare_many(self, chunked: list[list[str]]) -> list[PreparedChunks]:
        """``prepare_chunks`` for many memories with one embedding call (``preparing``)."""
        return await prepare_many(self.embedder, self.limits, chunked)

    async def commit_memory(
        self, caller: Caller, new: NewMemory, actor: str = "api"
    ) -> CommitOutcome:
        """ADD a memory, UPDATE the profile, or NONE for a duplicate or a refused one."""
        _validate(new.category, new.sensitivity)
        if new.sensitivity == "never-store":
            return CommitOutcome("NONE", reason="never-store")
        # Redaction and chunking are CPU work: a worker thread, never the event loop.
        clean = await to_thread(clean_new_memory, new)
        if clean is None:
            return CommitOutcome("NONE", reason="nothing_left_after_redaction")
        prepared = await self.prepare_chunks(clean.chunks)
        # Database work runs in a worker thread: the write lock must never be awaited on the loop.
        owner = owner_of(new.category, caller.user_id, caller.agent_id)
        result, merged_id = await to_thread(
            commit_write,
            self.uow,
            Writer(caller.tenant_id, owner, caller.can_read_sensitive, actor),
            new,
            clean,
            prepared,
        )
        if merged_id is not None:
            # The merged profile's text is new: embed it with no transaction open, then store it.
            await self._embed_again(caller.tenant_id, merged_id)
        return result

    async def _embed_again(self, tenant_id: str, memory_id: str) -> None:
        """Re-embed a memory whose text changed inside a transaction (no model call inside one)."""
        content = await to_thread(self._content_of, tenant_id, memory_id)
        if content is None:
            return
        prepared = await self.prepare(content)
        await to_thread(self._store_vectors, tenant_id, memory_id, content, prepared)

    def _content_of(self, tenant_id: str, memory_id: str) -> str | None:
        with self.uow.read() as db:
            memory = repo.get_memory(db, tenant_id, memory_id)
            return memory.content if memory is not None else None

    def _store_vectors(
        self, tenant_id: str, memory_id: str, content: str, prepared: PreparedChunks
    ) -> None:
        with self.uow.write() as db:
            memory = repo.get_memory(db, tenant_id, memory_id)
            if memory is not None and memory.content == content:  # unchanged since it was read
                write_chunks(db, self.uow.storage, memory, prepared)

    def generations(self, tenant_id: str, owners: list[tuple[str, str]]) -> tuple[int, ...]:
        """Each owner's memory generation (moved on by any change to its memories)."""
        return repo.generations_of(self.uow.driver_rows, tenant_id, owners)

    def get(self, caller: Caller, memory_id: str) -> MemoryRecord:
        with self.uow.read() as db:
            memory = _found(repo.get_memory(db, caller.tenant_id, memory_id), memory_id)
            return memory_record(memory, can_read_sensitive=caller.can_read_sensitive)

    def list_memories(
        self,
        caller: Caller,
        owners: list[tuple[str, str]],
        category: str | None,
        text: str | None,
        limit: int,
        cursor: str | None,
    ) -> MemoryPage:
        with self.uow.read() as db:
            rows = repo.list_memories(
                db,
                caller.tenant_id,
                owners,
                utcnow(),
                category=category,
                text=text,
                after=parse_cursor(cursor),
                limit=limit + 1,
            )
        items = [
            memory_record(m, can_read_sensitive=caller.can_read_sensitive) for m in rows[:limit]
        ]
        last = rows[limit - 1] if len(rows) > limit else None
        return MemoryPage(items, make_cursor(last.created_at, last.id) if last else None)

    async def patch(
        self,
        caller: Caller,
        memory_id: str,
        changes: dict[str, Any],
        version: int | None,
        actor: str = "api",
    ) -> MemoryRecord:
        """Edit with an optimistic version: a stale version is a 409. ``changes`` are keyed by record
        field name (``ttl_days``); ``actor`` goes to the audit trail."""
        # A null leaves its field as it is; only ttl_days has a null that means something (no expiry).
        changes = {
            key: value for key, value in changes.items() if value is not None or key == "ttl_days"
        }
        if "category" in changes or "sensitivity" in changes:
            _validate(changes.get("category", "profile"), changes.get("sensitivity", "allowed"))
        changes, content = await to_thread(clean_changes, changes)
        reindex = content is not None or "title" in changes or "category" in changes
        view = await to_thread(
            self._patch_write, caller, memory_id, changes, content, version, reindex, actor
        )
        if reindex:
            await self._embed_again(caller.tenant_id, memory_id)
        return view

    def _patch_write(
        self,
        caller: Caller,
        memory_id: str,
        changes: dict[str, Any],
        content: str | None,
        version: int | None,
        reindex: bool,
        actor: str = "api",
    ) -> MemoryRecord:
        now = utcnow()
        with self.uow.write() as db:
            memory = _found(repo.get_memory(db, caller.tenant_id, memory_id), memory_id)
            if version is not None and version != memory.version:
                raise Conflict(
                    f"memory {memory_id} is at version {memory.version}, not {version}",
                    {"currentVersion": memory.version},
                )
            before = snapshot(memory)
            apply_changes(memory, changes, content, now)
            if "category" in changes:
                owner = owner_of(memory.category, caller.user_id, caller.agent_id)
                memory.owner_kind, memory.owner_id = owner
                memory.uri = memory_uri(
                    memory.category,
                    owner,
                    memory.title,
                    memory.id,
                    masked=memory.sensitivity == "masked",
                )
            if reindex:
                write_chunks(
                    db,
                    self.uow.storage,
                    memory,
                    PreparedChunks(chunks_for(memory.content), None, None),
                )
            audit(db, memory, "UPDATE", actor, "edit", before, now)
            return memory_record(memory, can_read_sensitive=caller.can_read_sensitive)

    def delete(self, caller: Caller, memory_id: str, actor: str = "api") -> Deleted:
        with self.uow.write() as db:
            memory = _found(repo.get_memory(db, caller.tenant_id, memory_id), memory_id)
            audit(db, memory, "DELETE", actor, "delete", snapshot(memory), utcnow(), deleted=True)
            remove_memories(db, self.uow.storage, [memory.id])
        return Deleted(memory_id)

    def forget(
        self,
        caller: Caller,
        owners: list[tuple[str, str]],
        days: float | None,
        subject: str | None,
        dry_run: bool,
    ) -> ForgetOutcome:
        """Delete the owners' memories of the last ``days`` days and/or mentioning ``subject``."""
        if days is None and not subject:
            raise InvalidArgument("give days or subject", {"fields": ["days", "subject"]})
        now = utcnow()
        with self.uow.write() as db:
            candidates = repo.all_memories(db, caller.tenant_id, owners)
            chosen = [m for m in candidates if forgettable(m, days, subject, now)]
            ids = [m.id for m in chosen]
            if not dry_run:
                for memory in chosen:
                    audit(
                        db,
                        memory,
                        "DELETE",
                        "api",
                        f"forget days={days} subject={subject!r}",
                        snapshot(memory),
                        now,
                        deleted=True,
                    )
                remove_memories(db, self.uow.storage, ids)
        return ForgetOutcome(0 if dry_run else len(ids), ids, dry_run)

    def export(self, caller: Caller, owners: list[tuple[str, str]]) -> list[MemoryRecord]:
        with self.uow.read() as db:
            return [
                memory_record(m, can_read_sensitive=caller.can_read_sensitive)
                for m in repo.all_memories(db, caller.tenant_id, owners)
            ]


def _validate(category: str, sensitivity: str) -> None:
    if category not in CATEGORIES:
        raise InvalidArgument(
            f"unknown category {category!r}", {"field": "category", "allowed": list(CATEGORIES)}
        )
    if sensitivity not in SENSITIVITIES:
        raise InvalidArgument(
            f"unknown sensitivity {sensitivity!r}",
            {"field": "sensitivity", "allowed": list(SENSITIVITIES)},
        )


def _found(memory: Memory | None, memory_id: str) -> Memory:
    if memory is None:
        raise NotFound("memory", memory_id)
    return memory
