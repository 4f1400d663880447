"""SQL of the stored API keys. Repositories never commit."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, exists, select, update
from sqlalchemy.orm import Session

from app.db.driver_query import DriverQuery, RowReader
from app.db.models import ApiKey


def insert_key(
    db: Session,
    *,
    tenant_id: str,
    name: str | None,
    prefix: str,
    key_hash: str,
    scopes: str,
    now: datetime,
) -> ApiKey:
    row = ApiKey(
        tenant_id=tenant_id,
        name=name,
        prefix=prefix,
        key_hash=key_hash,
        scopes=scopes,
        created_at=now,
        revoked_at=None,
    )
    db.add(row)
    db.flush()
    return row


def list_keys(db: Session) -> list[ApiKey]:
    """Every stored key, oldest first."""
    return list(db.scalars(select(ApiKey).order_by(ApiKey.id)))


def keys_by_id_or_prefix(db: Session, key_id: int | None, prefix: str) -> list[ApiKey]:
    """The key with this id, or the keys whose display prefix starts with ``prefix``."""
    condition = ApiKey.id == key_id if key_id is not None else ApiKey.prefix.startswith(prefix)
    return list(db.scalars(select(ApiKey).where(condition).order_by(ApiKey.id)))


def revoke(db: Session, key_id: int, now: datetime) -> bool:
    """Mark a key revoked; False when it already was."""
    result: Any = db.execute(
        update(ApiKey)
        .where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return bool(result.rowcount)


# Built once: the statement of every authenticated request (its construction cost more than
# running it). Index probes only: the unique hash index, and any unrevoked row.
_ACTIVE = ApiKey.revoked_at.is_(None)
_MATCH = (ApiKey.key_hash == bindparam("key_hash")) & _ACTIVE
_LOOKUP = select(
    select(ApiKey.id).where(_MATCH).scalar_subquery(),
    select(ApiKey.tenant_id).where(_MATCH).scalar_subquery(),
    select(ApiKey.scopes).where(_MATCH).scalar_subquery(),
    exists().where(_ACTIVE),
)


_LOOKUP_ON_DRIVER = DriverQuery(_LOOKUP)


def lookup(read: RowReader, key_hash: str) -> tuple[int | None, str | None, str | None, bool]:
    """(id, tenant, scopes) of the unrevoked key with this hash (Nones when there is none), and
    whether any unrevoked key exists at all: one statement of index probes, made on every request,
    so on the driver's connection (app/db/driver_query.py)."""
    row = read(_LOOKUP_ON_DRIVER, {"key_hash": key_hash})
    if row is None:  # pragma: no cover - a select of scalar subqueries always has its one row
        raise RuntimeError("the key lookup returned no row")
    return row[0], row[1], row[2], bool(row[3])


def active_key(db: Session, key_id: int) -> ApiKey | None:
    """The key with this id unless it was revoked (the console's signed-in sessions)."""
    return db.scalars(
        select(ApiKey).where(ApiKey.id == key_id, ApiKey.revoked_at.is_(None))
    ).first()
