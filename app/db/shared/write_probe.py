"""The write probe of /readyz, the same on both databases."""

from __future__ import annotations

from sqlalchemy import Connection, text


def probe_write(conn: Connection) -> None:
    """A harmless schema write inside the caller's transaction (rolled back by the caller): a
    read-only database says so only when something is written."""
    conn.execute(text("CREATE TABLE ce_write_probe (id INTEGER)"))
