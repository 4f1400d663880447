"""PostgreSQL: the candidates of a memory word search and their words, in one statement.

A search scores a bounded set of candidate chunks exactly (docs/architecture.md, PostgreSQL, says
which). Each source of candidates is a sub-select; their union is joined to the chunks'
words and filtered to the tenant's current memories in the same statement, so a search pays one
round trip for its candidates, whatever the number of sources.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.postgres.literals import tsquery_literal
from app.search import plan
from app.search.plan import Statistics, best_limits, summed_share, term_weights

Query = tuple[str, dict[str, object]]


def candidate_words(
    db: Session, tenant_id: str, partitions: list[str], stats: Statistics, per_term: int
) -> list[tuple[int, list[str]]]:
    """(chunk id, words) of every candidate that belongs to a current memory of the tenant."""
    weights = term_weights(stats)
    sources = [
        query
        for query in (
            _rows_with_phrases(stats, weights, 2 * per_term),
            _best_summed(weights, 2 * per_term),
            _best_postings(stats, per_term),
        )
        if query is not None
    ]
    if not sources:
        return []
    params: dict[str, object] = {"parts": partitions, "t": tenant_id}
    for _, values in sources:
        params |= values
    # ARRAY(...) is computed once, before the join: an estimate of how many rows the union
    # gives cannot turn the probes by id into a scan of every chunk.
    union = " UNION ".join(f"({sql})" for sql, _ in sources)
    rows = db.execute(
        text(
            "SELECT f.id, f.tokens FROM memory_fts f JOIN memory_chunks c ON c.id = f.id "
            f"JOIN memories m ON m.id = c.memory_id WHERE f.id = ANY(ARRAY({union})) "
            "AND m.tenant_id = :t AND m.superseded_by IS NULL"
        ),
        params,
    )
    return [(int(chunk_id), list(tokens)) for chunk_id, tokens in rows]


def _best_postings(stats: Statistics, per_term: int) -> Query | None:
    """The best postings of each phrase's source terms in each partition (``best_limits``)."""
    limits = best_limits(stats, per_term)
    if not limits:
        return None
    sql = (
        "SELECT b.chunk_id FROM unnest(CAST(:parts AS text[])) AS p(partition) "
        "CROSS JOIN unnest(CAST(:best_terms AS text[]), CAST(:best_limits AS int[])) AS q(term, n) "
        "CROSS JOIN LATERAL (SELECT x.chunk_id FROM memory_postings x "
        "WHERE x.partition = p.partition AND x.term = q.term ORDER BY x.impact DESC LIMIT q.n) b"
    )
    return sql, {"best_terms": list(limits), "best_limits": list(limits.values())}


def _best_summed(weights: dict[str, float], limit: int) -> Query | None:
    """The chunks that score best on the query's terms together: each term's best postings (a
    share of ``SUMMED_POSTINGS``: all of a rare term's) summed per chunk by idf × impact. A chunk
    holding several query words is found here even where it is among no single word's best few;
    where many chunks tie on one word, the ones that also hold the others come first."""
    if len(weights) < 2:
        return None  # one term: its own best postings are already its best chunks
    share = summed_share(len(weights))
    sql = (
        "SELECT b.chunk_id FROM unnest(CAST(:parts AS text[])) AS p(partition) "
        "CROSS JOIN unnest(CAST(:sum_terms AS text[]), CAST(:sum_weights AS float8[])) "
        "AS q(term, w) CROSS JOIN LATERAL (SELECT x.chunk_id, x.impact FROM memory_postings x "
        "WHERE x.partition = p.partition AND x.term = q.term ORDER BY x.impact DESC "
        "LIMIT :sum_share) b GROUP BY b.chunk_id "
        "ORDER BY sum(q.w * b.impact) DESC, b.chunk_id LIMIT :sum_limit"
    )
    params = {"sum_terms": list(weights), "sum_weights": list(weights.values())}
    return sql, params | {"sum_share": share, "sum_limit": limit}


def _rows_with_phrases(stats: Statistics, weights: dict[str, float], limit: int) -> Query | None:
    """Up to ``limit`` chunks holding any of the whole phrases. Where their bounding terms'
    postings are few, the rows are read among them (the searched partitions' only) and the best
    on the query's other terms come first (a date phrase's rows that also hold the query's words);
    else the tsvector index finds some."""
    phrases = stats.whole_phrases
    if not phrases:
        return None
    params: dict[str, object] = {
        "phrases": tsquery_literal([p.phrase for p in phrases]),
        "phrase_limit": limit,
    }
    if sum(p.bound for p in phrases) > plan.SUMMED_POSTINGS:
        sql = (
            "SELECT id FROM memory_fts WHERE partition = ANY(:parts) "
            "AND words @@ CAST(:phrases AS tsquery) LIMIT :phrase_limit"
        )
        return sql, params
    sql = (
        "SELECT f.id FROM memory_fts f LEFT JOIN LATERAL (SELECT sum(q.w * x.impact) AS s "
        "FROM unnest(CAST(:phrase_other_terms AS text[]), CAST(:phrase_weights AS float8[])) "
        "AS q(term, w) JOIN memory_postings x ON x.chunk_id = f.id AND x.term = q.term) b "
        "ON true WHERE f.id IN (SELECT x.chunk_id FROM memory_postings x "
        "WHERE x.partition = ANY(:parts) AND x.term = ANY(:phrase_terms)) "
        "AND f.words @@ CAST(:phrases AS tsquery) "
        "ORDER BY b.s DESC NULLS LAST, f.id LIMIT :phrase_limit"
    )
    return sql, params | {
        "phrase_terms": list(dict.fromkeys(t for p in phrases for t in p.terms)),
        "phrase_other_terms": list(weights),
        "phrase_weights": list(weights.values()),
    }
