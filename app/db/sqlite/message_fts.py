"""SQLite: the message index's text (trigram FTS5): what it holds of a message, its query
literals, and the SQL that finds a session's matching messages in order."""

from __future__ import annotations

MESSAGE_FTS = "message_fts"
# The trigram index costs what the text's distinct trigrams cost, inside the write lock: a long
# base64 text would hold it for long (bench/RESULTS.md, Measurements behind the code). A longer message is indexed by its first 32 KB
# plus a mark; keyword search also looks through the whole text of every marked message of the
# session (instr() in SQL), so nothing is missed; ranked search ranks it by its indexed part.
MAX_INDEXED_CHARS = 32_768
PARTIAL_INDEX_MARK = "\u27e6ce:partially-indexed\u27e7"


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: the term, literally (quotes doubled)."""
    return '"' + term.replace('"', '""') + '"'


# The full-text query that finds every partially indexed message.
MARK_QUERY = fts_phrase(PARTIAL_INDEX_MARK)


def _partially_indexed_holding(
    terms: list[str], params: dict[str, object], archive_filter: str, *, by_id: bool
) -> str:
    """SQL: (id, NULL, seq) of the session's partially indexed messages whose whole text holds
    every ASCII term (instr() in C; callers check every hit again, case folding included, so
    non-ASCII terms are left to them). The marked messages of the session are found first, in a
    subquery SQLite does not flatten, so instr() reads no other session's text: the mark is in
    every long message of every tenant. ``by_id`` (few marked messages in the whole index) reads
    them by id; otherwise the session's index is walked."""
    params["mark"] = MARK_QUERY
    session = f"{'+' if by_id else ''}p.session_pk = :s"
    conditions = [
        f"m.id IN (SELECT p.id FROM messages p WHERE p.id IN (SELECT rowid FROM {MESSAGE_FTS} "
        f"WHERE {MESSAGE_FTS} MATCH :mark) AND {session})"
    ]
    for i, term in enumerate(t for t in terms if t.isascii()):
        params[f"pt{i}"] = term.lower()
        conditions.append(f"instr(lower(m.search_text), :pt{i}) > 0")
    return f"SELECT m.id, NULL, m.seq FROM messages m WHERE {' AND '.join(conditions)} {archive_filter}"


# A query the index matches in fewer rows than this (all sessions counted) reads its messages by
# id and sorts them; a more common one walks the session in order and is stopped at the limit.
# The partially indexed messages are counted the same way, for the second half of the search.
FEW_MATCHES = 1000
COUNT_FEW_MATCHES = (
    f"SELECT (SELECT count(*) FROM (SELECT 1 FROM {MESSAGE_FTS} WHERE {MESSAGE_FTS} MATCH :q "
    f"LIMIT {FEW_MATCHES})), (SELECT count(*) FROM (SELECT 1 FROM {MESSAGE_FTS} "
    f"WHERE {MESSAGE_FTS} MATCH :mark LIMIT {FEW_MATCHES}))"
)


def matching_in_order(
    terms: list[str],
    params: dict[str, object],
    archive_filter: str,
    *,
    by_id: bool = False,
    marked_by_id: bool = False,
) -> str:
    """SQL: (id, NULL, seq) of the session's messages matching ``:q``, or partially indexed and
    holding every term, in sequence order. Two selects, each led by its own full-text lookup:
    joined by OR in one WHERE, the planner walks every row of the session.

    Left to itself the planner still walks the session's index in sequence order, testing each
    row against the lookup's ids: no sort, and a common term's first hits come at once, but a
    rare term walks the whole session. ``by_id`` (for a query with few matches) keeps it off
    that index (``+m.session_pk``): the matching messages are read by id and sorted.
    ``marked_by_id`` does the same for the partially indexed messages."""
    scope = f"{'+' if by_id else ''}m.session_pk = :s {archive_filter}"
    return (
        f"SELECT m.id, NULL, m.seq FROM messages m WHERE m.id IN "
        f"(SELECT rowid FROM {MESSAGE_FTS} WHERE {MESSAGE_FTS} MATCH :q) AND {scope} "
        f"UNION {_partially_indexed_holding(terms, params, archive_filter, by_id=marked_by_id)} "
        "ORDER BY 3"
    )


def indexed_form(text: str) -> str:
    """What the message index holds of a text (see MAX_INDEXED_CHARS), ended by a line break: a
    term of two characters at the very end then still starts a trigram (``short_terms``)."""
    if len(text) > MAX_INDEXED_CHARS:
        text = text[:MAX_INDEXED_CHARS] + "\n" + PARTIAL_INDEX_MARK
    return text + "\n"


def fts_query(terms: list[str], *, any_term: bool) -> str:
    return (" OR " if any_term else " AND ").join(fts_phrase(t) for t in terms)
