"""Archive recall: the archived turns of a session most relevant to a prompt, for /assemble to put
in front of the model (docs/recall.md, Archive recall).

The order is ranked search's (lexical and vector evidence fused, clause by clause); what is kept is
decided by a calibrated relevance that means the same on every session: the share of the query a
turn's words answer, or how far its vector stands above what the embedding model gives unrelated
texts, whichever says more. A ranking always has a best hit; relevance says whether it is worth
the model's attention, so a prompt about nothing archived recalls nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from sqlalchemy.orm import Session

from app.archives.search import ranked
from app.archives.search import repository as repo
from app.archives.search.hits import CONTEXT_SNIPPET_CHARS
from app.archives.search.matching import snippet
from app.archives.search.ranked import LexicalEvidence, Ranking
from app.archives.search.ranked_scope import QueryVectors, Scope
from app.archives.search.recall_render import RecalledTurn, Turn, shown_key
from app.db.uow import UnitOfWork

# Recall needs a few dozen turns, not a search page's reach: fewer candidates on each side keep
# it inside the time a prompt can wait (bench/archive_recall.py).
RECALL_POOL, RECALL_CANDIDATES, RECALL_RESCORED = 60, 300, 10
# A turn this short ("yes, on Tuesday") is read with the turn it answers.
SHORT_TURN_CHARS = 80
_QUESTION_ENDS = ("?", "？")


@dataclass(frozen=True, slots=True)
class RecallAsk:
    query: str
    vectors: QueryVectors | None
    limit: int
    threshold: float
    similarity_floor: float
    shown: Collection[str] = ()  # shown_key of every message the prompt already holds


@dataclass(frozen=True, slots=True)
class RecallFound:
    turns: list[RecalledTurn]
    considered: int
    below_threshold: int
    already_shown: int


def relevance(found: Ranking, row_id: int, floor: float) -> float:
    """The best clause's evidence for the message, on [0, 1]: its BM25 over the clause's ideal
    score, or its cosine as the share of the way from ``floor`` to 1."""
    best = 0.0
    for clause in found.clauses:
        lexical = clause.lexical.get(row_id, 0.0) / clause.ideal if clause.ideal > 0 else 0.0
        cosine = clause.similarity.get(row_id)
        dense = (cosine - floor) / (1 - floor) if cosine is not None and floor < 1 else 0.0
        best = max(best, min(1.0, lexical), min(1.0, dense))
    return best


def recall_words(db: Session, uow: UnitOfWork, scope: Scope, ask: RecallAsk) -> LexicalEvidence:
    """The word side of recall's ranking (a smaller reach than a search page's)."""
    return ranked.lexical_evidence(db, uow, scope, ask.query, RECALL_CANDIDATES)


def recall_similarities(
    db: Session, uow: UnitOfWork, scope: Scope, ask: RecallAsk
) -> list[dict[int, float]]:
    """The vector side of recall's ranking; it reads only ``scope``'s session."""
    return ranked.vector_evidence(
        db, uow, scope, ask.query, ask.vectors, RECALL_POOL, RECALL_RESCORED
    )


def recalled_turns(
    db: Session,
    scope: Scope,
    ask: RecallAsk,
    words: LexicalEvidence,
    similarities: list[dict[int, float]],
) -> RecallFound:
    """Up to ``ask.limit`` archived turns at or above the threshold that the prompt does not show,
    best first, each with the question it answers or the answer it got when that reads better:
    the turns of the two sides' fused ranking, read in ``db``."""
    found = ranked.fused_ranking(words, similarities, "calibrated")
    shown = set(ask.shown)
    # Relevance needs no row: the turns below the threshold are never read.
    scores = {row_id: relevance(found, row_id, ask.similarity_floor) for row_id in found.fused}
    eligible = {r: f for r, f in found.fused.items() if scores[r] >= ask.threshold}
    chosen: list[tuple[int, RecalledTurn]] = []
    repeated = 0
    for row_id, hit, text in _in_order(db, scope, found, eligible, ask.limit):
        if shown_key(text) in shown or hit.seq is None:
            repeated += 1
            continue
        turn = Turn(hit.seq, hit.role or "", hit.snippet, hit.timestamp)
        chosen.append((hit.seq, RecalledTurn(hit.archive_id, turn, round(scores[row_id], 4))))
        shown.add(shown_key(text))
        if len(chosen) >= ask.limit:
            break
    turns = _with_neighbours(db, scope, chosen, shown)
    return RecallFound(turns, len(scores), len(scores) - len(eligible), repeated)


def _in_order(
    db: Session, scope: Scope, found: Ranking, eligible: dict[int, float], limit: int
) -> Iterator[ranked.Admitted]:
    """The eligible hits in fused order, at most a few times ``limit`` of them read."""
    budget = 4 * (limit + 1)
    hits = ranked.admitted_hits(db, scope, eligible, found.candidates, found.literals, limit)
    for count, item in enumerate(hits):
        if count >= budget:
            return
        yield item


def _with_neighbours(
    db: Session, scope: Scope, chosen: list[tuple[int, RecalledTurn]], shown: set[str]
) -> list[RecalledTurn]:
    """Each turn with the turn after it when it asks a question, or the one before it when it is
    too short to read alone; a neighbour the prompt shows or that is recalled itself is left out."""
    if not chosen:
        return []
    around = repo.messages_around(db, scope.session, [seq for seq, _ in chosen], 1)
    taken = {seq for seq, _ in chosen}
    out: list[RecalledTurn] = []
    for seq, recalled in chosen:
        text = recalled.turn.text.rstrip()
        step = 1 if text.endswith(_QUESTION_ENDS) else -1 if len(text) < SHORT_TURN_CHARS else 0
        row = around.get(seq + step) if step else None
        if row is None or row.seq in taken or row.archive_pk != _archive_pk(around.get(seq)):
            out.append(recalled)
            continue
        key = shown_key(row.search_text)
        if key in shown:
            out.append(recalled)
            continue
        moment = recalled.turn.said_at
        near = Turn(
            row.seq, row.role, snippet(row.search_text, (0, 0), CONTEXT_SNIPPET_CHARS), moment
        )
        out.append(RecalledTurn(recalled.archive_id, recalled.turn, recalled.relevance, near))
    return out


def _archive_pk(row: object) -> int | None:
    return getattr(row, "archive_pk", None)
