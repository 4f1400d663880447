"""`memories import` and `reembed` of 10,000 memories: progress on stderr, interrupted, run again,
nothing lost and nothing twice."""

from __future__ import annotations

import json
import shutil
import signal
import uuid
from dataclasses import dataclass
from pathlib import Path

import pysqlite3.dbapi2 as sqlite
import pytest
import sqlite_vec

from tests.commands.cli import RunningCommand, cli_env, run_cli
from tests.helpers.stub_embeddings import StubEmbeddings

pytestmark = pytest.mark.slow
N = 10_000
BATCH = 128


def connect(db: Path) -> sqlite.Connection:
    conn = sqlite.connect(str(db))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    return conn


def scalar(db: Path, sql: str) -> int:
    conn = connect(db)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def export_line(i: int) -> str:
    return json.dumps(
        {
            "id": str(uuid.UUID(int=i + 1)),
            "uri": f"viking://user/u{i % 7}/memories/entities/fact-{i}.md",
            "category": "entities",
            "title": f"Fact {i}",
            "content": f"Fact {i}: service s{i % 97} runs in r{i % 13}",
            "ownerKind": "user",
            "ownerId": f"u{i % 7}",
            "version": 1,
            "sensitivity": "allowed",
            "createdAt": "2026-01-01T00:00:00.000Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
        }
    )


@dataclass
class ImportRun:
    db: Path
    file: Path
    killed_at: int
    stored_when_killed: int
    resumed_status: int
    resumed_stderr: str


@pytest.fixture(scope="module")
def interrupted_import(
    tmp_path_factory: pytest.TempPathFactory, migrated_template: Path
) -> ImportRun:
    """Import 10,000 memories, kill the command part-way (SIGKILL), then run it again."""
    folder = tmp_path_factory.mktemp("bulk")
    file, db = folder / "memories.jsonl", folder / "bulk.db"
    file.write_text("".join(export_line(i) + "\n" for i in range(N)))
    shutil.copyfile(migrated_template, db)
    first = RunningCommand("memories", "import", str(file), "--batch", str(BATCH), env=cli_env(db))
    killed_at = first.wait_for_progress(1500)
    first.kill()
    stored = scalar(db, "SELECT count(*) FROM memories")
    second = run_cli("memories", "import", str(file), "--batch", str(BATCH), env=cli_env(db))
    return ImportRun(db, file, killed_at, stored, second.returncode, second.stderr)


def test_an_interrupted_import_resumes_and_loses_nothing(interrupted_import: ImportRun) -> None:
    run = interrupted_import
    assert run.killed_at >= 1500
    # Killed mid-way: whole batches were stored, none in part.
    assert 0 < run.stored_when_killed < N and run.stored_when_killed % BATCH == 0
    assert run.resumed_status == 0, run.resumed_stderr
    assert "import: [" in run.resumed_stderr and f"{N}/{N} 100%" in run.resumed_stderr
    assert (
        f"done: {N - run.stored_when_killed} imported, {run.stored_when_killed} already there"
        in run.resumed_stderr
    )
    conn = connect(run.db)
    try:
        stored = dict(conn.execute("SELECT id, content FROM memories").fetchall())
        expected = {
            r["id"]: r["content"] for r in map(json.loads, run.file.read_text().splitlines())
        }
        assert stored == expected
        # One chunk, one word-index row and one audit entry per memory: nothing written twice.
        for table in ("memory_chunks", "memory_fts", "memory_audit"):
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == N, table
    finally:
        conn.close()


def test_an_interrupted_reembed_resumes_and_embeds_every_memory(
    interrupted_import: ImportRun, tmp_path: Path
) -> None:
    db = tmp_path / "reembed.db"
    shutil.copyfile(interrupted_import.db, db)
    assert (
        scalar(db, "SELECT count(*) FROM memories WHERE embedding_model IS NULL") == N
    )  # keyword-only so far
    stub = StubEmbeddings()
    stub.slow_after = 3000  # past the progress awaited below: the signal lands mid-run
    env = cli_env(
        db,
        CE_EMBEDDING__PROVIDER="openai",
        CE_EMBEDDING__BASE_URL=stub.start(),
        CE_EMBEDDING__MODEL="stub-embed",
    )
    try:
        first = RunningCommand("reembed", "--batch", "100", env=env)
        first.wait_for_progress(2000)
        first.process.send_signal(signal.SIGINT)
        # The stderr lines and the stub's count tell a late signal from an ignored one (the stub
        # saw every text).
        assert first.finish() == 130, (first.lines, stub.texts)
        assert "interrupted; run the same command again to resume" in first.lines[-1]
        done = scalar(db, "SELECT count(*) FROM memories WHERE embedding_model = 'stub-embed'")
        assert 2000 <= done < N and done % 100 == 0
        stub.slow_after = None
        second = run_cli("reembed", "--batch", "100", env=env)
    finally:
        stub.stop()
    assert second.returncode == 0, second.stderr
    assert f"re-embedded {N - done} memories" in second.stdout
    assert f"{N - done}/{N - done} 100%" in second.stderr
    assert (
        scalar(db, "SELECT count(*) FROM memories WHERE embedding_model IS NOT 'stub-embed'") == 0
    )
    assert (
        scalar(db, "SELECT count(*) FROM memory_chunks WHERE embedding_model = 'stub-embed'") == N
    )
    assert scalar(db, "SELECT count(*) FROM memory_vec") == N
    assert stub.texts <= N + 100  # at most the batch in flight when interrupted is embedded twice
