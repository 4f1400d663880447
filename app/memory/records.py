"""Memory records: identifiers, URIs and the API view (docs/recall.md, Memory records)."""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from typing import Any

from app.core.clock import isoformat
from app.db.models import Memory

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
    """The vector partition of an owner."""
    return f"{tenant_id}:{owner[0]}:{owner[1]}"


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


def memory_view(memory: Memory, *, can_read_sensitive: bool) -> dict[str, Any]:
    """The API's memory object; masked memories hide their text without the sensitive scope."""
    masked = memory.sensitivity == "masked" and not can_read_sensitive
    return {
        "id": memory.id,
        "uri": memory.uri,
        "category": memory.category,
        "title": MASKED_TEXT if masked else memory.title,
        "abstract": MASKED_TEXT if masked else memory.abstract,
        "content": MASKED_TEXT if masked else memory.content,
        "confidence": memory.confidence,
        "sensitivity": memory.sensitivity,
        "priority": memory.priority,
        "expiresAt": isoformat(memory.expires_at),
        "version": memory.version,
        "source": json.loads(memory.source_json or "{}"),
        "observedAt": isoformat(memory.observed_at),
        "createdAt": isoformat(memory.created_at),
        "updatedAt": isoformat(memory.updated_at),
        "supersededBy": memory.superseded_by,
        "ownerKind": memory.owner_kind,
        "ownerId": memory.owner_id,
        "embeddingModel": memory.embedding_model,
    }


def snapshot(memory: Memory) -> str:
    """The audit trail's before/after image."""
    return json.dumps(
        memory_view(memory, can_read_sensitive=True), ensure_ascii=False, sort_keys=True
    )
