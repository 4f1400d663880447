"""What a memory word search reads from the postings (``postings`` says what they are): pure
functions, no I/O, shared by the SQLite and PostgreSQL storage seams, which differ only in the SQL that
reads the counters, counts phrases exactly and fetches the postings.

A search takes the searched partitions' statistics from the kept counters, then reads a bounded
number of candidates: each query phrase's best postings (of its rarest term, or of its prefix's
commonest words), the chunks that score best on the query's terms summed, and the rows of the
phrases of several words that no single term's postings order. The candidates are then scored
exactly (``postings.score_chunks``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.search.bm25 import fts5_idf
from app.search.phrases import Phrase
from app.search.postings import is_cjk, phrase_keys

# The prefix of an English stem is read through its most common words only (candidates; the
# statistics count all of them).
MAX_EXPANSIONS = 8
# A prefix's or a word phrase's chunks are counted exactly up to this bound (above it, the bound
# itself is used: the sum of the prefix's words' counts, the phrase's rarest word's count).
EXACT_COUNT_LIMIT = 500
# The best postings read per term and partition, at least (the search asks for its pool).
MIN_CANDIDATES = 64
# The postings summed per chunk for the candidates that hold several query terms, about this many
# in all; a whole phrase's rows are looked for among its rarest word's postings up to this many.
SUMMED_POSTINGS = 4000
# The best postings of each query term read for the summed candidates: at least this many.
MIN_SUMMED = 256


@dataclass(frozen=True, slots=True)
class Counts:
    """The counters a search reads: chunks and words of the partitions together, chunks holding
    each term (terms held by none left out), and each prefix's words with their chunks."""

    chunks: int
    words: int
    terms: dict[str, int]
    prefixes: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class WholePhrase:
    """A phrase matched as a whole, and the terms whose postings hold every row holding it (its
    rarest key, or every word of its prefix), and how many postings those terms have."""

    phrase: Phrase
    terms: list[str]
    bound: int


@dataclass(frozen=True, slots=True)
class Statistics:
    """What a search scores with: chunks and average words of the partitions, each phrase's
    chunk count, and the terms whose best postings hold each phrase's candidates."""

    chunks: int
    average: float
    frequencies: list[int]
    sources: list[list[str]]
    # Phrases of several words (not one CJK pair) whose rows the postings cannot order: their rows
    # are found among their bounding terms' postings (or through the backend's phrase index).
    whole_phrases: list[WholePhrase]
    prefix_words: dict[str, list[str]]  # every word of each prefix in the partitions


def counts_from_rows(rows: Iterable[Sequence[Any]], prefixes: list[str]) -> Counts:
    """``Counts`` from the rows of a counters query: (0, '', '', chunks, words) for the partitions,
    (1, term, '', chunks, 0) for each term and (2, prefix, word, chunks, 0) for each prefix's words."""
    chunks = words = 0
    held: dict[str, int] = {}
    found: dict[str, dict[str, int]] = {prefix: {} for prefix in prefixes}
    for kind, key, word, count, total in rows:
        if kind == 0:
            chunks, words = int(count), int(total)
        elif count > 0 and kind == 1:
            held[str(key)] = int(count)
        elif count > 0:
            found[str(key)][str(word)] = int(count)
    return Counts(chunks, words, held, found)


# Counts exactly the chunks holding each (phrase, its bounding terms) in the searched partitions.
ExactCounter = Callable[[list[tuple[Phrase, list[str]]]], list[int]]


def counted_terms(phrases: list[Phrase]) -> tuple[list[str], list[str]]:
    """The terms and the prefixes whose counters a search reads: each phrase's keys and its own
    words (the ideal chunk's rank reads them next), and each prefix."""
    keys = [k for p in phrases for k in phrase_keys(p)]
    words_of = [t for p in phrases for t in (p.tokens[:-1] if p.prefix else p.tokens)]
    prefixes = [p.tokens[-1] for p in phrases if p.prefix]
    return list(dict.fromkeys([*keys, *words_of])), list(dict.fromkeys(prefixes))


def plan_statistics(
    phrases: list[Phrase], counted: Counts, count_exactly: ExactCounter
) -> Statistics:
    """The statistics of a search, and where each phrase's candidates are read from."""
    keys = [phrase_keys(p) for p in phrases]
    frequencies: list[int] = []
    sources: list[list[str]] = []
    bounding: list[list[str]] = []
    for phrase, phrase_terms in zip(phrases, keys, strict=True):
        frequency, source, bound = _phrase_source(
            phrase, phrase_terms, counted.terms, counted.prefixes, counted.chunks
        )
        frequencies.append(frequency)
        sources.append(source if posted_as_one_term(phrase, phrase_terms) else [])
        bounding.append(bound)
    bounds = list(frequencies)  # the bounding terms' postings, at most (before exact counts)
    inexact = [
        i
        for i, (phrase, phrase_terms) in enumerate(zip(phrases, keys, strict=True))
        if 0 < frequencies[i] <= EXACT_COUNT_LIMIT
        and (phrase.prefix or not posted_as_one_term(phrase, phrase_terms))
    ]
    if inexact:
        exact = count_exactly([(phrases[i], bounding[i]) for i in inexact])
        for i, count in zip(inexact, exact, strict=True):
            frequencies[i] = count
    average = counted.words / counted.chunks if counted.chunks else 0.0
    prefix_words = {prefix: list(found) for prefix, found in counted.prefixes.items()}
    whole = [
        WholePhrase(phrases[i], bounding[i], bounds[i])
        for i in _whole_phrases(phrases, keys, frequencies, sources)
    ]
    return Statistics(counted.chunks, average, frequencies, sources, whole, prefix_words)


def posted_as_one_term(phrase: Phrase, keys: list[str]) -> bool:
    """Whether a term's postings are exactly the phrase's rows: one word, or one CJK pair."""
    return len(phrase.tokens) == 1 or (not phrase.prefix and keys == ["".join(phrase.tokens)])


def term_weights(stats: Statistics) -> dict[str, float]:
    """Each phrase's source terms with the phrase's idf (summed where phrases share a term)."""
    weights: dict[str, float] = {}
    for frequency, source in zip(stats.frequencies, stats.sources, strict=True):
        for term in source:
            weights[term] = weights.get(term, 0.0) + fts5_idf(stats.chunks, frequency)
    return weights


def best_limits(stats: Statistics, per_term: int) -> dict[str, int]:
    """How many best postings of each source term to read: ``per_term`` of a single term or of a
    prefix's commonest word, a quarter of that of its others. Where the summed candidates read
    at least as many of a term's best postings, none: those chunks were summed already, and the
    ones left out of the summed best scored lower on the summed postings than every one kept."""
    limits: dict[str, int] = {}
    terms = len(term_weights(stats))
    summed = summed_share(terms) if terms >= 2 else 0
    for source in stats.sources:
        for rank, term in enumerate(source):
            limit = per_term if rank == 0 else max(8, per_term // 4)
            if limit > summed:
                limits[term] = max(limits.get(term, 0), limit)
    return limits


def summed_share(terms: int) -> int:
    """The best postings of each term read for the summed candidates."""
    return max(MIN_SUMMED, SUMMED_POSTINGS // max(terms, 1))


def _whole_phrases(
    phrases: list[Phrase],
    keys: list[list[str]],
    frequencies: list[int],
    sources: list[list[str]],
) -> list[int]:
    """The phrases (their indexes) found in the partitions whose rows no term's postings are."""
    sourced = {t for source in sources for t in source}
    whole = []
    for i, (phrase, phrase_terms) in enumerate(zip(phrases, keys, strict=True)):
        if not frequencies[i] or posted_as_one_term(phrase, phrase_terms):
            continue
        # A CJK word's rows hold each of its pairs: where the query reads every pair's best rows
        # already (a Chinese question's words come with their pairs), the word needs no more.
        if all(is_cjk(t) for t in phrase.tokens) and set(phrase_terms) <= sourced:
            continue
        whole.append(i)
    return whole


def _phrase_source(
    phrase: Phrase,
    keys: list[str],
    counts: dict[str, int],
    expansions: dict[str, dict[str, int]],
    chunks: int,
) -> tuple[int, list[str], list[str]]:
    """A phrase's chunk count (its rarest key's, or its prefix's words' together: an upper bound),
    the terms whose postings hold its candidates (the rarest key, or the prefix's commonest words)
    and the terms whose postings together hold every row holding it (the rarest key, or every word
    of the prefix)."""
    rarest = min(keys, key=lambda k: counts.get(k, 0), default=None)
    count = counts.get(rarest, 0) if rarest is not None else chunks
    if not phrase.prefix:
        by_key = [rarest] if rarest is not None else []
        return count, by_key if count else [], by_key
    words_of_prefix = expansions.get(phrase.tokens[-1], {})
    prefix_count = min(sum(words_of_prefix.values()), chunks)
    if rarest is not None and count <= prefix_count:
        return count, [rarest] if count else [], [rarest]
    if prefix_count == 0:
        return 0, [], list(words_of_prefix)
    common = sorted(words_of_prefix, key=lambda w: (-words_of_prefix[w], w))
    return prefix_count, common[:MAX_EXPANSIONS], list(words_of_prefix)
