"""Memory fields on their way into the store: every text a memory keeps (content, title, abstract,
URI, source) crosses the redaction boundary here, off the event loop and before the write lock;
plus the pure rules of an edit (docs/recall.md, Privacy policy; docs/quality.md, Security)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from app.core.rules.redaction import redact_text, redact_value
from app.db.models import Memory
from app.errors import InvalidArgument
from app.memory.records import one_line
from app.memory.store.writes import chunks_for

_TAG_RE = re.compile(r"\[REDACTED:[^\]]*\]")
REDACTED_PATCH_FIELDS = ("content", "title", "abstract")


@dataclass(slots=True)
class NewMemory:
    content: str
    category: str
    title: str | None = None
    priority: int = 0
    confidence: float = 1.0
    sensitivity: str = "allowed"
    ttl_days: float | None = None
    source: dict[str, Any] = field(default_factory=lambda: {"kind": "api"})
    observed_at: datetime | None = None
    id: str | None = None


@dataclass(frozen=True, slots=True)
class CleanMemory:
    """A new memory's texts as they may be stored, and the chunks of its content."""

    content: str
    title: str
    source: dict[str, Any]
    chunks: list[str]


def clean_new_memory(new: NewMemory) -> CleanMemory | None:
    """The redacted texts and chunks of a new memory; None when nothing but secrets was in it."""
    content = redact_text(new.content.strip())
    if not _TAG_RE.sub("", content).strip():
        return None
    title = redact_text((new.title or one_line(content, 80)).strip())
    source = redact_value(new.source)[0]
    return CleanMemory(content, title, source, chunks_for(content))


def clean_changes(changes: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """An edit's changes with its texts redacted, and the new content (None: unchanged)."""
    clean = dict(changes)
    for key in REDACTED_PATCH_FIELDS:
        if isinstance(clean.get(key), str):
            clean[key] = redact_text(clean[key])
    content = clean.get("content")
    return clean, content.strip() if isinstance(content, str) else None


def apply_changes(
    memory: Memory, changes: dict[str, Any], content: str | None, now: datetime
) -> None:
    """An edit applied to a memory row (its version moves on)."""
    if content is not None:
        if not changes.get("title") and memory.title == one_line(memory.content, 80):
            memory.title = one_line(content, 80)  # a title derived from the old text follows it
        memory.content = content
        memory.abstract = changes.get("abstract") or one_line(content)
    for key in ("title", "category", "sensitivity", "priority"):
        if key in changes and changes[key] is not None:
            setattr(memory, key, changes[key])
    if changes.get("abstract") and content is None:
        memory.abstract = changes["abstract"]
    if changes.get("confidence") is not None:
        memory.confidence = max(0.0, min(1.0, float(changes["confidence"])))
    if "ttl_days" in changes:
        ttl_days = changes["ttl_days"]
        memory.expires_at = now + timedelta(days=ttl_days) if ttl_days else None
    memory.version += 1
    memory.updated_at = now


def forgettable(memory: Memory, days: float | None, subject: str | None, now: datetime) -> bool:
    """Whether ``forget`` takes a memory: observed in the last ``days`` and/or mentioning ``subject``."""
    if days is not None:
        when = memory.observed_at or memory.created_at
        if when < now - timedelta(days=days):
            return False
    if subject:
        needle = subject.casefold()
        if needle not in f"{memory.title}\n{memory.content}".casefold():
            return False
    return True


# A list cursor: microseconds since the epoch of the last item's creation, "|", its id. Any value of
# this shape is a position (none is refused), which the OpenAPI pattern can say exactly.
CURSOR_PATTERN = r"^[0-9]{1,17}\|[\s\S]{1,64}$"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def make_cursor(created_at: datetime, memory_id: str) -> str:
    return f"{(created_at - _EPOCH) // _MICROSECOND}|{memory_id}"


def parse_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    """The keyset position of a list cursor (see CURSOR_PATTERN)."""
    if not cursor:
        return None
    micros, _, memory_id = cursor.partition("|")
    if not micros.isascii() or not micros.isdigit() or len(micros) > 17 or not memory_id:
        raise InvalidArgument("cursor is not one this service returned", {"field": "cursor"})
    return _EPOCH + int(micros) * _MICROSECOND, memory_id
