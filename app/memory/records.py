"""Memory records: identifiers, URIs and the record readers see (docs/recall.md, Memory records)."""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from dataclasses import dataclass, fields
from typing import Any

from pydantic.alias_generators import to_camel

from app.core.clock import isoformat
from app.db.models import Memory
from app.db.shared.memory_partitions import memory_partition

CATEGORIES = (
    "profile",
    "preferences",
    "entities",
    "events",
    "cases",
    "experiences",
    "skills",
    "tools",
)
AGENT_CATEGORIES = frozenset({"experiences", "skills", "tools"})
SENSITIVITIES = ("allowed", "masked", "never-store")
MASKED_TEXT = "[masked: sensitive memory]"


def owner_of(category: str, user_id: str, agent_id: str) -> tuple[str, str]:
    """Experiences, skills and tools belong to the agent; everything else to the user."""
    return ("agent", agent_id) if category in AGENT_CATEGORIES else ("user", user_id)


def owner_key(tenant_id: str, owner: tuple[str, str]) -> str:
    """The index partition of an owner."""
    return memory_partition(tenant_id, owner)


def new_memory_id() -> str:
    return str(uuid.uuid4())


def slugify(title: str, memory_id: str) -> str:
    """A readable, unique file-like name: ascii words of the title plus a short id."""
    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_title.lower())[:8]
    stem = "-".join(words) or "memory"
    return f"{stem}-{memory_id[:8]}"


def memory_uri(
    category: str, owner: tuple[str, str], title: str, memory_id: str, *, masked: bool = False
) -> str:
    """``viking://user/<u>/memories/<category>/<slug>.md``; profile is a singleton file. A masked
    memory's URI says nothing of its text."""
    kind, owner_id = owner
    if masked:
        title = ""
    if category == "profile":
        return f"viking://user/{owner_id}/memories/profile.md"
    return f"viking://{kind}/{owner_id}/memories/{category}/{slugify(title, memory_id)}.md"


def one_line(text: str, limit: int = 200) -> str:
    line = next(
        (
            ln.strip().lstrip("-*# ").strip()
            for ln in text.splitlines()
            if ln.strip().lstrip("-*# ").strip()
        ),
        "",
    )
    return line if len(line) <= limit else line[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A memory as its readers see it (docs/recall.md, Memory records); a masked one read without the
    sensitive scope hides its texts. Times are ISO 8601 text, as they are answered and exported."""

    id: str
    uri: str
    category: str
    title: str
    abstract: str
    content: str
    confidence: float
    sensitivity: str
    priority: int
    expires_at: str | None
    version: int
    source: dict[str, Any]
    observed_at: str | None
    created_at: str | None
    updated_at: str | None
    superseded_by: str | None
    owner_kind: str
    owner_id: str
    embedding_model: str | None


def memory_record(memory: Memory, *, can_read_sensitive: bool) -> MemoryRecord:
    """The record of a stored memory; masked memories hide their text without the sensitive scope."""
    masked = memory.sensitivity == "masked" and not can_read_sensitive
    return MemoryRecord(
        id=memory.id,
        uri=memory.uri,
        category=memory.category,
        title=MASKED_TEXT if masked else memory.title,
        abstract=MASKED_TEXT if masked else memory.abstract,
        content=MASKED_TEXT if masked else memory.content,
        confidence=memory.confidence,
        sensitivity=memory.sensitivity,
        priority=memory.priority,
        expires_at=isoformat(memory.expires_at),
        version=memory.version,
        source=json.loads(memory.source_json or "{}"),
        observed_at=isoformat(memory.observed_at),
        created_at=isoformat(memory.created_at),
        updated_at=isoformat(memory.updated_at),
        superseded_by=memory.superseded_by,
        owner_kind=memory.owner_kind,
        owner_id=memory.owner_id,
        embedding_model=memory.embedding_model,
    )


def record_json(record: MemoryRecord) -> dict[str, Any]:
    """A record as export files and the audit trail hold it: camelCase keys (the API's aliases), in
    field order."""
    return {key: getattr(record, name) for name, key in _JSON_KEYS}


_JSON_KEYS = tuple((f.name, to_camel(f.name)) for f in fields(MemoryRecord))


def snapshot(memory: Memory) -> str:
    """The audit trail's before/after image."""
    return json.dumps(
        record_json(memory_record(memory, can_read_sensitive=True)),
        ensure_ascii=False,
        sort_keys=True,
    )
