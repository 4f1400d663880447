"""The SQLite connection policy of app.db.engine (docs/architecture.md, Storage)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.db.engine import create_db_engine, group_commit_for
from app.settings import Settings


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    built = create_db_engine(Settings(database_url=f"sqlite:///{tmp_path / 'ext.db'}"))
    yield built
    built.dispose()


def test_stock_sqlite3_cannot_load_extensions() -> None:
    # Why the app needs another driver; if this ever changes the driver choice can be revisited.
    conn = sqlite3.connect(":memory:")
    try:
        assert not hasattr(conn, "enable_load_extension")
    finally:
        conn.close()


def test_sqlite_vec_is_loaded_on_every_connection(engine: Engine) -> None:
    for _ in range(3):
        with engine.connect() as conn:
            version = conn.execute(text("SELECT vec_version()")).scalar_one()
            assert isinstance(version, str) and version.startswith("v")
            distance = conn.execute(
                text("SELECT vec_distance_l2(vec_f32('[0, 0]'), vec_f32('[3, 4]'))")
            ).scalar_one()
            assert distance == pytest.approx(5.0)
    # A connection opened while another is checked out gets the extension too.
    with engine.connect() as first, engine.connect() as second:
        assert first.execute(text("SELECT vec_version()")).scalar_one()
        assert second.execute(text("SELECT vec_version()")).scalar_one()


def test_extension_loading_is_switched_off_again(engine: Engine) -> None:
    with engine.connect() as conn, pytest.raises(Exception, match="not authorized"):
        conn.execute(text("SELECT load_extension('does_not_exist')"))


def test_fts5_trigram_tokenizer_works(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("CREATE VIRTUAL TABLE probe USING fts5(body, tokenize='trigram')"))
        conn.execute(
            text(
                "INSERT INTO probe(rowid, body) VALUES (1, '昨天部署失败了'), (2, 'Deploy succeeded'), "
                "(3, 'nothing relevant')"
            )
        )
        assert conn.execute(
            text("SELECT rowid FROM probe WHERE probe MATCH '\"部署失败\"'")
        ).scalars().all() == [1]
        # Substring and case-insensitive matching: trigrams, not words.
        assert conn.execute(
            text("SELECT rowid FROM probe WHERE probe MATCH '\"ploy succ\"'")
        ).scalars().all() == [2]
        assert conn.execute(
            text("SELECT rowid FROM probe WHERE probe MATCH '\"DEPLOY\"'")
        ).scalars().all() == [2]
        ranked = conn.execute(
            text(
                "SELECT rowid, bm25(probe) FROM probe WHERE probe MATCH 'ing' ORDER BY bm25(probe)"
            )
        )
        assert [row[0] for row in ranked] == [3]


def test_contentless_delete_fts_tables_are_supported(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            text(
                "CREATE VIRTUAL TABLE probe_cl USING fts5(body, tokenize='trigram', content='', "
                "contentless_delete=1)"
            )
        )
        conn.execute(text("INSERT INTO probe_cl(rowid, body) VALUES (7, 'gamma delta')"))
        assert (
            conn.execute(
                text("SELECT count(*) FROM probe_cl WHERE probe_cl MATCH '\"amma\"'")
            ).scalar_one()
            == 1
        )
        conn.execute(text("DELETE FROM probe_cl WHERE rowid = 7"))
        assert (
            conn.execute(
                text("SELECT count(*) FROM probe_cl WHERE probe_cl MATCH '\"amma\"'")
            ).scalar_one()
            == 0
        )


def test_connection_pragmas(engine: Engine) -> None:
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar_one().lower() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar_one() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar_one() == 10000
        # FULL on a file is group commit: connections run NORMAL, the unit of work syncs the WAL.
        assert conn.execute(text("PRAGMA synchronous")).scalar_one() == 1
    assert group_commit_for(engine) is not None


def test_pragmas_follow_settings(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'tuned.db'}",
        db={"busy_timeout_ms": 1234, "sqlite_synchronous": "NORMAL"},
    )
    engine = create_db_engine(settings)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("PRAGMA busy_timeout")).scalar_one() == 1234
            assert conn.execute(text("PRAGMA synchronous")).scalar_one() == 1  # NORMAL
        assert group_commit_for(engine) is None  # NORMAL: no fsync awaited
    finally:
        engine.dispose()


def test_foreign_keys_are_enforced(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE parent (id INTEGER PRIMARY KEY)"))
        conn.execute(
            text(
                "CREATE TABLE child (id INTEGER PRIMARY KEY, "
                "parent_id INTEGER REFERENCES parent(id) ON DELETE CASCADE)"
            )
        )
        conn.execute(text("INSERT INTO parent(id) VALUES (1)"))
        conn.execute(text("INSERT INTO child(id, parent_id) VALUES (10, 1)"))
    with pytest.raises(Exception, match="FOREIGN KEY"), engine.begin() as conn:
        conn.execute(text("INSERT INTO child(id, parent_id) VALUES (11, 99)"))
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM parent WHERE id = 1"))
        assert conn.execute(text("SELECT count(*) FROM child")).scalar_one() == 0
