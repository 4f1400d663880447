"""Ranking maths of archive search: BM25 over one session's statistics, and the fusion of the
lexical and the vector ranking. Pure: the dialect supplies candidates and distances.

BM25 here is computed from the session's own numbers (its message count, its average length and
the document frequency of each term among its own messages), never from an index shared with
other sessions or tenants: one session's ranking cannot change with anyone else's data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.core.query import CJK_CHARS, Query, normalise, strip_speaker

K1 = 1.2
B = 0.75
RRF_K = 60
DENSE_WEIGHT = 0.5
PHRASE_WEIGHT = 2.0
_CJK_START = re.compile(f"[{CJK_CHARS}]")


@dataclass(frozen=True, slots=True)
class SessionStats:
    documents: int
    average_chars: float


@dataclass(frozen=True, slots=True)
class Doc:
    row_id: int
    text: str
    dates: str = ""


class TermCounter:
    """Counts a query's literals in a text in one pass: words from a word start (``visit`` counts in
    ``visited``, not in ``revisit``), CJK pairs and quoted phrases anywhere, overlaps included."""

    def __init__(self, query: Query) -> None:
        self.weights: dict[str, float] = {}
        words: list[str] = []
        anywhere: list[str] = []
        for term in query.terms:
            if term.kind == "date":
                continue
            self.weights.setdefault(term.literal, term.weight)
            (anywhere if _CJK_START.match(term.literal) else words).append(term.literal)
        for phrase in query.phrases:
            self.weights[phrase] = PHRASE_WEIGHT
            anywhere.append(phrase)
        self.dates = {t.literal: t.weight for t in query.terms if t.kind == "date"}
        self._words = _lookahead(words, word_start=True)
        self._anywhere = _lookahead(anywhere, word_start=False)

    def count(self, doc: Doc) -> dict[str, int]:
        text = normalise(strip_speaker(doc.text))
        found: dict[str, int] = {}
        for pattern in (self._words, self._anywhere):
            if pattern is not None:
                for match in pattern.finditer(text):
                    found[match.group(1)] = found.get(match.group(1), 0) + 1
        for day in self.dates:
            if day in doc.dates:
                found[day] = 1
        return found

    def weight(self, literal: str) -> float:
        return self.weights.get(literal) or self.dates.get(literal, 1.0)


def _lookahead(literals: list[str], *, word_start: bool) -> re.Pattern[str] | None:
    if not literals:
        return None
    alternatives = "|".join(re.escape(t) for t in sorted(set(literals), key=len, reverse=True))
    return re.compile(("(?<!\\w)" if word_start else "") + f"(?=({alternatives}))")


def bm25(query: Query, docs: Sequence[Doc], stats: SessionStats) -> dict[int, float]:
    """BM25 of every candidate; the candidates must be all of the session's messages that hold any
    term, so that document frequencies are the session's own."""
    counter = TermCounter(query)
    counts = [counter.count(doc) for doc in docs]
    frequency: dict[str, int] = {}
    for found in counts:
        for literal in found:
            frequency[literal] = frequency.get(literal, 0) + 1
    n = max(stats.documents, len(docs), 1)
    average = max(stats.average_chars, 1.0)
    idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}
    scores: dict[int, float] = {}
    for doc, found in zip(docs, counts, strict=True):
        if not found:
            continue
        norm = K1 * (1 - B + B * len(doc.text) / average)
        scores[doc.row_id] = sum(
            counter.weight(t) * idf[t] * tf * (K1 + 1) / (tf + norm) for t, tf in found.items()
        )
    return scores


def ideal_score(query: Query, stats: SessionStats) -> float:
    """The BM25 of a message of average length that holds every term once, each term as rare as a
    term can be: dividing by it turns a score into the share of the query a message answers."""
    n = max(stats.documents, 1)
    rarest = math.log(1 + (n - 1 + 0.5) / 1.5)
    counter = TermCounter(query)
    return sum(counter.weight(t) for t in {**counter.weights, **counter.dates}) * rarest


def ranked(scores: dict[int, float]) -> list[int]:
    """Ids best first; ties go to the lower id (the earlier message)."""
    return sorted(scores, key=lambda i: (-scores[i], i))


def reciprocal_rank_fusion(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Sum of 1 / (k + rank) over the rankings an id appears in."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for position, row_id in enumerate(ranking, start=1):
            fused[row_id] = fused.get(row_id, 0.0) + 1.0 / (k + position)
    return fused


def calibrated_fusion(lexical: dict[int, float], similarity: dict[int, float], ideal: float,
                      dense_weight: float = DENSE_WEIGHT) -> dict[int, float]:
    """Both sides on [0, 1] before a weighted sum: BM25 divided by ``ideal_score`` (a message that
    matches one word of a four-word question scores about a quarter, not 1 as the best of a poor
    lot would),
    cosine similarity min-max scaled over the nearest neighbours (the local model's similarities
    crowd into a narrow band, so raw cosines would say little). A missing side counts 0."""
    best = max(ideal, max(lexical.values(), default=0.0))
    low, high = min(similarity.values(), default=0.0), max(similarity.values(), default=0.0)
    spread = high - low
    fused: dict[int, float] = {}
    for row_id in set(lexical) | set(similarity):
        text = lexical.get(row_id, 0.0) / best if best > 0 else 0.0
        dense = ((similarity[row_id] - low) / spread if spread > 0 else 1.0) if row_id in similarity else 0.0
        fused[row_id] = (1 - dense_weight) * text + dense_weight * dense
    return fused
