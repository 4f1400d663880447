"""`import openclaw|claude-code|codex`: the real host's store through the command line, 10,000
messages with a progress bar, a SIGKILL half-way and the same command run again, bad lines."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pysqlite3.dbapi2 as sqlite
import pytest

from tests.commands.cli import RunningCommand, cli_env, run_cli
from tests.helpers.host_store import FIXTURE, live_stored
from tests.helpers.transcripts import write_sessions

pytestmark = pytest.mark.slow
N_SESSIONS, PER_SESSION = 20, 500
N = N_SESSIONS * PER_SESSION
BATCH = 50


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite.connect(str(db))
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


def summary_of(stdout: str) -> dict[str, object]:
    return dict(json.loads(stdout.strip().splitlines()[-1]))


@pytest.fixture
def db(tmp_path: Path, migrated_template: Path) -> Path:
    path = tmp_path / "ce.db"
    shutil.copyfile(migrated_template, path)
    return path


def test_the_real_host_store_is_stored_as_the_live_hooks_stored_it(db: Path) -> None:
    done = run_cli("import", "openclaw", str(FIXTURE), env=cli_env(db))
    assert done.returncode == 0, done.stderr
    assert summary_of(done.stdout)["messages"] == 12
    assert "12/12 100%" in done.stderr and "done: 1 sessions, 12 messages stored" in done.stderr
    stored = rows(
        db,
        "SELECT s.session_id, s.session_key, s.agent_id, m.seq, m.role, m.body, m.created_at "
        "FROM messages m JOIN agent_sessions s ON s.id = m.session_pk ORDER BY m.seq",
    )
    live = live_stored()
    assert [(r[0], r[1], r[2]) for r in stored] == [
        (row["sessionId"], "agent:main:import-fixture", "main") for row in live
    ]
    assert [(r[3], r[4]) for r in stored] == [(row["seq"], row["role"]) for row in live]
    assert [json.loads(str(r[5])) for r in stored] == [row["message"] for row in live]
    for (*_, created), row in zip(stored, live, strict=True):
        # Stored at the host's own time, which the hooks stored within the turn's seconds.
        host_time = datetime.fromtimestamp(row["message"]["timestamp"] / 1000, UTC)
        assert _utc(str(created)) == host_time
        assert 0 <= (_utc(row["storedAt"]) - host_time).total_seconds() < 60


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_importing_twice_stores_nothing(db: Path) -> None:
    assert run_cli("import", "openclaw", str(FIXTURE), env=cli_env(db)).returncode == 0
    again = run_cli("import", "openclaw", str(FIXTURE), env=cli_env(db))
    assert again.returncode == 0, again.stderr
    summary = summary_of(again.stdout)
    assert (summary["messages"], summary["duplicates"], summary["archives"]) == (0, 12, 0)
    assert rows(db, "SELECT count(*) FROM messages") == [(12,)]


@dataclass
class KilledImport:
    db: Path
    killed_at: int
    stored_when_killed: int
    resumed: dict[str, object]
    resumed_stderr: str


@pytest.fixture(scope="module")
def killed_import(
    tmp_path_factory: pytest.TempPathFactory, migrated_template: Path
) -> KilledImport:
    """Import 10,000 messages in 20 sessions, SIGKILL the command half-way, run it again."""
    folder = tmp_path_factory.mktemp("import")
    write_sessions(folder / "store", N_SESSIONS, PER_SESSION)
    db = folder / "ce.db"
    shutil.copyfile(migrated_template, db)
    args = ("import", "openclaw", str(folder / "store"), "--batch", str(BATCH))
    first = RunningCommand(*args, env=cli_env(db))
    killed_at = first.wait_for_progress(1000, timeout=120)
    first.kill()
    stored = int(str(rows(db, "SELECT count(*) FROM messages")[0][0]))
    second = run_cli(*args, env=cli_env(db), timeout=300)
    assert second.returncode == 0, second.stderr
    return KilledImport(db, killed_at, stored, summary_of(second.stdout), second.stderr)


def test_a_killed_import_run_again_ends_with_one_copy_of_each_message(
    killed_import: KilledImport,
) -> None:
    run = killed_import
    assert 1000 <= run.killed_at < N and 0 < run.stored_when_killed < N
    assert run.resumed["messages"] == N - run.stored_when_killed
    assert run.resumed["duplicates"] == run.stored_when_killed
    assert rows(run.db, "SELECT count(*) FROM messages") == [(N,)]
    # Exactly one copy: no session holds a message twice, and every sequence is gapless.
    assert rows(
        run.db, "SELECT count(*) FROM (SELECT DISTINCT session_pk, fingerprint FROM messages)"
    ) == [(N,)]
    per_session = rows(
        run.db, "SELECT count(*), min(seq), max(seq) FROM messages GROUP BY session_pk"
    )
    assert per_session == [(PER_SESSION, 1, PER_SESSION)] * N_SESSIONS


def test_ten_thousand_messages_import_with_a_progress_bar(killed_import: KilledImport) -> None:
    progress = [line for line in killed_import.resumed_stderr.splitlines() if "import: [" in line]
    assert progress[-1].startswith(f"import: [{'#' * 30}] {N}/{N} 100%")
    assert "done: 20 sessions" in progress[-1]
    # Every session was archived down to its live window (10, and the tool call whose result
    # the window keeps), for Phase 2 to summarise.
    live = rows(killed_import.db, "SELECT count(*) FROM messages WHERE archive_pk IS NULL")
    assert live == [(N_SESSIONS * 11,)]
    assert rows(killed_import.db, "SELECT count(*) FROM jobs") == [(N_SESSIONS,)]


def test_bad_lines_are_reported_by_file_and_line_and_the_rest_is_stored(
    db: Path, tmp_path: Path
) -> None:
    write_sessions(tmp_path / "store", 1, 8)
    file = next((tmp_path / "store").glob("**/*.jsonl"))
    lines = file.read_text().splitlines()
    lines[3] = lines[3][:40]
    lines.insert(6, "not json at all")
    file.write_text("\n".join(lines) + "\n")
    done = run_cli("import", "openclaw", str(tmp_path / "store"), env=cli_env(db))
    assert done.returncode == 0, done.stderr
    assert f"skipped {file}:4: not JSON" in done.stderr
    assert f"skipped {file}:7: not JSON" in done.stderr
    summary = summary_of(done.stdout)
    assert [(p["source"], p["line"]) for p in summary["problems"]] == [  # type: ignore[union-attr]
        (str(file), 4),
        (str(file), 7),
    ]
    assert summary["messages"] == 7


def test_claude_code_and_codex_import_from_their_folders(db: Path) -> None:
    fixtures = FIXTURE.parent
    claude = run_cli("import", "claude-code", str(fixtures / "claude-code"), env=cli_env(db))
    codex = run_cli("import", "codex", str(fixtures / "codex"), env=cli_env(db))
    assert claude.returncode == 0 and codex.returncode == 0, claude.stderr + codex.stderr
    assert summary_of(claude.stdout)["messages"] == summary_of(codex.stdout)["messages"] == 4
    assert "claude-code" in claude.stderr and ".jsonl:8: not JSON" in claude.stderr
    assert rows(db, "SELECT count(DISTINCT session_pk) FROM messages") == [(2,)]


def test_a_missing_path_is_one_line_of_error(db: Path, tmp_path: Path) -> None:
    done = run_cli("import", "codex", str(tmp_path / "nowhere"), env=cli_env(db))
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {tmp_path / 'nowhere'} does not exist"
