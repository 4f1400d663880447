"""SQL of the operator's view of memories: every owner of a tenant, export pages, stale vectors.
Never commits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, func, or_, select
from sqlalchemy.orm import Session

from app.db.models import Memory
from app.memory.store.repository import visible


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


@dataclass(frozen=True, slots=True)
class HeldId:
    """Who holds a memory id, and at which revision."""

    id: str
    tenant_id: str
    version: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class StaleMemory:
    """A memory whose vectors another model made: what re-embedding it needs."""

    id: str
    tenant_id: str
    content: str


def owners_of_ids(db: Session, ids: Sequence[str]) -> dict[str, HeldId]:
    """The tenant, version and change time of the memories with these ids, whatever their tenant."""
    if not ids:
        return {}
    stmt = select(Memory.id, Memory.tenant_id, Memory.version, Memory.updated_at).where(
        Memory.id.in_(list(ids))
    )
    return {
        row.id: HeldId(row.id, row.tenant_id, row.version, row.updated_at)
        for row in db.execute(stmt)
    }


def add_memories(db: Session, memories: Sequence[Memory]) -> None:
    """Insert memories; deletions still pending go first, so that a replaced id is free again."""
    db.flush()
    db.add_all(list(memories))
    db.flush()


def memories_with_ids(db: Session, ids: Sequence[str]) -> list[Memory]:
    if not ids:
        return []
    return list(db.execute(select(Memory).where(Memory.id.in_(list(ids)))).scalars())


def _stale(model_id: str) -> ColumnElement[bool]:
    return or_(Memory.embedding_model.is_(None), Memory.embedding_model != model_id)


def count_stale(db: Session, model_id: str) -> int:
    """Memories not embedded by ``model_id`` (keyword-only ones included)."""
    return int(
        db.execute(select(func.count()).select_from(Memory).where(_stale(model_id))).scalar_one()
    )


def stale_page(db: Session, model_id: str, limit: int) -> list[StaleMemory]:
    """Up to ``limit`` memories not embedded by ``model_id``, by id."""
    stmt = (
        select(Memory.id, Memory.tenant_id, Memory.content)
        .where(_stale(model_id))
        .order_by(Memory.id)
        .limit(limit)
    )
    return [StaleMemory(row.id, row.tenant_id, row.content) for row in db.execute(stmt)]
