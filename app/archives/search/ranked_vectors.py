"""The vector side of ranked archive search: the similarity of the messages nearest the query."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from sqlalchemy.orm import Session

from app.archives.search import repository as repo
from app.archives.search.ranked_scope import Scope
from app.db.shared.rows import TextHit
from app.db.uow import UnitOfWork
from app.search import ranking


def message_similarity(
    db: Session,
    uow: UnitOfWork,
    scope: Scope,
    vector: list[float],
    pool: int,
    model: str | None = None,
    rescore: int | None = None,
) -> dict[int, float]:
    """The similarity of the messages nearest the query, by whole vector or by passage
    (``ranking.blended_similarity``). A message's passages may fill several places of the passage
    KNN, so it reads twice the pool. A session with too many passages to search them all has the
    passages of its nearest half pool of messages rescored instead (each read by id from
    SQLite's vector table); the farther half's best passage
    is then bounded by the rescored ones, as a message missing from a KNN is; ``rescore`` rescores
    fewer (recall, which must not keep a prompt waiting).

    With ``model`` given, messages embedded by another model (before a change of model, until
    ``context-engine reembed`` has run) are left to the lexical side: distances between two
    models' vectors mean nothing."""
    session_pk, window = scope.session.id, scope.window_ms()
    hits = uow.storage.message_vectors.nearest_messages(db, session_pk, vector, pool, window)
    nearest = uow.storage.message_vectors.nearest_passages(db, session_pk, vector, 2 * pool, window)
    if model is not None:
        found = [h.row_id for h in itertools.chain(hits, nearest or ())]
        foreign = repo.embedded_by_other_models(db, found, model)
        hits = [h for h in hits if h.row_id not in foreign]
        nearest = None if nearest is None else [h for h in nearest if h.row_id not in foreign]
    whole = _similarities(hits)
    if nearest is None:
        counts = repo.with_search_facts(db, list(whole))
        most = pool // 2 if rescore is None else rescore
        rescored = {h.row_id: counts.get(h.row_id, 0) for h in hits[:most]}
        passages = uow.storage.message_vectors.passage_similarities(db, rescored, vector)
        return ranking.blended_similarity(whole, passages, counts)
    passages = _similarities(nearest)
    unknown = [row_id for row_id in whole if row_id not in passages]
    counts = repo.with_search_facts(db, unknown) if passages and unknown else {}
    return ranking.blended_similarity(whole, passages, counts)


def _similarities(hits: Sequence[TextHit]) -> dict[int, float]:
    return {h.row_id: 1.0 - float(h.score or 0.0) for h in hits}
