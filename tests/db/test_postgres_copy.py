"""`context-engine copy`: a SQLite database built through the service (sessions with archives that
completed Phase 2, live messages, memories with vectors) copied into PostgreSQL, verified, and read
back through the service on PostgreSQL; an interrupted copy resumed without duplicates; a target
holding other data refused; a corrupted target row caught by verification."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app.db.engine import create_db_engine
from app.dbcopy.endpoints import CopyError, open_endpoints
from app.dbcopy.run import TableCopy, copy_database
from app.dbcopy.verify import verify_copy
from app.settings import Settings
from tests.commands.cli import cli_env, run_cli
from tests.conftest import app_client
from tests.helpers import postgres
from tests.helpers.messages import assistant, user
from tests.helpers.stub_embeddings import StubEmbeddings


class Interrupted(Exception):
    pass


class Quiet:
    def advance(self, count: int) -> None:
        pass

    def close(self, note: str = "") -> None:
        pass


def quiet(_table: str, _total: int) -> Quiet:
    return Quiet()


@pytest.fixture(scope="module")
def embeddings() -> Iterator[str]:
    stub = StubEmbeddings()
    yield stub.start()
    stub.stop()


def service_settings(url: str, embeddings: str) -> Settings:
    return Settings(
        database_url=url,
        auto_migrate=False,
        worker={"poll_interval_ms": 20, "lease_s": 5},
        embedding={"provider": "openai", "base_url": embeddings, "model": "stub-embed"},
    )


async def post(client: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post(path, json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


async def populate(settings: Settings) -> None:
    """Two sessions archived by Phase 2 (overviews, message vectors), live messages, memories."""
    async with app_client(settings) as client:
        archived = {
            "s1": [
                user("the kumquat deploy failed on friday"),
                assistant("rolled back kumquat. The canary is green again."),  # two passages
            ],
            "s2": [user("昨天部署失败了，回滚到上一个版本"), assistant("好的，已经回滚")],
        }
        for session, messages in archived.items():
            await post(client, "/after-turn", {"sessionId": session, "messages": messages})
            answer = await post(
                client, f"/sessions/{session}/commit", {"keepRecentCount": 0, "wait": True}
            )
            assert answer["archive"]["status"] == "completed", answer
        live = [user(f"live message {i} about the orchard") for i in range(7)]
        await post(client, "/after-turn", {"sessionId": "s1", "messages": live})
        for content in (
            "The staging database listens on port 5433",
            "部署前先备份数据库",
            "Deploys happen on Fridays after the review. Rollbacks need a second approver.",
        ):
            added = await post(client, "/memories", {"content": content, "category": "entities"})
            assert added["action"] == "ADD", added


@pytest.fixture(scope="module")
def source(
    tmp_path_factory: pytest.TempPathFactory, migrated_template: Path, embeddings: str
) -> Path:
    path = tmp_path_factory.mktemp("copy") / "source.db"
    shutil.copyfile(migrated_template, path)
    asyncio.run(populate(service_settings(f"sqlite:///{path}", embeddings)))
    return path


def copy_in_process(
    source: Path, url: str, batch: int = 1000, stop_after: int | None = None
) -> list[TableCopy]:
    """The copy in this process, interrupted after ``stop_after`` batches of messages."""
    batches = 0

    def count(table: str) -> None:
        nonlocal batches
        batches += table == "messages"
        if stop_after is not None and batches >= stop_after:
            raise Interrupted

    with open_endpoints(Settings(), f"sqlite:///{source}", url, migrate=True) as ends:
        return copy_database(ends, quiet, batch, count)


def verified(source: Path, url: str) -> list[Any]:
    with open_endpoints(Settings(), f"sqlite:///{source}", url, migrate=False) as ends:
        return verify_copy(ends)


def execute(url: str, sql: str) -> Any:
    engine = create_db_engine(Settings(database_url=url))
    try:
        with engine.begin() as conn:
            result = conn.execute(text(sql))
            return result.all() if result.returns_rows else None
    finally:
        engine.dispose()


async def read_back(settings: Settings) -> None:
    async with app_client(settings) as client:
        session = (await client.get("/sessions/s1")).json()
        assert session["totalMessageCount"] == 9, session
        found = await post(client, "/archives/search", {"sessionId": "s1", "query": "kumquat"})
        assert any("kumquat" in hit["snippet"] for hit in found["results"]), found
        chinese = await post(client, "/archives/search", {"sessionId": "s2", "query": "部署失败"})
        assert chinese["results"], chinese
        memories = await post(client, "/memories/search", {"query": "staging database port"})
        assert "port 5433" in memories["results"][0]["content"], memories
        # New rows get fresh ids: the copy moved the sequences past the copied ones.
        await post(client, "/after-turn", {"sessionId": "s3", "messages": [user("a new one")]})
        added = await post(client, "/memories", {"content": "tea at four", "category": "entities"})
        assert added["action"] == "ADD"


def test_copy_verifies_and_the_service_reads_the_copy(
    source: Path, server: postgres.PostgresServer, embeddings: str
) -> None:
    url = server.create_database()
    done = run_cli("copy", "--to", url, env=cli_env(source))
    assert done.returncode == 0, done.stderr
    assert "copy messages:" in done.stderr and "copy memory_chunks:" in done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    for table in ("agent_sessions", "messages", "archives", "memories", "memory_audit"):
        assert lines[table].endswith("ok"), done.stdout
    assert "MISMATCH" not in done.stdout
    assert int(lines["memory_vec"].split()[1]) >= 3 and int(lines["message_vec"].split()[1]) == 4
    assert int(lines["message_passage_vec"].split()[1]) == 2 and lines[
        "message_passage_vec"
    ].endswith("ok"), done.stdout
    passages = lines["memory_passage_vectors"].split()
    assert passages[1] == "2" and passages[-1] == "ok", done.stdout
    asyncio.run(read_back(service_settings(url, embeddings)))
    server.drop_database(url)


def test_an_interrupted_copy_resumes_without_duplicates(
    source: Path, server: postgres.PostgresServer, postgres_template: str
) -> None:
    migrated = vector_indexes(server.url(postgres_template))
    url = server.create_database()
    with pytest.raises(Interrupted):
        copy_in_process(source, url, batch=2, stop_after=3)  # in the middle of the messages
    partial = dict(execute(url, "SELECT 'messages', count(*) FROM messages"))
    assert partial["messages"] == 6
    assert vector_indexes(url) == migrated  # rebuilt though interrupted
    resumed = {t.table: t for t in copy_in_process(source, url, batch=2)}
    assert any(t.already for t in resumed.values())
    assert resumed["messages"].rows == 11
    assert resumed["messages"].already + resumed["messages"].copied == 11
    assert partial["messages"] == resumed["messages"].already
    again = copy_in_process(source, url, batch=2)  # a finished copy has nothing left to do
    assert all(t.copied == 0 for t in again)
    checks = verified(source, url)
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]
    assert vector_indexes(url) == migrated
    server.drop_database(url)


def vector_indexes(url: str) -> list[Any]:
    """The vector tables' index definitions (the copy drops the HNSW ones and builds them again)."""
    return execute(
        url,
        "SELECT tablename, indexname, indexdef FROM pg_indexes "
        "WHERE tablename IN ('memory_vec', 'message_vec') ORDER BY indexname",
    )


def test_a_target_holding_other_data_is_refused(
    source: Path, server: postgres.PostgresServer, tmp_path: Path, migrated_template: Path
) -> None:
    other = tmp_path / "other.db"
    shutil.copyfile(migrated_template, other)
    asyncio.run(populate_other(f"sqlite:///{other}"))
    url = server.create_database()
    copy_in_process(other, url)
    with pytest.raises(CopyError, match="agent_sessions holds rows"):
        copy_in_process(source, url)
    server.drop_database(url)


async def populate_other(url: str) -> None:
    settings = Settings(database_url=url, auto_migrate=False, embedding={"provider": "none"})
    async with app_client(settings) as client:
        await post(client, "/after-turn", {"sessionId": "x", "messages": [user("other data")]})


def test_a_corrupted_target_row_fails_verification(
    source: Path, server: postgres.PostgresServer
) -> None:
    url = server.create_database()
    copy_in_process(source, url)
    execute(url, "UPDATE messages SET search_text = 'tampered' WHERE id = 2")
    done = run_cli("copy", "--to", url, "--verify-only", env=cli_env(source))
    assert done.returncode == 1, done.stdout
    assert "differs from its source in: messages" in done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines() if "MISMATCH" in line] == [
        "messages"
    ]
    execute(
        url,
        "UPDATE memory_vec SET embedding = CAST(array_fill(CAST(0.5 AS real), ARRAY[384]) AS vector) "
        "WHERE chunk_id = (SELECT min(chunk_id) FROM memory_vec)",
    )
    failed = [c.table for c in verified(source, url) if not c.ok]
    assert failed == ["messages", "memory_vec"]
    server.drop_database(url)
