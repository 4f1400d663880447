"""SQL of the session hook records (``session_hooks``). Never commits."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import AgentSession, SessionHook


def hook_rows(db: Session, session_pk: int) -> list[SessionHook]:
    stmt = (
        select(SessionHook).where(SessionHook.session_pk == session_pk).order_by(SessionHook.hook)
    )
    return list(db.execute(stmt).scalars())


def save_hook_call(
    db: Session,
    session: AgentSession,
    rows: list[SessionHook],
    hook: str,
    streaks: dict[str, int],
    now: datetime,
    versions: tuple[str | None, str | None],
    count: int = 1,
) -> None:
    """Count the calls on the hook's row (made on its first call) and set every row's streak."""
    by_hook = {row.hook: row for row in rows}
    row = by_hook.get(hook)
    if row is None:
        row = SessionHook(
            tenant_id=session.tenant_id, session_pk=session.id, hook=hook, calls=0, first_at=now
        )
        db.add(row)
    row.calls = (row.calls or 0) + count
    row.last_at = now
    row.host_version, row.plugin_version = versions
    for name, streak in streaks.items():
        target = by_hook.get(name, row if name == hook else None)
        if target is not None:
            target.streak = streak
