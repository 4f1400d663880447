"""Ranked archive search (docs/api.md, Archives): BM25 over the session's own statistics fused
with the nearest vectors of the session's archived messages, clause by clause.

The work is bounded whatever the session's size: the candidates are the messages of the query's
most selective terms first, at most ``CANDIDATE_BUDGET`` of them, scored with the document
frequencies Phase 2 stored for the session; the vector side is a KNN of ``VECTOR_POOL`` inside the
time window. A session whose statistics are not stored yet (nothing through Phase 2) is scored
with frequencies counted over all of its candidates, as before they existed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy.orm import Session

from app.archives.read.results import SearchHit
from app.archives.search import repository as repo
from app.archives.search.hits import first_span, message_hit, message_times
from app.archives.search.ranked_scope import QueryVectors, Scope
from app.archives.search.ranked_stats import session_stats
from app.archives.search.ranked_vectors import message_similarity
from app.core.rules.dates import host_time
from app.db.shared.rows import CandidateRow
from app.db.uow import UnitOfWork
from app.search import ranking
from app.search.diversity import mmr_order, mmr_tokens
from app.search.text.query import Query, clauses, parse_query

VECTOR_POOL = 100
CANDIDATE_BUDGET = 1000
FUSIONS = ("calibrated", "rrf")


@dataclass(frozen=True, slots=True)
class _Lexical:
    stats: ranking.SessionStats
    docs: list[ranking.Doc]
    rows: dict[int, CandidateRow]


def _candidates(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    queries: Sequence[Query],
    most: int = CANDIDATE_BUDGET,
) -> _Lexical:
    """The candidate messages of every clause's terms, most selective terms first."""
    literals = list(dict.fromkeys(x for q in queries for x in [*q.literals, *q.phrases]))
    dates = list(dict.fromkeys(t.literal for q in queries for t in q.terms if t.kind == "date"))
    stats = session_stats(db, scope, [*literals, *dates])
    frequencies = stats.frequencies
    budget = None if frequencies is None else most  # counted frequencies need every candidate
    if frequencies is not None:
        # A Chinese word of three characters or more comes first: the index answers it, and it is
        # rarer than any of its character pairs (which, below the index, cost a scan each).
        words = [
            w
            for q in queries
            for w in q.cjk_words
            if len(w) >= uow.storage.text.min_indexed_term_chars()
        ]
        literals = [*dict.fromkeys(words), *sorted(literals, key=lambda t: frequencies.get(t, 0))]
    # Counted frequencies are the whole session's: then the window is applied to the hits instead.
    window = scope.window_ms() if budget else (None, None)
    rows = uow.storage.text.message_candidates(
        db, scope.session.id, literals, dates, scope.only, window, budget
    )
    docs = [ranking.Doc(r.row_id, r.text, r.dates) for r in rows]
    if frequencies is None:
        counted = ranking.counted_frequencies(docs, literals)
        stats = replace(stats, speakers=ranking.speaker_words(literals, counted))
    return _Lexical(stats, docs, {r.row_id: r for r in rows})


@dataclass(frozen=True, slots=True)
class ClauseEvidence:
    """What one clause found: BM25 by candidate, the blended cosine of the messages nearest its
    vector (empty without one), and the BM25 of a message answering the whole clause."""

    lexical: dict[int, float]
    similarity: dict[int, float]
    ideal: float


def _fused(query: Query, lexical: _Lexical, found: ClauseEvidence, fusion: str) -> dict[int, float]:
    scores, similarity = found.lexical, found.similarity
    if not similarity:
        return scores
    if fusion == "rrf":
        return ranking.reciprocal_rank_fusion([ranking.ranked(scores), ranking.ranked(similarity)])
    days = {t.literal for t in query.terms if t.kind == "date"}
    date_led = any(day in doc.dates for doc in lexical.docs if doc.row_id in scores for day in days)
    weight = ranking.dense_weight(ranking.coverage(scores, found.ideal), date_led)
    return ranking.calibrated_fusion(scores, similarity, found.ideal, weight)


@dataclass(frozen=True, slots=True)
class Ranking:
    """A ranked search before its hits are read: the fused score of every message found, each
    clause's evidence, the lexical candidates' rows and the query's literals."""

    fused: dict[int, float]
    clauses: list[ClauseEvidence]
    candidates: dict[int, CandidateRow]
    literals: list[str]


@dataclass(frozen=True, slots=True)
class LexicalEvidence:
    """The word side of a ranked search: each clause's query, BM25 by candidate and ideal score,
    and the candidates read."""

    queries: list[Query]
    lexical: _Lexical
    scores: list[dict[int, float]]
    ideals: list[float]


def lexical_evidence(
    db: Session, uow: UnitOfWork, scope: Scope, raw: str, candidates: int = CANDIDATE_BUDGET
) -> LexicalEvidence:
    """Every clause scored lexically: at most ``candidates`` messages, those of the rarest
    terms first."""
    queries = [parse_query(p) for p in clauses(raw)]
    lexical = _candidates(db, uow, scope, queries, candidates)
    return LexicalEvidence(
        queries,
        lexical,
        [ranking.bm25(q, lexical.docs, lexical.stats) for q in queries],
        [ranking.ideal_score(q, lexical.stats) for q in queries],
    )


def vector_evidence(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    raw: str,
    vectors: QueryVectors | None,
    pool: int = VECTOR_POOL,
    rescore: int | None = None,
) -> list[dict[int, float]]:
    """Every clause's similarity of the ``pool`` messages nearest its vector (the clause's own,
    else the query's); empty ones without vectors. Needs only ``scope``'s session and window."""
    parts = clauses(raw)
    if vectors is None:
        return [{} for _ in parts]
    own = len(vectors.clauses) == len(parts) and len(parts) > 1
    clause_vectors = list(vectors.clauses) if own else [vectors.whole] * len(parts)
    return [
        message_similarity(db, uow, scope, v, pool, vectors.model, rescore) for v in clause_vectors
    ]


def fused_ranking(
    words: LexicalEvidence, similarities: Sequence[dict[int, float]], fusion: str
) -> Ranking:
    """The two sides of every clause fused into one ranking."""
    found = [
        ClauseEvidence(scores, similarity, ideal)
        for scores, similarity, ideal in zip(words.scores, similarities, words.ideals, strict=True)
    ]
    scored = [
        _fused(q, words.lexical, f, fusion) for q, f in zip(words.queries, found, strict=True)
    ]
    fused = scored[0] if len(scored) == 1 else ranking.merge_clauses(scored)
    literals = list(dict.fromkeys(x for q in words.queries for x in [*q.literals, *q.phrases]))
    return Ranking(fused, found, words.lexical.rows, literals)


def rank_messages(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    raw: str,
    vectors: QueryVectors | None,
    fusion: str,
    pool: int = VECTOR_POOL,
    candidates: int = CANDIDATE_BUDGET,
    rescore: int | None = None,
) -> Ranking:
    """Both sides of every clause in ``db``'s transaction, fused into one ranking."""
    words = lexical_evidence(db, uow, scope, raw, candidates)
    similarities = vector_evidence(db, uow, scope, raw, vectors, pool, rescore)
    return fused_ranking(words, similarities, fusion)


def search_ranked(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    raw: str,
    limit: int,
    vectors: QueryVectors | None,
    fusion: str,
) -> list[SearchHit]:
    pool = max(VECTOR_POOL, limit * 3)
    found = rank_messages(db, uow, scope, raw, vectors, fusion, pool)
    return _hits(db, scope, found.fused, found.candidates, found.literals, limit)


def _hits(
    db: Session,
    scope: Scope,
    fused: Mapping[int, float],
    candidates: Mapping[int, CandidateRow],
    literals: list[str],
    limit: int,
) -> list[SearchHit]:
    """Up to ``limit + 1`` hits (one more tells the caller the list was cut): the best few in MMR
    order, so that a near-duplicate of a better hit steps back, then the rest in fused order; a
    message whose text repeats a better hit's word for word comes after every distinct one."""
    admitted = admitted_hits(db, scope, fused, candidates, literals, limit)
    head = list(itertools.islice(admitted, min(3 * (limit + 1), ranking.MMR_POOL)))
    hits: list[SearchHit] = []
    repeats: list[SearchHit] = []
    seen: set[str] = set()
    for _, hit, text in itertools.chain(_diversified(head, limit + 1), admitted):
        (repeats if text in seen else hits).append(hit)
        seen.add(text)
        if len(hits) > limit:
            return hits
    return (hits + repeats)[: limit + 1]


def _diversified(head: list[Admitted], count: int) -> list[Admitted]:
    """The first ``count`` hits chosen in MMR order (relevance: the fused score over the best
    one's), then the rest in fused order."""
    best = max((hit.score or 0.0 for _, hit, _ in head), default=0.0)
    relevance = [(hit.score or 0.0) / best if best > 0 else 0.0 for _, hit, _ in head]
    tokens = [mmr_tokens(text) for _, _, text in head]
    picked = [i for i, _ in mmr_order(relevance, tokens, ranking.MMR_LAMBDA, count)]
    rest = sorted(set(range(len(head))) - set(picked))
    return [head[i] for i in [*picked, *rest]]


# A hit with its message's row id and whole search text.
Admitted = tuple[int, SearchHit, str]


def admitted_hits(
    db: Session,
    scope: Scope,
    fused: Mapping[int, float],
    candidates: Mapping[int, CandidateRow],
    literals: list[str],
    limit: int,
) -> Iterator[Admitted]:
    """Each hit inside the scope and its time window, with its text, in fused order; the rows
    not among the candidates are read in batches, with the times of candidates whose search facts
    Phase 2 has not written yet."""
    order = ranking.ranked(fused)
    step = 4 * (limit + 1)
    for start in range(0, len(order), step):
        batch = order[start : start + step]
        outside = [i for i in batch if i not in candidates]  # found by their vectors only
        untimed = [i for i in batch if i in candidates and candidates[i].said_at_ms is None]
        rows = repo.messages_by_ids(db, outside)
        times = message_times(db, outside + untimed)
        for row_id in batch:
            row: Any = rows.get(row_id) or candidates.get(row_id)
            if (
                row is None
                or row.archive_pk not in scope.archives  # None: not archived
                or (scope.only is not None and row.archive_pk != scope.only)
            ):
                continue
            moment = times[row_id] if row_id in times else host_time(row.said_at_ms)
            if not scope.window.admits(moment):
                continue
            text = row.search_text if hasattr(row, "search_text") else row.text
            view = _RowView(row.seq, row.role, text)
            span = first_span(text, literals)
            archive = scope.archives[row.archive_pk]
            yield row_id, message_hit(archive, view, span, round(fused[row_id], 6), moment), text


@dataclass(frozen=True, slots=True)
class _RowView:
    seq: int
    role: str
    search_text: str
