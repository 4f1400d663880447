"""Hybrid search maths: BM25 rank mapping, vector/text merge, temporal decay and MMR.

docs/recall.md, Hybrid search steps 2-7; formulas of docs/peers.md, OpenClaw §2.4. Pure: the repository supplies
the hits and the memory fields, these functions only compute.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from app.search.diversity import mmr_order, mmr_tokens
from app.search.text.passages import PASSAGE_WEIGHT

DEFAULT_VECTOR_WEIGHT = 0.7
DEFAULT_TEXT_WEIGHT = 0.3
DEFAULT_HALF_LIFE_DAYS = 30.0
DEFAULT_MMR_LAMBDA = 0.7
# docs/recall.md, Hybrid search step 5: dated categories decay; the others are evergreen.
DECAYING_CATEGORIES = frozenset({"events", "cases"})
_NON_FINITE_RANK_SCORE = 1 / 1000
_SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One side's hit on a chunk: 1 - cosine distance, or ``bm25_rank_to_score`` of the rank."""

    chunk_id: int | str
    memory_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Explain:
    """The components of a result's score (docs/recall.md, Hybrid search step 7)."""

    vector: float = 0.0
    text: float = 0.0
    decay: float = 1.0
    mmr: float | None = None

    def as_dict(self) -> dict[str, float | None]:
        """The API's ``explain`` object."""
        return {"vector": self.vector, "text": self.text, "decay": self.decay, "mmr": self.mmr}


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    """A memory's search result: its best chunk, its score and how the score was made."""

    # category, observed_at and text (the snippet MMR compares) are filled in by the caller with
    # dataclasses.replace once the memories are loaded.
    memory_id: str
    chunk_id: int | str
    score: float
    explain: Explain
    category: str = ""
    observed_at: datetime | None = None
    text: str = ""


def bm25_rank_to_score(rank: float) -> float:
    """Map an FTS5 ``bm25()`` rank (negative, lower is better) into (0, 1)."""
    # docs/peers.md, OpenClaw §2.4 step 3, current formula.
    if not math.isfinite(rank):
        return _NON_FINITE_RANK_SCORE
    if rank < 0:
        relevance = -rank
        return relevance / (1 + relevance)
    return 1 / (1 + rank)


def vector_score(cosine: float, floor: float) -> float:
    """Cosine similarity as the share of the way from ``floor`` (what the model gives unrelated
    texts) to 1, clamped to [0, 1]. Models differ: the local one rates almost any two sentences
    above 0.7, so a raw cosine says "relevant" of everything and a threshold on it means nothing."""
    if floor >= 1:
        return 0.0
    return min(1.0, max(0.0, (cosine - floor) / (1 - floor)))


def with_best_passage(whole: Mapping[int, float], best: Mapping[int, float]) -> dict[int, float]:
    """Each chunk's similarity from its whole vector's (``whole``) and its best passage's
    (``best``; app/search/text/passages.py), ``PASSAGE_WEIGHT`` on the passage. A chunk without passages
    (one passage, or embedded before they existed) is its own best passage."""
    return {
        chunk: (1 - PASSAGE_WEIGHT) * own + PASSAGE_WEIGHT * best.get(chunk, own)
        for chunk, own in whole.items()
    }


def phrase_idf(documents: int, frequency: int) -> float:
    """FTS5's idf of one phrase (its bm25() floors negative values near zero)."""
    return max(1e-6, math.log((documents - frequency + 0.5) / (frequency + 0.5)))


def text_coverage(rank: float, ideal: float) -> float:
    """An FTS5 ``bm25()`` rank (negative, lower is better) as the share of the query a chunk
    answers: over ``ideal``, the rank of a chunk of average length holding every phrase once (the
    sum of their idfs). A chunk that holds only a common word of the question scores near 0, not
    near 1 as ``bm25_rank_to_score`` has it."""
    if ideal <= 0 or not math.isfinite(rank):
        return 0.0
    return min(1.0, max(0.0, -rank / ideal))


def _best_by_chunk(hits: Iterable[ChunkHit]) -> dict[int | str, ChunkHit]:
    best: dict[int | str, ChunkHit] = {}
    for hit in hits:
        if hit.chunk_id not in best or hit.score > best[hit.chunk_id].score:
            best[hit.chunk_id] = hit
    return best


def merge_hybrid(
    vector_hits: Iterable[ChunkHit],
    text_hits: Iterable[ChunkHit],
    vector_weight: float = DEFAULT_VECTOR_WEIGHT,
    text_weight: float = DEFAULT_TEXT_WEIGHT,
) -> list[ScoredMemory]:
    """Merge both sides by chunk, keep each memory's best chunk, best first."""
    # docs/recall.md, Hybrid search step 4; docs/peers.md, OpenClaw §2.4 step 5 (a missing side counts 0):
    # (vw * vector + tw * text) / (vw + tw) is 0.7 * vector + 0.3 * text with the defaults.
    # A keyword-only search (no embedding) passes vector_weight=0 and gets the text score.
    if vector_weight < 0 or text_weight < 0 or vector_weight + text_weight <= 0:
        raise ValueError("weights must be non-negative and not both zero")
    vectors, texts = _best_by_chunk(vector_hits), _best_by_chunk(text_hits)
    best: dict[str, ScoredMemory] = {}
    for chunk_id in [*vectors, *(c for c in texts if c not in vectors)]:
        hit = vectors.get(chunk_id) or texts[chunk_id]
        vector = vectors[chunk_id].score if chunk_id in vectors else 0.0
        text = texts[chunk_id].score if chunk_id in texts else 0.0
        score = (vector_weight * vector + text_weight * text) / (vector_weight + text_weight)
        current = best.get(hit.memory_id)
        if current is None or score > current.score:
            best[hit.memory_id] = ScoredMemory(
                hit.memory_id, chunk_id, score, Explain(vector=vector, text=text)
            )
    return sorted(best.values(), key=lambda m: (-m.score, m.memory_id))


def best_per_memory(items: Iterable[ScoredMemory]) -> list[ScoredMemory]:
    """Each memory once, with its best score (scores are absolute: comparable across searches of
    the clauses of one query), best first."""
    best: dict[str, ScoredMemory] = {}
    for item in items:
        if item.memory_id not in best or item.score > best[item.memory_id].score:
            best[item.memory_id] = item
    return sorted(best.values(), key=lambda m: (-m.score, m.memory_id))


def temporal_decay(
    score: float, age_days: float, half_life_days: float = DEFAULT_HALF_LIFE_DAYS
) -> float:
    """``score * exp(-ln2 / halfLife * ageDays)``: half the score every ``half_life_days``."""
    # docs/recall.md, Hybrid search step 5; docs/peers.md, OpenClaw §2.4 step 6 (half-life floored, at least 1).
    half_life = max(1, math.floor(half_life_days))
    return score * math.exp(-math.log(2) / half_life * max(0.0, age_days))


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def age_in_days(observed_at: datetime, now: datetime) -> float:
    """Days from ``observed_at`` to ``now`` (naive datetimes are UTC); never negative."""
    return max(0.0, (_as_utc(now) - _as_utc(observed_at)).total_seconds() / _SECONDS_PER_DAY)


def best_then_newest(items: Iterable[ScoredMemory]) -> list[ScoredMemory]:
    """Best first; of equal scores the latest observed first (the likelier to hold now), then by
    id: the same memories come back in the same order on every search."""

    def key(item: ScoredMemory) -> tuple[float, float, str]:
        moment = item.observed_at
        return (-item.score, -_as_utc(moment).timestamp() if moment else math.inf, item.memory_id)

    return sorted(items, key=key)


def apply_decay(
    items: Iterable[ScoredMemory],
    now: datetime,
    *,
    half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
    categories: Collection[str] = DECAYING_CATEGORIES,
) -> list[ScoredMemory]:
    """Decay dated memories by their age at ``now`` and sort best first; others are unchanged."""
    decayed: list[ScoredMemory] = []
    for item in items:
        if item.category not in categories or item.observed_at is None:
            decayed.append(item)
            continue
        factor = temporal_decay(1.0, age_in_days(item.observed_at, now), half_life_days)
        decayed.append(
            replace(item, score=item.score * factor, explain=replace(item.explain, decay=factor))
        )
    return sorted(decayed, key=lambda m: -m.score)


def jaccard(a_tokens: Collection[str], b_tokens: Collection[str]) -> float:
    """|A ∩ B| / |A ∪ B| of two token sets; 0 when both are empty."""
    a = a_tokens if isinstance(a_tokens, frozenset | set) else set(a_tokens)
    b = b_tokens if isinstance(b_tokens, frozenset | set) else set(b_tokens)
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def mmr_rerank(
    items: Sequence[ScoredMemory], lambda_: float = DEFAULT_MMR_LAMBDA, limit: int | None = None
) -> list[ScoredMemory]:
    """Reorder by maximal marginal relevance; each result's ``explain.mmr`` is its MMR value.

    docs/recall.md, Hybrid search step 6; docs/peers.md, OpenClaw §2.4 step 8: argmax λ·rel − (1−λ)·maxSim. The
    reference min-max normalises the scores first, which made sense for raw cosines; scores here
    are calibrated on an absolute [0, 1] scale (``vector_score``, ``text_coverage``), and stretching
    the best of the lot to 1 would let an exact duplicate of it (relevance 1, similarity 1, value
    0.4) outrank any other memory less than 57% as relevant."""
    order = mmr_order(
        [item.score for item in items],
        [mmr_tokens(item.text) for item in items],
        lambda_,
        limit,
    )
    return [replace(items[i], explain=replace(items[i].explain, mmr=value)) for i, value in order]


def threshold_and_limit(
    items: Iterable[ScoredMemory], min_score: float, limit: int
) -> list[ScoredMemory]:
    """Keep results scoring at least ``min_score``, at most ``limit`` of them, in order."""
    # docs/recall.md, Hybrid search step 6: the score threshold and the limit come after MMR.
    return [item for item in items if item.score >= min_score][: max(0, limit)]
