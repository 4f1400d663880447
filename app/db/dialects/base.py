"""The interface every database dialect implements (full-text index and search), and the rows its
searches return. The ids of passage vectors: ``passage_ids``; memory partitions: ``memory_partitions``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, cast

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from app.db.dialects.memory_partitions import ChunkWords
from app.search.phrases import Phrase
from app.search.postings import TermCounts


class TextHit(NamedTuple):  # tuples, built by the hundred per search (see CandidateRow)
    row_id: int
    score: float | None


class CandidateRow(NamedTuple):
    """An archived message that may answer a ranked query, with what scoring needs. A tuple: a
    ranked search builds up to a thousand, and a tuple is cheaper to build than a frozen dataclass
    (bench/RESULTS.md, Measurements behind the code)."""

    row_id: int
    archive_pk: int
    seq: int
    role: str
    text: str
    dates: str
    # From the search facts, when Phase 2 wrote them: the host's timestamp in ms, or the time the
    # message was stored when the host sent none.
    said_at_ms: int | None = None


def candidate_row(row: Sequence[Any]) -> CandidateRow:
    """A CandidateRow from a row of the dialects' candidate select (the same columns in each)."""
    return CandidateRow(int(row[0]), int(row[1]), int(row[2]), row[3], row[4] or "", row[5], row[6])


# (since, until) in epoch milliseconds; None leaves that side open.
TimeRange = tuple[int | None, int | None]


class Dialect(ABC):
    """Full-text operations over archived messages and archive overviews."""

    name: str
    # One writer per database (SQLite): the unit of work queues this process's writers on a lock,
    # which is fairer and cheaper than letting them spin in the database's busy handler.
    single_writer: bool = False
    # Reads run in this process (SQLite): an indexed read of one row costs less than a hop to a
    # worker thread.
    in_process_reads: bool = False

    @abstractmethod
    def index_messages(self, db: Session, rows: Iterable[tuple[int, str]]) -> None:
        """Add (message id, search text) pairs to the message index: the messages of an archive,
        once (app.archives.text_index); live messages are never indexed."""

    @abstractmethod
    def unindex_session(self, db: Session, session_pk: int) -> None:
        """Remove every index entry of a session's messages and archives."""

    @abstractmethod
    def index_archive_overview(self, db: Session, archive_pk: int, text: str) -> None:
        """Replace the index entry of an archive's overview."""

    @abstractmethod
    def match_messages(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        """Archived messages of a session whose text contains every term (ranked: any term, by BM25)."""

    @abstractmethod
    def match_overviews(
        self, db: Session, session_pk: int, terms: list[str], archive_pk: int | None, ranked: bool
    ) -> Iterator[TextHit]:
        """Archives of a session whose overview matches the terms, as for messages."""

    @abstractmethod
    def min_indexed_term_chars(self) -> int:
        """Terms shorter than this cannot be answered by the index (callers scan instead)."""

    @abstractmethod
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

    @abstractmethod
    def store_chunk_vectors(
        self, db: Session, rows: Iterable[tuple[int, str, list[float]]]
    ) -> None:
        """Store (chunk id, owner partition, vector) triples."""

    @abstractmethod
    def unindex_memory_chunks(self, db: Session, chunk_ids: list[int]) -> None:
        """Remove chunks from the word and vector indexes."""

    @abstractmethod
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

    @abstractmethod
    def memory_term_documents(
        self, db: Session, partitions: list[str], tokens: list[str], prefixes: list[str]
    ) -> tuple[int, dict[str, int]]:
        """(chunks, chunks holding each token): the statistics the word index's BM25 scores with
        when searching these partitions (their kept counters). A prefix's count, keyed ``prefix*``, sums its tokens' (a chunk holding two
        forms counts twice, so it is at most an overestimate)."""

    @abstractmethod
    def nearest_memory_chunks(
        self, db: Session, owner: str, vector: list[float], k: int
    ) -> list[TextHit]:
        """The k nearest chunks of one owner partition; score = cosine distance."""

    @abstractmethod
    def tool_results(
        self, db: Session, tenant_id: str, agent_id: str, tool_names: list[str], limit: int
    ) -> list[tuple[str, bool, str]]:
        """(tool name, is error, result text) of the agent's stored tool results, newest first."""

    @abstractmethod
    def tool_calls_mentioning(
        self, db: Session, tenant_id: str, agent_id: str, needle: str, limit: int
    ) -> list[tuple[int, int, str]]:
        """(session pk, seq, body) of the agent's assistant messages whose text contains ``needle``."""

    def messages_after(self, db: Session, session_pk: int, seq: int, count: int) -> list[str]:
        """Bodies of the ``count`` messages following ``seq`` in a session (portable SQL)."""
        sql = "SELECT body FROM messages WHERE session_pk = :s AND seq > :q ORDER BY seq LIMIT :c"
        return [body for (body,) in db.execute(text(sql), {"s": session_pk, "q": seq, "c": count})]

    @abstractmethod
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

    @abstractmethod
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
        """Archived messages of one session whose text contains any literal (lowercase) or whose
        mentioned days include any of ``dates``, said within ``window`` when their time is known;
        nothing of other sessions is read. Literals are taken in the given order (most selective
        first) and at most ``budget`` messages are returned: a literal whose messages do not all
        fit brings its most recent ones, then the taking stops."""
        ids: dict[int, None] = {}
        for sql, params in self._candidate_sources(
            db, session_pk, literals, dates, archive_pk, window
        ):
            room = None if budget is None else budget - len(ids)
            if room is not None and room <= 0:
                break
            limit = "" if room is None else f" ORDER BY id DESC LIMIT {int(room)}"
            ids.update(
                (int(row_id), None)
                for (row_id,) in self._rows(db, sql + limit, params)
                if row_id not in ids
            )
        return self._candidate_rows(db, list(ids))

    def _rows(self, db: Session, sql: str, params: dict[str, object]) -> Iterable[tuple[Any, ...]]:
        """The rows of one of this dialect's statements (named ``:parameters``) in ``db``'s
        transaction."""
        return cast(Iterable[tuple[Any, ...]], db.execute(text(sql), params))

    @abstractmethod
    def _candidate_sources(
        self,
        db: Session,
        session_pk: int,
        literals: list[str],
        dates: list[str],
        archive_pk: int | None,
        window: TimeRange,
    ) -> Iterator[tuple[str, dict[str, object]]]:
        """The id queries of ``message_candidates``, in the order they are taken (each selects one
        column named ``id``, a message's id; ``ORDER BY id DESC`` and a limit are appended)."""

    @abstractmethod
    def _candidate_rows(self, db: Session, ids: list[int]) -> list[CandidateRow]:
        """The candidate rows of these message ids."""

    @abstractmethod
    def store_message_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, list[float]]]
    ) -> None:
        """Store (message id, session pk, said-at ms, vector) rows, replacing earlier ones."""

    @abstractmethod
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

    @abstractmethod
    def store_passage_vectors(
        self, db: Session, rows: Iterable[tuple[int, int, int, int, list[float]]]
    ) -> None:
        """Store (message id, passage index, session pk, said-at ms, vector) rows."""

    @abstractmethod
    def remove_passage_vectors(self, db: Session, rows: Iterable[tuple[int, int, int]]) -> None:
        """Remove the passage vectors of (message id, session pk, passages stored) rows."""

    @abstractmethod
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

    @abstractmethod
    def passage_similarities(
        self, db: Session, counts: Mapping[int, int], vector: list[float]
    ) -> dict[int, float]:
        """Each of these messages' (message id -> passages stored) best cosine similarity among
        its passages; a message whose passages are gone is left out."""

    @abstractmethod
    def lock_session(self, db: Session, tenant_id: str, session_id: str) -> None:
        """Until the transaction ends, make other writers of this session wait here. A use case
        that creates a session, or reads its counters and writes them back, takes it first."""

    @abstractmethod
    def probe_write(self, conn: Connection) -> None:
        """A harmless schema write inside the caller's transaction (rolled back by the caller)."""
