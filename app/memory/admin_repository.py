"""SQL of the operator's view of memories: every owner of a tenant, export pages, stale vectors.
Never commits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from app.db.models import Memory
from app.memory.repository import visible


def browse(
    db: Session,
    tenant_id: str,
    now: datetime,
    category: str | None,
    text: str | None,
    limit: int,
    offset: int,
) -> list[Memory]:
    """Current memories of every owner of the tenant, most recently changed first."""
    stmt = select(Memory).where(Memory.tenant_id == tenant_id, *visible(now))
    if category:
        stmt = stmt.where(Memory.category == category)
    if text:
        stmt = stmt.where(
            or_(
                *(
                    column.icontains(text, autoescape=True)
                    for column in (Memory.title, Memory.content, Memory.owner_id)
                )
            )
        )
    stmt = stmt.order_by(Memory.updated_at.desc(), Memory.id).offset(offset).limit(limit)
    return list(db.execute(stmt).scalars())


def category_counts(db: Session, tenant_id: str, now: datetime) -> dict[str, int]:
    stmt = (
        select(Memory.category, func.count())
        .where(Memory.tenant_id == tenant_id, *visible(now))
        .group_by(Memory.category)
    )
    return {category: int(count) for category, count in db.execute(stmt)}


def page_after(db: Session, tenant_id: str, after_id: str, limit: int) -> list[Memory]:
    """Every memory of the tenant (superseded and expired ones too) with an id after ``after_id``."""
    stmt = (
        select(Memory)
        .where(Memory.tenant_id == tenant_id, Memory.id > after_id)
        .order_by(Memory.id)
        .limit(limit)
    )
    return list(db.execute(stmt).scalars())


def count_all(db: Session, tenant_id: str) -> int:
    return int(
        db.execute(
            select(func.count()).select_from(Memory).where(Memory.tenant_id == tenant_id)
        ).scalar_one()
    )


def owners_of_ids(db: Session, ids: Sequence[str]) -> dict[str, Any]:
    """(tenant_id, version, updated_at) of the memories with these ids, whatever their tenant."""
    if not ids:
        return {}
    stmt = select(Memory.id, Memory.tenant_id, Memory.version, Memory.updated_at).where(
        Memory.id.in_(list(ids))
    )
    return {row.id: row for row in db.execute(stmt)}


def memories_with_ids(db: Session, ids: Sequence[str]) -> list[Memory]:
    if not ids:
        return []
    return list(db.execute(select(Memory).where(Memory.id.in_(list(ids)))).scalars())


def _stale(model_id: str):  # type: ignore[no-untyped-def]
    return or_(Memory.embedding_model.is_(None), Memory.embedding_model != model_id)


def count_stale(db: Session, model_id: str) -> int:
    """Memories not embedded by ``model_id`` (keyword-only ones included)."""
    return int(
        db.execute(select(func.count()).select_from(Memory).where(_stale(model_id))).scalar_one()
    )


def stale_page(db: Session, model_id: str, limit: int) -> list[Any]:
    """(id, tenant_id, content) of up to ``limit`` memories not embedded by ``model_id``."""
    stmt = (
        select(Memory.id, Memory.tenant_id, Memory.content)
        .where(_stale(model_id))
        .order_by(Memory.id)
        .limit(limit)
    )
    return list(db.execute(stmt))
