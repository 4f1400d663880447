"""What a copied batch brings with it on the target: the derived text indexes and the vectors of
its rows, written through the target's storage seams in the batch's transaction (so a
batch is all there or not there, and a resumed copy never finds a row without its index).

The text indexes are rebuilt from the rows, as the service builds them: a message's search text
(once its archive is marked indexed), an archive's overview (Phase 2), a memory chunk's index
text (title, chunk and the days it mentions, CJK spaced: ``app.memory.store.writes.index_text``). FTS5 keeps no text to copy
(its tables are contentless), and PostgreSQL's forms differ anyway (trigram rows, word arrays).
The vectors are read from the source's vector tables, with their partition and time (a message's
passage vectors with its search facts, which say how many it has).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from app.db.base import Base
from app.db.models import Memory
from app.db.seams import Storage
from app.db.shared.memory_partitions import memory_partition
from app.db.shared.passage_ids import passage_id, passage_index, passage_message
from app.db.transfer import Row, rows_by_key
from app.db.transfer_vectors import VECTOR_TABLES, vectors_of
from app.memory.store.writes import index_text
from app.search.text.words import chunks_with_words

Filler = Callable[[Session, Session, Storage, list[Row]], None]
_VECTORS = {table.parent: table for table in VECTOR_TABLES}


def fill_indexes(
    table: str, source: Session, target: Session, storage: Storage, rows: list[Row]
) -> None:
    """Index a batch of ``table``'s rows just written to the target."""
    filler = _FILLERS.get(table)
    if filler is not None and rows:
        filler(source, target, storage, rows)


def _messages(source: Session, target: Session, storage: Storage, rows: list[Row]) -> None:
    # The index holds the messages of archives marked indexed, only those (app.archives.index.text_index).
    archive_pks = sorted({row["archive_pk"] for row in rows if row["archive_pk"] is not None})
    archives = rows_by_key(target, Base.metadata.tables["archives"], archive_pks)
    indexed = {pk for pk, archive in archives.items() if archive["messages_indexed"]}
    storage.text.index_messages(
        target, [(row["id"], row["search_text"]) for row in rows if row["archive_pk"] in indexed]
    )
    vectors = vectors_of(source, _VECTORS["messages"], [row["id"] for row in rows])
    storage.message_vectors.store_message_vectors(
        target, [(v.row_id, int(v.partition), v.tag, v.floats()) for v in vectors]
    )


def _archives(_source: Session, target: Session, storage: Storage, rows: list[Row]) -> None:
    for row in rows:
        if row["overview"]:
            storage.text.index_archive_overview(target, row["id"], row["overview"])


def _memory_chunks(source: Session, target: Session, storage: Storage, rows: list[Row]) -> None:
    # The memories are on the target already (parents are copied first).
    memories = rows_by_key(
        target, Base.metadata.tables["memories"], sorted({row["memory_id"] for row in rows})
    )
    storage.memory_words.index_memory_chunks(
        target,
        chunks_with_words(
            [
                (
                    row["id"],
                    _partition(memories[row["memory_id"]]),
                    index_text(_memory(memories[row["memory_id"]]), row["text"]),
                )
                for row in rows
            ]
        ),
    )
    vectors = vectors_of(source, _VECTORS["memory_chunks"], [row["id"] for row in rows])
    storage.memory_vectors.store_chunk_vectors(
        target, [(v.row_id, str(v.partition), v.floats()) for v in vectors]
    )


def _message_search(source: Session, target: Session, storage: Storage, rows: list[Row]) -> None:
    ids = [passage_id(row["message_id"], i) for row in rows for i in range(row["vector_passages"])]
    vectors = vectors_of(source, _VECTORS["message_search"], ids)
    storage.message_vectors.store_passage_vectors(
        target,
        [
            (
                passage_message(v.row_id),
                passage_index(v.row_id),
                int(v.partition),
                v.tag,
                v.floats(),
            )
            for v in vectors
        ],
    )


def _partition(row: dict[str, Any]) -> str:
    return memory_partition(row["tenant_id"], (row["owner_kind"], row["owner_id"]))


def _memory(row: dict[str, Any]) -> Memory:
    """The fields of a memory that its index text reads (a detached object, never added)."""
    return Memory(title=row["title"], observed_at=row["observed_at"], created_at=row["created_at"])


_FILLERS: dict[str, Filler] = {
    "messages": _messages,
    "archives": _archives,
    "memory_chunks": _memory_chunks,
    "message_search": _message_search,
}
