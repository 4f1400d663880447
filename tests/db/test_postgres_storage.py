"""Storage failures on PostgreSQL through the HTTP API, as on SQLite (docs/api.md, Errors): a
database that refuses writes or a server that cannot be reached is a 503 STORAGE_UNAVAILABLE that
names the reason, with Retry-After, /readyz fails, and nothing already stored is lost."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest

from app.db.storage import storage_problem
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers import postgres
from tests.helpers.messages import user


def settings_for(url: str) -> Settings:
    return Settings(
        database_url=url,
        auto_migrate=False,
        worker={"enabled": False},
        embedding={"provider": "none"},
        db={"storage_retry_after_s": 30},
    )


@pytest.fixture
def database(server: postgres.PostgresServer, postgres_template: str) -> Iterator[str]:
    url = server.create_database(template=postgres_template)
    yield url
    server.drop_database(url)


def set_read_only(server: postgres.PostgresServer, url: str, read_only: bool) -> None:
    """Every new transaction of the database read-only (or not), as on a standby; open
    connections are ended so that the service's next ones see it."""
    name = server.database_name(url)
    with psycopg.connect(
        host=str(server.socket_dir), user=postgres.SUPERUSER, dbname="postgres", autocommit=True
    ) as conn:
        value = "on" if read_only else "off"
        conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = {value}')
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,)
        )


async def test_a_read_only_database_is_503_and_loses_nothing(
    server: postgres.PostgresServer, database: str
) -> None:
    async with app_client(settings_for(database)) as client:
        stored = await client.post("/after-turn", json={"sessionId": "s", "messages": [user("a")]})
        assert stored.status_code == 200 and stored.json()["ingested"] == 1
        set_read_only(server, database, True)
        refused = await client.post("/after-turn", json={"sessionId": "s", "messages": [user("b")]})
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert error["code"] == "STORAGE_UNAVAILABLE"
        assert error["details"]["reason"] == "read_only"
        assert refused.headers["retry-after"] == "30"
        assert (await client.get("/readyz")).status_code == 503
        assert (await client.get("/sessions/s")).json()["messageCount"] == 1  # reads go on
        set_read_only(server, database, False)
        again = await client.post("/after-turn", json={"sessionId": "s", "messages": [user("b")]})
        assert again.status_code == 200 and again.json()["ingested"] == 1
        assert (await client.get("/sessions/s")).json()["messageCount"] == 2


async def test_a_server_that_cannot_be_reached_is_503_unreachable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    url = f"postgresql+psycopg://postgres@/ce?host={tmp_path}&connect_timeout=2"
    async with app_client(settings_for(url)) as client:
        refused = await client.post("/after-turn", json={"sessionId": "s", "messages": [user("a")]})
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert error["code"] == "STORAGE_UNAVAILABLE"
        assert error["details"]["reason"] == "unreachable"
        assert "cannot be reached" in error["message"]
        ready = await client.get("/readyz")
        assert ready.status_code == 503


def test_a_deadlock_is_busy(server: postgres.PostgresServer, database: str) -> None:
    """Two writers taking the same rows in opposite orders: PostgreSQL ends one of them, and the
    service answers that one as ``busy`` (retry), as for a lock it could not get."""
    options = {"host": str(server.socket_dir), "user": postgres.SUPERUSER}
    name = server.database_name(database)
    with psycopg.connect(**options, dbname=name, autocommit=True) as setup:
        setup.execute("INSERT INTO memory_partitions VALUES ('p1', 0, 0), ('p2', 0, 0)")
    update = "UPDATE memory_partitions SET chunks = chunks + 1 WHERE partition = %s"
    errors: list[BaseException] = []
    with (
        psycopg.connect(**options, dbname=name) as first,
        psycopg.connect(**options, dbname=name) as second,
    ):
        first.execute(update, ("p1",))
        second.execute(update, ("p2",))

        def cross(conn: psycopg.Connection[object], partition: str) -> None:
            try:
                conn.execute(update, (partition,))
                conn.commit()
            except psycopg.Error as error:
                errors.append(error)
                conn.rollback()

        waiting = threading.Thread(target=cross, args=(first, "p2"))
        waiting.start()
        cross(second, "p1")
        waiting.join(timeout=30)
    assert len(errors) == 1
    assert isinstance(errors[0], psycopg.errors.DeadlockDetected)
    assert storage_problem(errors[0]) == "busy"
