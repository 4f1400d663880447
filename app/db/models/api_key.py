"""An API key stored by the service: its tenant, scopes and the SHA-256 of the key (app/keys)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, UtcDateTime


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (
        # Authentication finds a key by its hash alone: the caller's tenant is what it tells.
        Index("uq_api_keys_key_hash", "key_hash", unique=True),
        # "Is any key still valid?" decides whether a request without a known key is refused.
        Index("ix_api_keys_revoked_at", "revoked_at"),
        Index("ix_api_keys_tenant_id", "tenant_id", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = mapped_column(String(128))
    name: Mapped[str | None] = mapped_column(String(128))
    # The key's first characters, for operators to tell keys apart; not enough to use it.
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[str] = mapped_column(String(256), default="")  # `+`-separated, as CE_API_KEYS
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
