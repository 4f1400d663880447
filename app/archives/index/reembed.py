"""Re-embed archived messages whose vectors are not the current model's (docs/recall.md,
Embeddings): after a change of embedding model, ranked archive search compares the query only with
messages embedded by the same model, and this gives the others new vectors, passages included.
Messages that Phase 2 could not embed (no embedder configured then, or it failed) get theirs too.

The work is Phase 2's own step, run again for the stale messages: search facts, whole and passage
vectors written by ``write_search_index`` (a re-run replaces them and counts nothing twice in the
session's statistics). Each batch is embedded outside any transaction and written in its own, so
an interrupted run keeps what it did and the next one goes on with what is still stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.archives.index.search_index import (
    MessageVectors,
    PassageEmbedder,
    SearchFact,
    embed_facts,
    facts_of,
    write_search_index,
)
from app.archives.search import repository as repo
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.providers.protocols import ProviderError

BATCH = 64

# (messages done so far, messages that were stale when the run started)
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class ReembedOutcome:
    done: int
    failed: bool  # the embedder failed: the run stopped with messages still stale


def count_stale_messages(uow: UnitOfWork, model: str) -> int:
    """How many archived messages are not embedded by ``model``."""
    with uow.read() as db:
        return repo.count_stale_embedded(db, model)


async def reembed_stale_messages(
    uow: UnitOfWork,
    embed: PassageEmbedder,
    model: str,
    progress: Progress | None = None,
    batch: int = BATCH,
) -> ReembedOutcome:
    """Give every stale archived message vectors of ``model``, a batch at a time."""
    total = await to_thread(count_stale_messages, uow, model)
    done, after = 0, 0
    while True:
        facts, last_id = await to_thread(_stale_facts, uow, model, after, batch)
        if last_id is None:
            return ReembedOutcome(done, failed=False)
        try:
            vectors = await embed_facts(embed, facts)
        except ProviderError:
            return ReembedOutcome(done, failed=True)
        await to_thread(_store, uow, facts, vectors, model)
        done += len(facts)
        after = last_id
        if progress is not None:
            progress(done, max(total, done))


def _stale_facts(
    uow: UnitOfWork, model: str, after: int, limit: int
) -> tuple[list[SearchFact], int | None]:
    """The next page's search facts and the last message id read (None: nothing is left)."""
    with uow.read() as db:
        rows = repo.stale_embedded_page(db, model, after, limit)
        return facts_of(rows), (rows[-1].id if rows else None)


def _store(
    uow: UnitOfWork, facts: list[SearchFact], vectors: dict[int, MessageVectors], model: str
) -> None:
    with uow.write() as db:
        # A session deleted meanwhile took its messages and their facts with it.
        present = repo.with_search_facts(db, [f.message_id for f in facts])
        kept = [f for f in facts if f.message_id in present]
        write_search_index(db, uow.storage, kept, vectors, model)
