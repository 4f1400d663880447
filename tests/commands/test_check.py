"""`check`: one line per part; exit 1 for a missing extension, an unmigrated database or an
unreachable LLM; exit 0 when everything answers."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from tests.commands.cli import cli_env, run_cli
from tests.helpers.stub_embeddings import StubEmbeddings
from tests.jobs.test_crash_recovery import free_port

FAKE_SQLITE_VEC = '''"""Stands in for sqlite-vec on a machine where its library is missing."""
def loadable_path():
    return "/nonexistent/sqlite-vec/vec0"
def load(conn):
    conn.load_extension(loadable_path())
def serialize_float32(vector):
    raise RuntimeError("sqlite-vec is missing")
'''


@pytest.fixture
def models_endpoint() -> Iterator[str]:
    """An OpenAI-compatible endpoint answering GET /v1/models, as a reachable LLM does."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = json.dumps({"object": "list", "data": [{"id": "stub-model"}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], db: Path, **env: str
) -> tuple[int, dict[str, str]]:
    for key, value in {
        "CE_DATABASE_URL": f"sqlite:///{db}",
        "CE_EMBEDDING__PROVIDER": "none",
        **env,
    }.items():
        monkeypatch.setenv(key, value)
    status = main(["check"])
    lines = capsys.readouterr().out.splitlines()
    return status, {line.split()[1]: line for line in lines}


def test_everything_answering_is_ok(
    monkeypatch, capsys, db_path: Path, models_endpoint: str
) -> None:
    embeddings = StubEmbeddings()
    try:
        status, lines = check(
            monkeypatch,
            capsys,
            db_path,
            CE_LLM__BASE_URL=models_endpoint,
            CE_LLM__MODEL="stub-model",
            CE_EMBEDDING__PROVIDER="openai",
            CE_EMBEDDING__BASE_URL=embeddings.start(),
            CE_EMBEDDING__MODEL="stub-embed",
        )
    finally:
        embeddings.stop()
    assert status == 0, lines
    assert list(lines) == ["config", "database", "migrations", "extensions", "model", "llm"]
    assert all(line.startswith("ok") for line in lines.values()), lines
    assert "sqlite-vec v" in lines["extensions"] and "FTS5 trigram" in lines["extensions"]
    assert "384 dimensions" in lines["model"]
    assert "reachable (HTTP 200)" in lines["llm"]


def test_an_unmigrated_database_is_a_problem(monkeypatch, capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    status, lines = check(monkeypatch, capsys, empty)
    assert status == 1
    assert lines["migrations"].startswith("FAIL")
    assert "no migration" in lines["migrations"] and "context-engine migrate" in lines["migrations"]
    assert lines["database"].startswith("ok")


def test_a_missing_database_file_is_a_problem_and_is_not_created(
    monkeypatch, capsys, tmp_path: Path
) -> None:
    status, lines = check(monkeypatch, capsys, tmp_path / "nowhere.db")
    assert (
        status == 1
        and lines["database"].startswith("FAIL")
        and "does not exist" in lines["database"]
    )
    assert not (tmp_path / "nowhere.db").exists()


def test_an_unreachable_llm_is_a_problem(monkeypatch, capsys, db_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    status, lines = check(
        monkeypatch, capsys, db_path, CE_LLM__BASE_URL=closed, CE_LLM__MODEL="gpt-x"
    )
    assert status == 1
    assert lines["llm"].startswith("FAIL") and "unreachable" in lines["llm"]
    assert all(line.startswith("ok") for name, line in lines.items() if name != "llm"), lines


def test_invalid_configuration_is_a_problem(monkeypatch, capsys, db_path: Path) -> None:
    status, lines = check(monkeypatch, capsys, db_path, CE_PORT="not-a-port")
    assert status == 1 and lines["config"].startswith("FAIL") and "CE_PORT" in lines["config"]


@pytest.mark.slow
def test_a_missing_sqlite_extension_is_a_problem(tmp_path: Path, db_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sqlite_vec.py").write_text(FAKE_SQLITE_VEC)
    database = tmp_path / "copy.db"
    shutil.copyfile(db_path, database)
    result = run_cli("check", env=cli_env(database, PYTHONPATH=str(shim)))
    assert result.returncode == 1, result.stdout + result.stderr
    lines = {line.split()[1]: line for line in result.stdout.splitlines()}
    assert (
        lines["extensions"].startswith("FAIL")
        and "sqlite-vec cannot be loaded" in lines["extensions"]
    )
    assert lines["config"].startswith("ok")


def check_postgres(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str
) -> tuple[int, dict[str, str]]:
    for key, value in {"CE_DATABASE_URL": url, "CE_EMBEDDING__PROVIDER": "none"}.items():
        monkeypatch.setenv(key, value)
    status = main(["check"])
    lines = capsys.readouterr().out.splitlines()
    return status, {line.split()[1]: line for line in lines}


def test_a_migrated_postgresql_database_is_ok(monkeypatch, capsys, server, postgres_template):  # type: ignore[no-untyped-def]
    url = server.create_database(template=postgres_template)
    try:
        status, lines = check_postgres(monkeypatch, capsys, url)
        assert status == 0, lines
        assert "PostgreSQL 15" in lines["database"]
        assert "vector " in lines["extensions"] and "pg_trgm " in lines["extensions"]
        assert lines["migrations"].split()[0] == "ok"
    finally:
        server.drop_database(url)


def test_postgresql_without_pgvector_or_migrations_is_a_problem(monkeypatch, capsys, server):  # type: ignore[no-untyped-def]
    import psycopg

    url = server.create_database()
    try:
        with psycopg.connect(
            host=str(server.socket_dir), user="postgres", dbname=server.database_name(url)
        ) as conn:
            conn.execute("DROP EXTENSION vector")
        status, lines = check_postgres(monkeypatch, capsys, url)
        assert status == 1
        assert lines["database"].split()[0] == "ok"
        assert lines["extensions"].split()[0] == "FAIL" and "vector" in lines["extensions"]
        assert lines["migrations"].split()[0] == "FAIL"
    finally:
        server.drop_database(url)
