"""What Phase 2 adds to archived messages for ranked search (issue 10): the host's time of each
message, the days its text mentions (relative expressions resolved against that time) and a vector
of its text, the speaker label left out. Vectors are computed in Phase 2, batched and through the
embedding cache, never inside a hook request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from app.archives.hits import time_of_body
from app.core.date_terms import mentioned_dates
from app.core.query import document_tokens, strip_speaker
from app.db.models import MessageSearch

EMBED_BATCH = 32
MAX_EMBED_CHARS = 2000  # the local model reads 512 tokens at most; the rest would be cut anyway

PassageEmbedder = Callable[[list[str]], Awaitable[list[list[float]]]]


@dataclass(frozen=True, slots=True)
class SearchFact:
    message_id: int
    tenant_id: str
    session_pk: int
    said_at_ms: int | None
    dates: str
    text: str  # what is embedded
    token_count: int


def facts_of(rows: Sequence[Any]) -> list[SearchFact]:
    """Search facts of stored messages (rows with id, tenant_id, session_pk, search_text, body, created_at)."""
    facts: list[SearchFact] = []
    for row in rows:
        moment = time_of_body(row.body, row.created_at)
        text = strip_speaker(row.search_text or "")
        days = mentioned_dates(text, moment.date() if moment else None)
        facts.append(SearchFact(
            row.id, row.tenant_id, row.session_pk, int(moment.timestamp() * 1000) if moment else None,
            " ".join(days), text[:MAX_EMBED_CHARS], len(document_tokens(text)),
        ))
    return facts


async def embed_facts(embed: PassageEmbedder, facts: Sequence[SearchFact]) -> dict[int, list[float]]:
    """Vectors of the facts' texts by message id, in batches; blank texts get none."""
    wanted = [f for f in facts if f.text.strip()]
    vectors: dict[int, list[float]] = {}
    for start in range(0, len(wanted), EMBED_BATCH):
        batch = wanted[start : start + EMBED_BATCH]
        for fact, vector in zip(batch, await embed([f.text for f in batch]), strict=True):
            vectors[fact.message_id] = vector
    return vectors


def fact_rows(facts: Sequence[SearchFact], vectors: dict[int, list[float]], model: str | None) -> list[MessageSearch]:
    return [
        MessageSearch(
            message_id=f.message_id, tenant_id=f.tenant_id, session_pk=f.session_pk, said_at_ms=f.said_at_ms,
            dates=f.dates, embedding_model=model if f.message_id in vectors else None, token_count=f.token_count,
        )
        for f in facts
    ]
