"""The storage seams: one small interface per index the domains read and write through, each
implemented once per database (``app/db/sqlite/``, ``app/db/postgres/``), only reading and
writing rows; ``Storage`` composes one database's (``app.db.backends.storage_for``).

What is the same on both databases is written once in ``app/db/shared/`` (the candidate loop,
the memory word search, the counters' reads, passage ids, portable SQL); the ranking rules
themselves live in ``app/search``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session

from app.db.shared.memory_partitions import ChunkWords
from app.db.shared.rows import CandidateRow, TextHit, TimeRange
from app.search.phrases import Phrase
from app.search.postings import TermCounts


class MessageTextIndex(Protocol):
    """The substring index of archived messages' text and of archive overviews."""

    def min_indexed_term_chars(self) -> int:
        """Terms shorter than this cannot be answered by the index (callers scan instead)."""

    def index_messages(self, db: Session, rows: Iterable[tuple[int, str]]) -> None:
        """Add (message id, search text) pairs to the message index: the messages of an archive,
        once (app.archives.index.text_index); live messages are never indexed."""

    def index_archive_overview(self, db: Session, archive_pk: int, text: str) -> None:
        """Replace the index entry of an archive's overview."""

    def unindex_session(self, db: Session, session_pk: int) -> None:
        """Remove every index entry of a session's messages and archives."""

    def match_messages(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        """Archived messages of a session whose text contains every term (ranked: any term, by BM25)."""

    def match_overviews(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        """Archives of a session whose overview matches the terms, as for messages."""

    def scan_message_ids(
        self,
        db: Session,
        session_pk: int,
        terms: list[str],
        archive_pk: int | None,
        case_sensitive: bool,
    ) -> list[int]:
        """Archived message ids of a session whose search text contains every term (a scan, for
        terms too short for the index), in sequence order."""

    def short_term_message_ids(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None
    ) -> list[int] | None:
        """Archived message ids of a session that may hold every term, for terms of two characters
        (``None``: the index cannot say, the caller scans), in sequence order; callers check each
        hit."""

    def message_candidates(
        self,
        db: Session,
        session_pk: int,
        literals: list[str],
        dates: list[str],
        archive_pk: int | None,
        window: TimeRange = (None, None),
        budget: int | None = None,
    ) -> list[CandidateRow]:
        """A ranked search's candidates (app/db/shared/message_candidates.py says which)."""


class MemoryWordIndex(Protocol):
    """The word index of memory chunks, with its postings and counters."""

    def index_memory_chunks(
        self,
        db: Session,
        chunks: Sequence[ChunkWords],
        counts_of: Mapping[str, TermCounts] | None = None,
    ) -> None:
        """Add (chunk id, owner partition, prepared text, its words) to the memory word index: the
        words are the caller's (``app.search.text.words.chunks_with_words``), this layer analyses
        no text. ``counts_of`` holds the term counts of texts (``postings.term_counts``) that the
        caller computed before the transaction; the others are counted here."""

    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        """Remove chunks from the word index (chunks never indexed are ignored)."""

    def match_memory_chunks(
        self,
        db: Session,
        tenant_id: str,
        owners: list[tuple[str, str]],
        phrases: list[Phrase],
        limit: int,
    ) -> list[TextHit]:
        """Chunks of the owners' memories holding any of the phrases, best first (score = BM25 rank,
        lower is better)."""

    def memory_term_documents(
        self, db: Session, partitions: list[str], tokens: list[str], prefixes: list[str]
    ) -> tuple[int, dict[str, int]]:
        """(chunks, chunks holding each token): the statistics the word index's BM25 scores with
        when searching these partitions (their kept counters). A prefix's count, keyed
        ``prefix*``, sums its tokens' (a chunk holding two forms counts twice, so it is at most an
        overestimate)."""


class MessageVectorIndex(Protocol):
    """The vectors of archived messages and of their passages, partitioned by session."""

    def store_message_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, list[float]]]
    ) -> None:
        """Store (message id, session pk, said-at ms, vector) rows, replacing earlier ones."""

    def nearest_messages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit]:
        """The k archived messages of one session said within ``window`` nearest to the vector;
        score = cosine distance."""

    def store_passage_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, int, list[float]]]
    ) -> None:
        """Store (message id, passage index, session pk, said-at ms, vector) rows."""

    def remove_passage_vectors(self, db: Session, rows: Iterable[tuple[int, int, int]]) -> None:
        """Remove the passage vectors of (message id, session pk, passages stored) rows."""

    def nearest_passages(
        self,
        db: Session,
        session_pk: int,
        vector: list[float],
        k: int,
        window: TimeRange = (None, None),
    ) -> list[TextHit] | None:
        """Among the k passages of one session's archived messages (said within ``window``)
        nearest to the vector, each message's nearest: row id = the message's, score = cosine
        distance, nearest first. None when the session holds more passages than a search should
        read (SQLite: past its matrices' budget); ``passage_similarities`` then rescores some."""

    def passage_similarities(
        self, db: Session, counts: Mapping[int, int], vector: list[float]
    ) -> dict[int, float]:
        """Each of these messages' (message id -> passages stored) best cosine similarity among
        its passages; a message whose passages are gone is left out."""

    def remove_session_vectors(self, db: Session, session_pk: int) -> None:
        """Remove every vector of a session's messages and passages."""


class MemoryVectorIndex(Protocol):
    """The vectors of memory chunks, partitioned by owner."""

    def store_chunk_vectors(
        self, db: Session, rows: Iterable[tuple[int, str, list[float]]]
    ) -> None:
        """Store (chunk id, owner partition, vector) triples."""

    def nearest_memory_chunks(
        self, db: Session, owner: str, vector: list[float], k: int
    ) -> list[TextHit]:
        """The k nearest chunks of one owner partition; score = cosine distance."""

    def remove_chunk_vectors(self, db: Session, chunk_ids: list[int]) -> None:
        """Remove the vectors of these chunks."""


class SessionLock(Protocol):
    def lock_session(self, db: Session, tenant_id: str, session_id: str) -> None:
        """Until the transaction ends, make other writers of this session wait here. A use case
        that creates a session, or reads its counters and writes them back, takes it first."""


class ToolUseRows(Protocol):
    """The stored messages that tool memories learn from."""

    def tool_results(
        self, db: Session, tenant_id: str, agent_id: str, tool_names: list[str], limit: int
    ) -> list[tuple[str, bool, str]]:
        """(tool name, is error, result text) of the agent's stored tool results, newest first."""

    def tool_calls_mentioning(
        self, db: Session, tenant_id: str, agent_id: str, needle: str, limit: int
    ) -> list[tuple[int, int, str]]:
        """(session pk, seq, body) of the agent's assistant messages whose text contains ``needle``."""

    def messages_after(self, db: Session, session_pk: int, seq: int, count: int) -> list[str]:
        """Bodies of the ``count`` messages following ``seq`` in a session."""


@dataclass(frozen=True, slots=True)
class Storage:
    """One database's seams, as the unit of work hands them out (``uow.storage``)."""

    name: str
    text: MessageTextIndex
    memory_words: MemoryWordIndex
    message_vectors: MessageVectorIndex
    memory_vectors: MemoryVectorIndex
    locks: SessionLock
    tools: ToolUseRows
    # One writer per database (SQLite): the unit of work queues this process's writers on a lock,
    # which is fairer and cheaper than letting them spin in the database's busy handler.
    single_writer: bool = False
    # Reads run in this process (SQLite): an indexed read of one row costs less than a hop to a
    # worker thread.
    in_process_reads: bool = False

    def unindex_session(self, db: Session, session_pk: int) -> None:
        """Remove every index entry and vector of a session's messages and archives."""
        self.text.unindex_session(db, session_pk)
        self.message_vectors.remove_session_vectors(db, session_pk)

    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        """Remove chunks from the word and vector indexes."""
        self.memory_words.unindex_memory_chunks(db, chunk_ids)
        self.memory_vectors.remove_chunk_vectors(db, chunk_ids)
