"""PostgreSQL: the SQL of the memory word index's postings and counters
(app/db/dialects/postgres_postings.py says what they are).

Writes keep the counters in the transaction that adds or removes chunks, in (partition, term)
order, so that concurrent writers wait for each other rather than deadlock. Reads take the
searched partitions' statistics from the counters and the best postings of each query phrase's
rarest term from the impact-ordered b-tree: a bounded number of rows whatever the partition holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from app.db.dialects.postgres_memory_counts import forget_counts, read_counts
from app.db.dialects.postgres_postings import (
    is_cjk,
    partition_deltas,
    phrase_keys,
    postings,
    term_deltas,
)
from app.db.dialects.postgres_text import Phrase, tsquery_literal

# The prefix of an English stem is read through its most common words only (candidates; the
# statistics count all of them).
MAX_EXPANSIONS = 8
# A prefix's or a word phrase's chunks are counted exactly up to this bound (above it, the bound
# itself is used: the sum of the prefix's words' counts, the phrase's rarest word's count).
EXACT_COUNT_LIMIT = 500
# The best postings read per term and partition, at least (the search asks for its pool).
MIN_CANDIDATES = 64


@dataclass(frozen=True, slots=True)
class Statistics:
    """What a search scores with: chunks and average words of the partitions, each phrase's
    chunk count, and the terms whose best postings hold each phrase's candidates."""

    chunks: int
    average: float
    frequencies: list[int]
    sources: list[list[str]]
    # Phrases of several words (not one CJK pair) whose rows the postings cannot order: their rows
    # are found among their bounding terms' postings (or through the tsvector index).
    whole_phrases: list[WholePhrase]
    prefix_words: dict[str, list[str]]  # every word of each prefix in the partitions


@dataclass(frozen=True, slots=True)
class WholePhrase:
    """A phrase matched as a whole, and the terms whose postings hold every row holding it (its
    rarest key, or every word of its prefix), and how many postings those terms have."""

    phrase: Phrase
    terms: list[str]
    bound: int


def post_chunks(db: Session | Connection, rows: list[tuple[int, str, list[str]]]) -> None:
    """Add (chunk id, partition, words) to the postings and the counters."""
    if not rows:
        return
    forget_counts(db)
    averages = _change_partitions(db, partition_deltas((p, t, 1) for _, p, t in rows))
    _change_terms(db, term_deltas((p, t, 1) for _, p, t in rows))
    posted = [x for i, p, t in rows for x in postings(p, i, t, averages.get(p, 0.0))]
    db.execute(
        text(
            "INSERT INTO memory_postings(chunk_id, term, partition, frequency, impact) "
            "SELECT * FROM unnest(CAST(:ids AS bigint[]), CAST(:terms AS text[]), "
            "CAST(:parts AS text[]), CAST(:freqs AS int[]), CAST(:impacts AS real[])) "
            "ON CONFLICT (chunk_id, term) DO UPDATE SET partition = EXCLUDED.partition, "
            "frequency = EXCLUDED.frequency, impact = EXCLUDED.impact"
        ),
        {
            "ids": [x.chunk_id for x in posted],
            "terms": [x.term for x in posted],
            "parts": [x.partition for x in posted],
            "freqs": [x.frequency for x in posted],
            "impacts": [x.impact for x in posted],
        },
    )


def unpost_chunks(db: Session, chunk_ids: list[int]) -> None:
    """Remove chunks from the postings and the counters (chunks never posted are ignored)."""
    forget_counts(db)
    rows = db.execute(
        text(
            "SELECT partition, tokens FROM memory_fts WHERE id = ANY(:ids) AND partition IS NOT NULL"
        ),
        {"ids": list(chunk_ids)},
    ).all()
    if rows:
        removed = [(str(p), list(t), -1) for p, t in rows]
        _change_partitions(db, partition_deltas(removed))
        _change_terms(db, term_deltas(removed))
    db.execute(text("DELETE FROM memory_postings WHERE chunk_id = ANY(:ids)"), {"ids": chunk_ids})


def _change_partitions(
    db: Session | Connection, deltas: list[tuple[str, int, int]]
) -> dict[str, float]:
    """Apply the deltas; returns each changed partition's average words per chunk after them."""
    if not deltas:
        return {}
    result = db.execute(
        text(
            "INSERT INTO memory_partitions(partition, chunks, words) SELECT * FROM "
            "unnest(CAST(:parts AS text[]), CAST(:chunks AS bigint[]), CAST(:words AS bigint[])) "
            "ON CONFLICT (partition) DO UPDATE SET chunks = memory_partitions.chunks + EXCLUDED.chunks, "
            "words = memory_partitions.words + EXCLUDED.words RETURNING partition, chunks, words"
        ),
        {
            "parts": [p for p, _, _ in deltas],
            "chunks": [c for _, c, _ in deltas],
            "words": [w for _, _, w in deltas],
        },
    )
    return {str(p): (w / c if c > 0 else 0.0) for p, c, w in result}


def _change_terms(db: Session | Connection, deltas: list[tuple[str, str, int]]) -> None:
    if deltas:
        db.execute(
            text(
                "INSERT INTO memory_terms(partition, term, chunks) SELECT * FROM "
                "unnest(CAST(:parts AS text[]), CAST(:terms AS text[]), CAST(:deltas AS bigint[])) "
                "ON CONFLICT (partition, term) DO UPDATE SET chunks = memory_terms.chunks + EXCLUDED.chunks"
            ),
            {
                "parts": [p for p, _, _ in deltas],
                "terms": [t for _, t, _ in deltas],
                "deltas": [d for _, _, d in deltas],
            },
        )


def read_statistics(db: Session, partitions: list[str], phrases: list[Phrase]) -> Statistics:
    """The statistics of a search, and where each phrase's candidates are read from."""
    keys = [phrase_keys(p) for p in phrases]
    # The phrases' own words are counted too: the ideal chunk's rank reads them next.
    words_of = [t for p in phrases for t in (p.tokens[:-1] if p.prefix else p.tokens)]
    counted = read_counts(
        db,
        partitions,
        list(dict.fromkeys([*(k for ks in keys for k in ks), *words_of])),
        list(dict.fromkeys(p.tokens[-1] for p in phrases if p.prefix)),
    )
    chunks, words = counted.chunks, counted.words
    counts, expansions = counted.terms, counted.prefixes
    frequencies: list[int] = []
    sources: list[list[str]] = []
    bounding: list[list[str]] = []
    for phrase, phrase_terms in zip(phrases, keys, strict=True):
        frequency, source, bound = _phrase_source(phrase, phrase_terms, counts, expansions, chunks)
        frequencies.append(frequency)
        sources.append(source if _posted_as_one_term(phrase, phrase_terms) else [])
        bounding.append(bound)
    bounds = list(frequencies)  # the bounding terms' postings, at most (before exact counts)
    _count_exactly(db, partitions, phrases, keys, frequencies, bounding)
    average = words / chunks if chunks else 0.0
    prefix_words = {prefix: list(found) for prefix, found in expansions.items()}
    whole = [
        WholePhrase(phrases[i], bounding[i], bounds[i])
        for i in _whole_phrases(phrases, keys, frequencies, sources)
    ]
    return Statistics(chunks, average, frequencies, sources, whole, prefix_words)


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
        if not frequencies[i] or _posted_as_one_term(phrase, phrase_terms):
            continue
        # A CJK word's rows hold each of its pairs: where the query reads every pair's best rows
        # already (a Chinese question's words come with their pairs), the word needs no more.
        if all(is_cjk(t) for t in phrase.tokens) and set(phrase_terms) <= sourced:
            continue
        whole.append(i)
    return whole


def _posted_as_one_term(phrase: Phrase, keys: list[str]) -> bool:
    """Whether a term's postings are exactly the phrase's rows: one word, or one CJK pair."""
    return len(phrase.tokens) == 1 or (not phrase.prefix and keys == ["".join(phrase.tokens)])


def _count_exactly(
    db: Session,
    partitions: list[str],
    phrases: list[Phrase],
    keys: list[list[str]],
    frequencies: list[int],
    bounding: list[list[str]],
) -> None:
    """Replace the upper bounds of prefixes and word phrases by their exact chunk counts (as FTS5
    counts them) where the bound is small: the rows of the bounding terms' postings, at most
    ``EXACT_COUNT_LIMIT`` a phrase, are read and matched, whatever other partitions hold."""
    inexact = [
        i
        for i, (phrase, phrase_keys_) in enumerate(zip(phrases, keys, strict=True))
        if 0 < frequencies[i] <= EXACT_COUNT_LIMIT
        and (phrase.prefix or not _posted_as_one_term(phrase, phrase_keys_))
    ]
    if not inexact:
        return
    params: dict[str, object] = {"parts": partitions}
    counts = []
    for n, i in enumerate(inexact):
        params[f"q{n}"] = tsquery_literal([phrases[i]])
        counts.append(f"count(*) FILTER (WHERE f.words @@ CAST(:q{n} AS tsquery))")
    params["terms"] = list(dict.fromkeys(t for i in inexact for t in bounding[i]))
    row = db.execute(
        text(
            f"SELECT {', '.join(counts)} FROM memory_fts f WHERE f.id IN (SELECT x.chunk_id "
            "FROM memory_postings x WHERE x.partition = ANY(:parts) AND x.term = ANY(:terms))"
        ),
        params,
    ).one()
    for i, count in zip(inexact, row, strict=True):
        frequencies[i] = int(count)


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
