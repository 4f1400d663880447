"""SQLite: the candidates of a memory word search and their words (app/search/plan.py
says which). SQLite runs in process: each source of candidates is a statement of its own, the
summed postings are added up in SQLite's loop, and only the best few candidates are checked for
belonging to a current memory.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.db.sqlite.memory_postings import MEMORY_WORDS, expanding
from app.db.sqlite.message_fts import fts_phrase
from app.search import plan
from app.search.bm25 import impact
from app.search.phrases import Phrase
from app.search.plan import Statistics, best_limits, summed_share, term_weights
from app.search.postings import chunk_terms


def candidate_words(
    db: Session, partitions: list[str], stats: Statistics, per_term: int
) -> list[tuple[int, list[str]]]:
    """(chunk id, words) of every candidate, current or not (``current_chunks`` says which are:
    asked of the best few only, it costs a few lookups instead of one per candidate)."""
    weights = term_weights(stats)
    ids = set(_best_postings(db, partitions, best_limits(stats, per_term)))
    ids.update(_best_summed(db, partitions, weights, 2 * per_term))
    ids.update(_rows_with_phrases(db, partitions, stats, weights, 2 * per_term))
    if not ids:
        return []
    sql = f"SELECT chunk_id, tokens FROM {MEMORY_WORDS} WHERE chunk_id IN :ids"
    rows = db.execute(expanding(sql, "ids"), {"ids": sorted(ids)})
    return [(int(i), str(tokens).split(" ")) for i, tokens in rows]


def current_chunks(db: Session, tenant_id: str, chunk_ids: list[int]) -> set[int]:
    """The chunks among these of the tenant's current (not superseded) memories."""
    if not chunk_ids:
        return set()
    sql = (
        "SELECT c.id FROM memory_chunks c CROSS JOIN memories m ON m.id = c.memory_id "
        "WHERE c.id IN :ids AND m.tenant_id = :t AND m.superseded_by IS NULL"
    )
    return {
        int(i) for (i,) in db.execute(expanding(sql, "ids"), {"ids": chunk_ids, "t": tenant_id})
    }


def _term_arms(
    partitions: list[str], limits: dict[str, int], weights: dict[str, float] | None = None
) -> tuple[str, dict[str, object]]:
    """One sub-select a (partition, term): its best ``limits[term]`` postings (chunk id, impact
    times the term's weight), joined by UNION ALL."""
    arms: list[str] = []
    params: dict[str, object] = {}
    for n, (partition, term) in enumerate((p, t) for p in partitions for t in limits):
        params |= {f"p{n}": partition, f"t{n}": term, f"n{n}": limits[term]}
        params[f"w{n}"] = weights[term] if weights is not None else 1.0
        arms.append(
            f"SELECT chunk_id, impact * :w{n} AS score FROM (SELECT chunk_id, impact "
            f"FROM memory_postings WHERE partition = :p{n} AND term = :t{n} "
            f"ORDER BY impact DESC LIMIT :n{n})"
        )
    return " UNION ALL ".join(arms), params


def _best_postings(db: Session, partitions: list[str], limits: dict[str, int]) -> list[int]:
    """The chunks of each term's best postings in each partition."""
    if not limits or not partitions:
        return []
    arms, params = _term_arms(partitions, limits)
    return [int(i) for (i,) in db.execute(text(f"SELECT DISTINCT chunk_id FROM ({arms})"), params)]


def _best_summed(
    db: Session, partitions: list[str], weights: dict[str, float], limit: int
) -> list[int]:
    """The chunks that score best on the query's terms together: each term's best postings (a
    share of ``SUMMED_POSTINGS``: all of a rare term's) summed per chunk by idf × impact, in
    SQLite's own loop. A chunk holding several query words is found here even where it is among
    no single word's best few; where many chunks tie on one word, the ones that also hold the
    others come first."""
    if len(weights) < 2 or not partitions:
        return []  # one term: its own best postings are already its best chunks
    share = summed_share(len(weights))
    arms, params = _term_arms(partitions, dict.fromkeys(weights, share), weights)
    sql = (
        f"SELECT chunk_id FROM ({arms}) GROUP BY chunk_id "
        "ORDER BY sum(score) DESC, chunk_id LIMIT :summed_limit"
    )
    return [int(i) for (i,) in db.execute(text(sql), params | {"summed_limit": limit})]


def _rows_with_phrases(
    db: Session,
    partitions: list[str],
    stats: Statistics,
    weights: dict[str, float],
    limit: int,
) -> list[int]:
    """Up to ``limit`` chunks of the partitions holding any of the whole phrases, found by FTS5's
    phrase query (positions, in C). Where their bounding terms' postings are few, all of them are
    read and the best on the query's other terms come first (a date phrase's rows that also hold
    the query's words); else the first ``limit`` FTS5 gives."""
    phrases = stats.whole_phrases
    if not phrases:
        return []
    params = {"q": " OR ".join(_fts5_phrase(p.phrase) for p in phrases), "parts": partitions}
    sql = (
        f"SELECT f.rowid, w.tokens FROM memory_fts f CROSS JOIN {MEMORY_WORDS} w "
        "ON w.chunk_id = f.rowid WHERE memory_fts MATCH :q AND w.partition IN :parts"
    )
    if sum(p.bound for p in phrases) > plan.SUMMED_POSTINGS:
        rows = db.execute(expanding(f"{sql} LIMIT :n", "parts"), params | {"n": limit})
        return [int(i) for i, _ in rows]
    held = db.execute(expanding(sql, "parts"), params)
    scored = [(-_weighted_impact(tokens, weights, stats.average), int(i)) for i, tokens in held]
    return [i for _, i in sorted(scored)[:limit]]


def _weighted_impact(tokens: str, weights: dict[str, float], average: float) -> float:
    words = tokens.split(" ")
    terms = chunk_terms(words)
    return sum(w * impact(terms[t], len(words), average) for t, w in weights.items() if t in terms)


def _fts5_phrase(phrase: Phrase) -> str:
    return fts_phrase(" ".join(phrase.tokens)) + ("*" if phrase.prefix else "")
