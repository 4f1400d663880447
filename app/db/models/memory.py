"""Long-term memories (per user) and agent experiences (per agent), their chunks, the chunks'
passage vectors and the audit trail."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class Memory(Base):
    __tablename__ = "memories"
    __table_args__ = (
        Index("ix_memories_owner_category", "tenant_id", "owner_kind", "owner_id", "category"),
        Index(
            "ix_memories_owner_category_key",
            "tenant_id",
            "owner_kind",
            "owner_id",
            "category",
            "content_key",
        ),
        Index("ix_memories_tenant_uri", "tenant_id", "uri"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    owner_kind: Mapped[str] = mapped_column(String(8))  # "user" or "agent"
    owner_id: Mapped[str] = mapped_column(String(256))
    uri: Mapped[str] = mapped_column(String(1024))
    category: Mapped[str] = mapped_column(String(32))
    title: Mapped[str] = mapped_column(Text, default="")
    abstract: Mapped[str] = mapped_column(Text, default="")
    content: Mapped[str] = mapped_column(Text, default="")
    # A digest of the normalised content (app/memory/store/content_key.py): an exact
    # duplicate is found by an index lookup, not by reading the owner's every memory.
    content_key: Mapped[str | None] = mapped_column(String(32))
    confidence: Mapped[float] = mapped_column(Float, default=1.0)
    sensitivity: Mapped[str] = mapped_column(String(16), default="allowed")
    priority: Mapped[int] = mapped_column(Integer, default=0)
    version: Mapped[int] = mapped_column(Integer, default=1)
    source_json: Mapped[str] = mapped_column(Text, default="{}")
    embedding_model: Mapped[str | None] = mapped_column(String(128))
    superseded_by: Mapped[str | None] = mapped_column(String(36))
    expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    observed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class MemoryChunk(Base):
    __tablename__ = "memory_chunks"
    __table_args__ = (Index("ix_memory_chunks_memory", "memory_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    memory_id: Mapped[str] = mapped_column(ForeignKey("memories.id", ondelete="CASCADE"))
    chunk_index: Mapped[int] = mapped_column(Integer, default=0)
    text: Mapped[str] = mapped_column(Text)
    embedding_model: Mapped[str | None] = mapped_column(String(128))


class MemoryPassageVector(Base):
    """The vector of one passage (sentence or line, app/search/text/passages.py) of a memory chunk that
    has a vector and more than one passage. Searched only by rescoring a search's nearest chunks,
    never by a KNN of its own, so a plain table of float32 bytes serves both databases."""

    __tablename__ = "memory_passage_vectors"

    chunk_id: Mapped[int] = mapped_column(
        ForeignKey("memory_chunks.id", ondelete="CASCADE"), primary_key=True
    )
    passage_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    embedding: Mapped[bytes] = mapped_column(LargeBinary)


class MemoryAudit(Base):
    __tablename__ = "memory_audit"
    __table_args__ = (Index("ix_memory_audit_memory", "tenant_id", "memory_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    memory_id: Mapped[str] = mapped_column(String(36))
    action: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(Text, default="")
    before_json: Mapped[str | None] = mapped_column(Text)
    after_json: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class EmbeddingCacheEntry(Base):
    __tablename__ = "embedding_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(128))
    dimensions: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
