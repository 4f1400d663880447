"""Ranking maths of archive search: BM25 over one session's statistics, and the fusion of the
lexical and the vector ranking. Pure: the storage layer supplies candidates, statistics and distances.

BM25 here is computed from the session's own numbers (its message count, its average length and
the document frequency of each term among its own messages, stored by Phase 2 or counted among
the candidates), never from an index shared with other sessions or tenants: one session's ranking
cannot change with anyone else's data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from app.search.text.literals import count_literals
from app.search.text.passages import PASSAGE_WEIGHT
from app.search.text.query import (
    CJK_CHARS,
    Query,
    document_tokens,
    normalise,
    speaker_label,
    strip_speaker,
)

K1 = 1.2
B = 0.75
RRF_K = 60
PHRASE_WEIGHT = 2.0
# Calibrated fusion, chosen on the tuning half of bench/conversations.py (bench/RESULTS.md): the
# vector side weighs 1 - coverage / COVERAGE_FOR_TEXT_LEAD of the best lexical match, within
# [MIN_DENSE_WEIGHT, MAX_DENSE_WEIGHT]; a query whose date matched a message's days leans on dates.
COVERAGE_FOR_TEXT_LEAD = 0.5
MIN_DENSE_WEIGHT, MAX_DENSE_WEIGHT, DATE_DENSE_WEIGHT = 0.2, 0.8, 0.1
# The best few hits are put in MMR order (app/search/diversity.py), as memory search's are and with
# the same lambda (0.6 and 0.7 did equally on the tuning half, 0.8 worse).
MMR_LAMBDA, MMR_POOL = 0.7, 60
# The key under which a session's statistics count the messages that carry a word in their
# speaker label ("Melanie: ..."): app/archives/index/search_index.py. No token of a text holds a colon.
SPEAKER_KEY = "speaker:"
_CJK_START = re.compile(f"[{CJK_CHARS}]")


@dataclass(frozen=True, slots=True)
class SessionStats:
    documents: int
    average_chars: float
    # Messages holding each term, from the session's stored statistics; a term missing here (a
    # phrase, a compound) is counted among the candidates, which then must hold all its messages.
    frequencies: Mapping[str, int] | None = None
    # The query's words that name one of the session's speakers (``speaker_words``).
    speakers: frozenset[str] = frozenset()


# A tuple: a ranked search makes one per candidate (up to a thousand), and a tuple is cheaper to
# build than a frozen dataclass (bench/RESULTS.md, Measurements behind the code).
class Doc(NamedTuple):
    row_id: int
    text: str
    dates: str = ""
    # ``folded(text)``, when the caller keeps it for a text it scores again and again.
    folded: str | None = None


def folded(text: str) -> str:
    """The text as literals are counted in it: its speaker label stripped, normalised."""
    return normalise(strip_speaker(text))


def speaker_words(literals: Iterable[str], frequencies: Mapping[str, int]) -> frozenset[str]:
    """The literals that name one of the session's speakers: more of its messages carry them in
    their speaker label than in their text. Such a word is no evidence for the words' side of a
    search: the person's own turns carry it as their label and others address the person by it,
    so counting it would favour the turns that mention someone over those the person said. Who said
    a message is in its vector (the label is embedded with the text)."""
    return frozenset(
        t for t in literals if frequencies.get(SPEAKER_KEY + t, 0) >= max(1, frequencies.get(t, 0))
    )


def counted_frequencies(docs: Sequence[Doc], literals: Sequence[str]) -> dict[str, int]:
    """``speaker_words``' frequencies counted among candidates that hold every message with a
    literal (a session without stored statistics, or one archive): the messages carrying each
    literal in their label (under ``SPEAKER_KEY``) and, for the literals some label carries, in
    their text."""
    labels: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for doc in docs:
        label = speaker_label(doc.text)
        if label:
            if label not in labels:
                labels[label] = {SPEAKER_KEY + t for t in document_tokens(label)}
            for key in labels[label]:
                counts[key] = counts.get(key, 0) + 1
    named = [t for t in literals if counts.get(SPEAKER_KEY + t)]
    if named:
        words = [t for t in named if not _CJK_START.match(t)]
        anywhere = [t for t in named if _CJK_START.match(t)]
        for doc in docs:
            text = folded(doc.text) if doc.folded is None else doc.folded
            found = {*count_literals(text, words, word_start=True)}
            found.update(count_literals(text, anywhere, word_start=False))
            for literal in found:
                counts[literal] = counts.get(literal, 0) + 1
    return counts


class TermCounter:
    """Counts a query's literals in a text in one pass: words from a word start (``visit`` counts in
    ``visited``, not in ``revisit``), CJK pairs and quoted phrases anywhere, overlaps included.

    The speaker label ("Caroline: ...") never makes a match on its own, so a name that starts half
    the turns cannot rank small talk; a turn that matches otherwise also counts the words of its
    label. A word naming one of the session's speakers (``speakers``) is not counted at all, unless
    the query holds nothing else to look for."""

    def __init__(self, query: Query, speakers: frozenset[str] = frozenset()) -> None:
        self.weights: dict[str, float] = {}
        words: list[str] = []
        anywhere: list[str] = []
        others = query.phrases or [t for t in query.terms if t.literal not in speakers]
        skipped = speakers if others else frozenset()
        for term in query.terms:
            if term.kind == "date" or term.literal in skipped:
                continue
            self.weights.setdefault(term.literal, term.weight)
            (anywhere if _CJK_START.match(term.literal) else words).append(term.literal)
        for phrase in query.phrases:
            self.weights[phrase] = PHRASE_WEIGHT
            anywhere.append(phrase)
        self.dates = {t.literal: t.weight for t in query.terms if t.kind == "date"}
        self._words = list(dict.fromkeys(words))
        self._anywhere = list(dict.fromkeys(anywhere))

    def count(self, doc: Doc) -> dict[str, int]:
        content = strip_speaker(doc.text)
        found = self._count(normalise(content) if doc.folded is None else doc.folded)
        for day in self.dates:
            if day in doc.dates:
                found[day] = 1
        if found and len(content) < len(doc.text) and self._words:
            label = normalise(doc.text[: len(doc.text) - len(content)])
            for literal, count in count_literals(label, self._words, word_start=True).items():
                found[literal] = found.get(literal, 0) + count
        return found

    def _count(self, text: str) -> dict[str, int]:
        found = count_literals(text, self._words, word_start=True) if self._words else {}
        if self._anywhere:
            for literal, count in count_literals(text, self._anywhere, word_start=False).items():
                found[literal] = found.get(literal, 0) + count
        return found

    def weight(self, literal: str) -> float:
        return self.weights.get(literal) or self.dates.get(literal, 1.0)


def bm25(query: Query, docs: Sequence[Doc], stats: SessionStats) -> dict[int, float]:
    """BM25 of every candidate that holds a term. A term's document frequency comes from the
    session's statistics when they know it, else from the candidates (which must then be all of the
    session's messages holding it)."""
    counter = TermCounter(query, stats.speakers)
    counts = [counter.count(doc) for doc in docs]
    counted: dict[str, int] = {}
    for found in counts:
        for literal in found:
            counted[literal] = counted.get(literal, 0) + 1
    stored = stats.frequencies or {}
    n = max(stats.documents, len(docs), 1)
    average = max(stats.average_chars, 1.0)
    idf = {t: _idf(n, max(stored.get(t, 0), df)) for t, df in counted.items()}
    scores: dict[int, float] = {}
    for doc, found in zip(docs, counts, strict=True):
        if not found:
            continue
        norm = K1 * (1 - B + B * len(doc.text) / average)
        scores[doc.row_id] = sum(
            counter.weight(t) * idf[t] * tf * (K1 + 1) / (tf + norm) for t, tf in found.items()
        )
    return scores


def _idf(documents: int, frequency: int) -> float:
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def ideal_score(query: Query, stats: SessionStats) -> float:
    """The BM25 of a message of average length that holds every term once, each term as rare as a
    term can be: dividing by it turns a score into the share of the query a message answers."""
    n = max(stats.documents, 1)
    counter = TermCounter(query, stats.speakers)
    return sum(counter.weight(t) for t in {**counter.weights, **counter.dates}) * _idf(n, 1)


def ranked(scores: Mapping[int, float]) -> list[int]:
    """Ids best first; ties go to the lower id (the earlier message)."""
    return sorted(scores, key=lambda i: (-scores[i], i))


def reciprocal_rank_fusion(rankings: Iterable[Sequence[int]], k: int = RRF_K) -> dict[int, float]:
    """Sum of 1 / (k + rank) over the rankings an id appears in."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for position, row_id in enumerate(ranking, start=1):
            fused[row_id] = fused.get(row_id, 0.0) + 1.0 / (k + position)
    return fused


def dense_weight(coverage: float, date_led: bool) -> float:
    """How much the vector side counts for this query. The embedding model knows nothing of
    calendar days, so a query whose date matched a message's days leans on the date facts. Else the
    better the best lexical match covers the query (BM25 over ``ideal_score``), the more the words
    count: a paraphrase, whose words match only incidental turns, is left to the vectors."""
    if date_led:
        return DATE_DENSE_WEIGHT
    return min(MAX_DENSE_WEIGHT, max(MIN_DENSE_WEIGHT, 1 - coverage / COVERAGE_FOR_TEXT_LEAD))


def calibrated_fusion(
    lexical: Mapping[int, float], similarity: Mapping[int, float], ideal: float, weight: float
) -> dict[int, float]:
    """Both sides on [0, 1] before a weighted sum (``weight`` on the vector side): BM25 divided by
    ``ideal_score`` (a message that matches one word of a four-word question scores about a quarter,
    not 1 as the best of a poor lot would), cosine similarity min-max scaled over the nearest
    neighbours (the local model's similarities crowd into a narrow band, so raw cosines would say
    little). A missing side counts 0."""
    best = max(ideal, max(lexical.values(), default=0.0))
    low, high = min(similarity.values(), default=0.0), max(similarity.values(), default=0.0)
    spread = high - low
    fused: dict[int, float] = {}
    for row_id in set(lexical) | set(similarity):
        text = lexical.get(row_id, 0.0) / best if best > 0 else 0.0
        dense = (
            ((similarity[row_id] - low) / spread if spread > 0 else 1.0)
            if row_id in similarity
            else 0.0
        )
        fused[row_id] = (1 - weight) * text + weight * dense
    return fused


def blended_similarity(
    whole: Mapping[int, float], passages: Mapping[int, float], passage_counts: Mapping[int, int]
) -> dict[int, float]:
    """Each message's similarity from the nearest whole messages and the nearest passages (each
    message's best; app/search/text/passages.py): ``PASSAGE_WEIGHT`` on the passage. A message of one
    passage (none stored: ``passage_counts`` 0 or missing) is its own best passage. Each list is a
    KNN's top, so a message may be missing from one: its similarity there is at most the list's
    lowest, and counts as the smaller of that and its other side. Without any passages (nothing
    embedded since they exist), the whole similarities as they are."""
    if not passages:
        return dict(whole)
    whole_floor = min(whole.values(), default=0.0)
    passage_floor = min(passages.values())
    blended: dict[int, float] = {}
    for row_id in whole.keys() | passages.keys():
        passage = passages.get(row_id)
        if row_id not in whole:
            own = min(passage_floor if passage is None else passage, whole_floor)
        else:
            own = whole[row_id]
        if passage is None:
            passage = min(own, passage_floor) if passage_counts.get(row_id) else own
        blended[row_id] = (1 - PASSAGE_WEIGHT) * own + PASSAGE_WEIGHT * passage
    return blended


def coverage(lexical: Mapping[int, float], ideal: float) -> float:
    """The share of the query the best lexical match answers (0 when nothing matched)."""
    return max(lexical.values(), default=0.0) / ideal if ideal > 0 else 0.0


def merge_clauses(parts: Sequence[Mapping[int, float]]) -> dict[int, float]:
    """One ranking from the rankings of a query's clauses: each clause's scores over its best, a
    message keeping its best clause, so every clause's best answer is near the top."""
    merged: dict[int, float] = {}
    for part in parts:
        top = max(part.values(), default=0.0)
        for row_id, score in part.items():
            share = score / top if top > 0 else 0.0
            merged[row_id] = max(merged.get(row_id, 0.0), share)
    return merged
