"""What Phase 2 adds to archived messages for ranked search (docs/api.md, Archives): the host's
time of each message, the days its text mentions (relative expressions resolved against that
time), vectors of its text and of its passages (app/search/text/passages.py) and the session's BM25
statistics. Vectors are computed in Phase 2, batched and through the embedding cache, never inside
a hook request.

The vector is of the text as stored, speaker label included: who said something is part of what a
question asks ("what did Caroline adopt?"), and without the label the turns that merely address
Caroline by name come nearest. Lexical scoring treats the label apart (``ranking.TermCounter``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from app.archives.search import repository as repo
from app.archives.search.hits import time_of_body
from app.db.models import MessageSearch
from app.db.seams import Storage
from app.search.ranking import SPEAKER_KEY
from app.search.text.date_terms import mentioned_dates
from app.search.text.passages import embedding_order, message_passages, with_their_passages
from app.search.text.query import ENGLISH_STOPWORDS, document_tokens, speaker_label, strip_speaker

EMBED_BATCH = 32
MAX_EMBED_CHARS = 2000  # the local model reads 512 tokens at most; the rest would be cut anyway
MAX_TERM_CHARS = 256

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
    terms: frozenset[str] = frozenset()  # what BM25's document frequencies count
    chars: int = 0  # the length BM25 normalises by (the search text's)
    passages: tuple[str, ...] = ()  # embedded each on its own; none for a one-passage message


@dataclass(frozen=True, slots=True)
class MessageVectors:
    whole: list[float]
    passages: tuple[list[float], ...] = ()


def message_terms(search_text: str, dates: str) -> frozenset[str]:
    """The distinct terms of a message for document frequencies: its tokens without the speaker
    label (the label is no evidence on its own), the days it mentions, and the label's words under
    ``SPEAKER_KEY`` (which words name the session's speakers: ``ranking.speaker_words``); stop
    words are never query terms, so they are not counted."""
    tokens = [t for t in document_tokens(strip_speaker(search_text)) if t not in ENGLISH_STOPWORDS]
    speaker = [SPEAKER_KEY + t for t in document_tokens(speaker_label(search_text))]
    return frozenset(t for t in [*tokens, *dates.split(), *speaker] if len(t) <= MAX_TERM_CHARS)


def facts_of(rows: Sequence[Any]) -> list[SearchFact]:
    """Search facts of stored messages (rows with id, tenant_id, session_pk, search_text, body, created_at)."""
    facts: list[SearchFact] = []
    for row in rows:
        moment = time_of_body(row.body, row.created_at)
        text = row.search_text or ""
        content = strip_speaker(text)
        days = " ".join(mentioned_dates(content, moment.date() if moment else None))
        facts.append(
            SearchFact(
                row.id,
                row.tenant_id,
                row.session_pk,
                int(moment.timestamp() * 1000) if moment else None,
                days,
                text[:MAX_EMBED_CHARS],
                len(document_tokens(content)),
                message_terms(text, days),
                len(text),
                tuple(message_passages(text)),
            )
        )
    return facts


async def embed_facts(
    embed: PassageEmbedder, facts: Sequence[SearchFact]
) -> dict[int, MessageVectors]:
    """Vectors of the facts' texts and passages by message id, in batches; blank texts get none."""
    wanted = [f for f in facts if f.text.strip()]
    texts = [(f.text, f.passages) for f in wanted]
    order = embedding_order(texts)
    vectors: list[list[float]] = []
    for start in range(0, len(order), EMBED_BATCH):
        vectors += await embed(order[start : start + EMBED_BATCH])
    return {
        f.message_id: MessageVectors(whole, passages)
        for f, (whole, passages) in zip(wanted, with_their_passages(texts, vectors), strict=True)
    }


def fact_rows(
    facts: Sequence[SearchFact], vectors: dict[int, MessageVectors], model: str | None
) -> list[MessageSearch]:
    return [
        MessageSearch(
            message_id=f.message_id,
            tenant_id=f.tenant_id,
            session_pk=f.session_pk,
            said_at_ms=f.said_at_ms,
            dates=f.dates,
            embedding_model=model if f.message_id in vectors else None,
            token_count=f.token_count,
            vector_passages=len(vectors[f.message_id].passages) if f.message_id in vectors else 0,
        )
        for f in facts
    ]


def term_counts(documents: Iterable[tuple[frozenset[str], int]]) -> tuple[int, int, dict[str, int]]:
    """(documents, total characters, messages per term) of (terms, characters) pairs."""
    count, chars, terms = 0, 0, Counter[str]()
    for document_terms, length in documents:
        count += 1
        chars += length
        terms.update(document_terms)
    return count, chars, dict(terms)


def write_search_index(
    db: Session,
    storage: Storage,
    facts: Sequence[SearchFact],
    vectors: dict[int, MessageVectors],
    model: str | None,
) -> None:
    """Facts, vectors and the session's statistics of archived messages, in the caller's
    transaction. A re-run for the same messages replaces facts and vectors and counts nothing
    twice; a session whose statistics are missing (facts written before they existed) has them
    built from all its faceted messages first."""
    seen = repo.with_search_facts(db, [f.message_id for f in facts])
    storage.message_vectors.remove_passage_vectors(
        db,
        [(f.message_id, f.session_pk, seen[f.message_id]) for f in facts if seen.get(f.message_id)],
    )
    repo.add_search_facts(db, fact_rows(facts, vectors, model))
    embedded = [(f, vectors[f.message_id]) for f in facts if f.message_id in vectors]
    storage.message_vectors.store_message_vectors(
        db, ((f.message_id, f.session_pk, f.said_at_ms or 0, v.whole) for f, v in embedded)
    )
    storage.message_vectors.store_passage_vectors(
        db,
        (
            (f.message_id, index, f.session_pk, f.said_at_ms or 0, vector)
            for f, v in embedded
            for index, vector in enumerate(v.passages)
        ),
    )
    for session_pk in sorted({f.session_pk for f in facts}):
        mine = [f for f in facts if f.session_pk == session_pk]
        if repo.search_stats(db, session_pk) is None:
            rows = repo.faceted_texts(db, session_pk)
            documents = (
                (message_terms(text or "", dates or ""), len(text or "")) for text, dates in rows
            )
        else:
            documents = ((f.terms, f.chars) for f in mine if f.message_id not in seen)
        count, chars, terms = term_counts(documents)
        repo.add_search_stats(db, mine[0].tenant_id, session_pk, count, chars, terms)
