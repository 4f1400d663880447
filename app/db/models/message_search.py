"""What ranked archive search knows about an archived message besides its text, written in
Phase 2: the host's time of the message, the days it mentions, and whether it has a vector."""

from __future__ import annotations

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base


class MessageSearch(Base):
    __tablename__ = "message_search"
    __table_args__ = (Index("ix_message_search_session", "session_pk"),)

    message_id: Mapped[int] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True
    )
    tenant_id: Mapped[str] = mapped_column(String(128))
    session_pk: Mapped[int] = mapped_column(ForeignKey("agent_sessions.id", ondelete="CASCADE"))
    said_at_ms: Mapped[int | None] = mapped_column(BigInteger)
    # ISO days the text mentions, relative expressions resolved ("2023-05-07 2023-05-01"); searched
    # with instr(), so a question about a day finds "yesterday" said the day after.
    dates: Mapped[str] = mapped_column(Text, default="")
    embedding_model: Mapped[str | None] = mapped_column(String(128))
    token_count: Mapped[int] = mapped_column(Integer, default=0)
    # How many passage vectors the message has (app/search/text/passages.py); 0: it is one passage.
    vector_passages: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class SessionSearchStats(Base):
    """BM25's whole-session numbers for one session's archived messages that have search facts:
    how many there are and their total length, kept by Phase 2 so a search never counts them."""

    __tablename__ = "session_search_stats"

    session_pk: Mapped[int] = mapped_column(
        ForeignKey("agent_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    tenant_id: Mapped[str] = mapped_column(String(128))
    documents: Mapped[int] = mapped_column(Integer, default=0)
    total_chars: Mapped[int] = mapped_column(BigInteger, default=0)


class SessionTerm(Base):
    """How many of a session's archived messages hold a term (``app.search.text.query.document_tokens``
    and the days they mention): the document frequencies of BM25, read per query term instead of
    being counted over every message that holds it."""

    __tablename__ = "session_terms"

    session_pk: Mapped[int] = mapped_column(
        ForeignKey("agent_sessions.id", ondelete="CASCADE"), primary_key=True
    )
    term: Mapped[str] = mapped_column(String(256), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    documents: Mapped[int] = mapped_column(Integer, default=0)
