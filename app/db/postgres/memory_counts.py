"""PostgreSQL: the query that reads the memory word index's kept counters, in one round trip
(app/db/shared/memory_counts.py remembers it within a transaction)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.search.plan import Counts, counts_from_rows

# Under the "C" collation, every word with a prefix sorts below prefix + this.
_LAST_CHAR = chr(0x10FFFF)


def query_counts(
    db: Session, partitions: list[str], terms: list[str], prefixes: list[str]
) -> Counts:
    rows = db.execute(
        text(
            "SELECT 0, '', '', coalesce(sum(chunks), 0), coalesce(sum(words), 0) "
            "FROM memory_partitions WHERE partition = ANY(:parts) "
            "UNION ALL SELECT 1, term, '', sum(chunks), 0 FROM memory_terms "
            "WHERE partition = ANY(:parts) AND term = ANY(CAST(:terms AS text[])) GROUP BY term "
            "UNION ALL SELECT 2, q.prefix, t.term, sum(t.chunks), 0 "
            "FROM unnest(CAST(:prefixes AS text[])) AS q(prefix) JOIN memory_terms t "
            "ON t.partition = ANY(:parts) AND t.term >= q.prefix AND t.term < q.prefix || :last "
            "AND starts_with(t.term, q.prefix) GROUP BY q.prefix, t.term"
        ),
        {"parts": partitions, "terms": terms, "prefixes": prefixes, "last": _LAST_CHAR},
    )
    return counts_from_rows(rows, prefixes)
