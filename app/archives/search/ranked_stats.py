"""The statistics ranked archive search scores with: the session's stored ones (Phase 2 writes
them), else counted once over the session's text and kept while its archives are unchanged."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from app.archives.search import repository as repo
from app.archives.search.ranked_scope import Scope
from app.search import ranking

STATS_CACHE_SIZE = 256


# (session pk, archive filter, the archives' (id, message count)) -> statistics, for sessions
# without stored statistics. Archived messages never change, so the key changes exactly when the
# statistics do.
_scan_cache: OrderedDict[tuple[Any, ...], ranking.SessionStats] = OrderedDict()


def session_stats(db: Session, scope: Scope, terms: Sequence[str]) -> ranking.SessionStats:
    """The session's stored statistics with the frequencies of ``terms``; else counted once."""
    if scope.only is None and (stored := repo.search_totals(db, scope.session.id)) and stored[0]:
        documents, chars = stored
        labels = [ranking.SPEAKER_KEY + t for t in terms]
        frequencies = repo.term_frequencies(db, scope.session.id, [*terms, *labels])
        speakers = ranking.speaker_words(terms, frequencies)
        return ranking.SessionStats(documents, chars / documents, frequencies, speakers)
    key = (
        scope.session.id,
        scope.only,
        tuple(sorted((a.id, a.message_count) for a in scope.archives.values())),
    )
    cached = _scan_cache.get(key)
    if cached is None:
        count, average = repo.session_text_stats(db, scope.session, scope.only)
        cached = _scan_cache[key] = ranking.SessionStats(count, average)
        while len(_scan_cache) > STATS_CACHE_SIZE:
            _scan_cache.popitem(last=False)
    return cached
