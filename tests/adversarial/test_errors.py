"""Every failure says what it is: 400 for malformed ids, regexes and types; 503 STORAGE_UNAVAILABLE
with Retry-After for a full disk or a read-only database, /readyz failing meanwhile, Phase 2
recording the failure and retrying; one clear line when start-up cannot use the database."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest
from sqlalchemy import Engine, event

from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.messages import assistant, user

ROOT = Path(__file__).resolve().parents[2]


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]  # type: ignore[no-any-return]


async def archived_session(client: httpx.AsyncClient, session_id: str = "s-err") -> None:
    await client.post(
        "/after-turn",
        json={"sessionId": session_id, "messages": [user("deploy failed"), assistant("retrying")]},
    )
    commit = await client.post(
        f"/sessions/{session_id}/commit", json={"keepRecentCount": 0, "wait": True}
    )
    assert commit.json()["archive"]["status"] == "completed"


# --- malformed ids, regexes and types ------------------------------------------------------------


@pytest.mark.parametrize(
    "archive_id",
    [
        "archive_" + "9" * 20,
        "archive_1234567890",
        "archive_abc",
        "archive_",
        "001",
        "ARCHIVE_001",
        "archive_٣",
    ],
)
async def test_a_malformed_archive_id_is_400(client: httpx.AsyncClient, archive_id: str) -> None:
    # A 20-digit number was a 500: the integer overflowed on its way to SQLite.
    await archived_session(client)
    expand = await client.get(f"/archives/{archive_id}", params={"sessionId": "s-err"})
    assert assert_envelope(expand, 400, "INVALID_ARGUMENT")["details"]["errors"][0]["loc"] == [
        "path",
        "archiveId",
    ]
    search = await client.post(
        "/archives/search", json={"sessionId": "s-err", "query": "deploy", "archiveId": archive_id}
    )
    assert_envelope(search, 400, "INVALID_ARGUMENT")


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (
            "(" * 500 + "a" + ")" * 500,
            "regex_too_deep",
        ),  # was a 500: RecursionError while compiling
        ("[" * 1000, "regex_too_deep"),
        (
            "((a{1000}){1000}){1000}",
            "regex_too_large",
        ),  # compiling it would take the machine's memory
        ("(a{1000}){300}", "regex_too_large"),
    ],
)
async def test_a_pathological_regex_is_400_with_its_reason(
    client: httpx.AsyncClient, pattern: str, reason: str
) -> None:
    await archived_session(client)
    response = await client.post(
        "/archives/search", json={"sessionId": "s-err", "query": pattern, "mode": "regex"}
    )
    assert assert_envelope(response, 400, "INVALID_ARGUMENT")["details"]["reason"] == reason
    fine = await client.post(
        "/archives/search", json={"sessionId": "s-err", "query": r"deploy\s+fail", "mode": "regex"}
    )
    assert fine.status_code == 200 and fine.json()["count"] >= 1


TURN = {"sessionId": "s-types", "messages": [{"role": "user", "content": "hello", "timestamp": 1}]}


@pytest.mark.parametrize(
    ("path", "change", "field"),
    [
        ("/after-turn", {"isHeartbeat": 0}, "isHeartbeat"),
        ("/after-turn", {"isHeartbeat": "true"}, "isHeartbeat"),
        ("/after-turn", {"tokenBudget": False}, "tokenBudget"),
        ("/after-turn", {"prePromptMessageCount": True}, "prePromptMessageCount"),
        ("/after-turn", {"prePromptMessageCount": "1"}, "prePromptMessageCount"),
        ("/assemble", {"tokenBudget": False}, "tokenBudget"),
        ("/assemble", {"prompt": 5}, "prompt"),
        ("/assemble", {"options": {"recallLimit": False}}, "recallLimit"),
        ("/assemble", {"options": {"agentExperience": {"enabled": "yes"}}}, "enabled"),
        ("/compact", {"timeoutMs": False}, "timeoutMs"),
        ("/compact", {"wait": 1}, "wait"),
        ("/compact", {"force": "no"}, "force"),
    ],
)
async def test_a_wrongly_typed_hook_field_is_400_and_stores_nothing(
    client: httpx.AsyncClient, path: str, change: dict[str, Any], field: str
) -> None:
    response = await client.post(path, json={**TURN, **change})
    errors = assert_envelope(response, 400, "INVALID_ARGUMENT")["details"]["errors"]
    assert any(field in error["loc"] for error in errors), errors
    assert (await client.get("/sessions/s-types")).status_code == 404


async def test_hook_bodies_stay_permissive_where_the_service_interprets_nothing(
    client: httpx.AsyncClient,
) -> None:
    body = {
        **TURN,
        "prePromptMessageCount": 0.0,
        "isHeartbeat": None,
        "someNewHostField": {"any": [1, "x"]},
        "runtimeContext": {"tokenBudget": False},
    }
    response = await client.post("/after-turn", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["ingested"] == 1
    options = {"recallLimit": 3.0, "futureOption": "ignored"}
    assemble = await client.post("/assemble", json={**TURN, "options": options})
    assert assemble.status_code == 200, assemble.text


# --- storage full or read-only -------------------------------------------------------------------


class StorageSwitch:
    """Makes every connection an engine hands out meet a full disk or a read-only file, and back."""

    def __init__(self, engine: Engine) -> None:
        self.mode = "ok"
        # On checkout, before any BEGIN: a connection left read-only could not even begin otherwise.
        event.listen(engine, "checkout", self._apply)

    def _apply(self, dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        cursor = dbapi_connection.cursor()
        pages = cursor.execute("PRAGMA page_count").fetchone()[0]
        # A full disk as SQLite meets it: no page may be added (SQLITE_FULL).
        cursor.execute(f"PRAGMA max_page_count = {pages if self.mode == 'full' else 1073741823}")
        # A read-only file (SQLITE_READONLY) without touching the file's permissions.
        cursor.execute(f"PRAGMA query_only = {'ON' if self.mode == 'read_only' else 'OFF'}")
        cursor.close()


async def ready(client: httpx.AsyncClient) -> httpx.Response:
    return await client.get("/readyz")


@pytest.mark.parametrize(("mode", "reason"), [("full", "disk_full"), ("read_only", "read_only")])
async def test_storage_failure_is_503_with_retry_after_and_readyz_fails_meanwhile(
    make_settings: Callable[..., Settings], mode: str, reason: str
) -> None:
    context = app_client(make_settings(db={"storage_retry_after_s": 1}))
    async with context as client:
        switch = StorageSwitch(context.app.state.services.uow.engine)
        assert (
            await client.post(
                "/after-turn", json={"sessionId": "s-disk", "messages": [user("before")]}
            )
        ).status_code == 200
        switch.mode = mode
        big = [user("x " * 100_000)]
        for response in (
            await client.post("/after-turn", json={"sessionId": "s-disk", "messages": big}),
            await client.post("/memories", json={"content": "y " * 40_000, "category": "events"}),
        ):
            error = assert_envelope(response, 503, "STORAGE_UNAVAILABLE")  # was 500 INTERNAL
            assert error["details"] == {"reason": reason}
            assert response.headers["retry-after"] == "1"
        not_ready = await ready(client)
        assert (
            not_ready.status_code == 503
            and "storage unavailable" in not_ready.json()["error"]["message"]
        )
        assert (await client.get("/sessions/s-disk")).json()[
            "messageCount"
        ] == 1  # reads still work
        switch.mode = "ok"
        await asyncio.sleep(1.1)  # the Retry-After the service asked for
        assert (await ready(client)).status_code == 200
        again = await client.post("/after-turn", json={"sessionId": "s-disk", "messages": big})
        assert again.status_code == 200 and again.json()["ingested"] == 1


def job_row(db_path: Path) -> dict[str, Any]:
    conn = sqlite.connect(str(db_path))
    try:
        row = conn.execute(
            "SELECT status, attempts, last_error FROM jobs ORDER BY id DESC LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    return dict(zip(("status", "attempts", "last_error"), row, strict=True)) if row else {}


async def test_phase2_records_a_storage_failure_and_retries_without_spending_an_attempt(
    make_settings: Callable[..., Settings], db_path: Path
) -> None:
    # Phase 2 could not record its failure: the archive sat "running" until the lease expired.
    settings = make_settings(
        db={"storage_retry_after_s": 1}, worker={"fault_delay_ms": 500, "max_attempts": 1}
    )
    context = app_client(settings)
    async with context as client:
        switch = StorageSwitch(context.app.state.services.uow.engine)
        await client.post(
            "/after-turn",
            json={"sessionId": "s-p2", "messages": [user("deploy the api"), assistant("done")]},
        )
        commit = await client.post(
            "/sessions/s-p2/commit", json={"keepRecentCount": 0, "wait": False}
        )
        assert commit.json()["status"] == "accepted"
        await until(lambda: job_row(db_path).get("status") == "running")
        switch.mode = (
            "read_only"  # the job holds its claim for 500 ms: its results cannot be written
        )
        await asyncio.sleep(1.5)  # the write fails, recording the failure fails and is retried
        switch.mode = "ok"
        await until(lambda: job_row(db_path).get("status") == "succeeded", timeout_s=20)
        session = (await client.get("/sessions/s-p2")).json()
    assert session["archives"][0]["status"] == "completed"
    job = job_row(db_path)
    # One attempt in all although the job ran twice (max_attempts 1 would have failed it otherwise).
    assert job["attempts"] == 1
    assert "readonly" in job["last_error"] or "read-only" in job["last_error"]


async def until(condition: Callable[[], bool], timeout_s: float = 10) -> None:
    """A hang guard, not a timing assertion: the condition is polled until it holds."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition never held"
        await asyncio.sleep(0.02)


# --- start-up ------------------------------------------------------------------------------------


def run_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CE_")}
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def migrated(path: Path) -> Path:
    engine = create_db_engine(Settings(database_url=f"sqlite:///{path}"))
    upgrade_to_head(engine)
    engine.dispose()
    return path


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (
            lambda tmp: f"sqlite:///file:{migrated(tmp / 'ro.db')}?mode=ro&uri=true",
            "cannot be written",
        ),
        (lambda tmp: f"sqlite:///{(tmp / 'dir.db').mkdir() or tmp / 'dir.db'}", "cannot be opened"),
        (
            lambda tmp: (
                f"sqlite:///{(tmp / 'bad.db').write_text('not a database' * 100) and tmp / 'bad.db'}"
            ),
            "not a database",
        ),
        (
            lambda tmp: (
                f"sqlite:///{(tmp / 'file').write_text('x') and tmp / 'file' / 'sub' / 'ce.db'}"
            ),
            "cannot create the directory",
        ),
    ],
)
@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_an_unusable_database_stops_start_up_with_one_line(
    tmp_path: Path, url: Any, says: str, command: str
) -> None:
    # A read-only database file made start-up exit with a traceback.
    done = run_cli(command, CE_DATABASE_URL=url(tmp_path), CE_EMBEDDING__PROVIDER="none")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_an_empty_api_key_stops_start_up_without_printing_the_keys() -> None:
    # CE_API_KEYS=":t" let "Authorization: Bearer " in.
    done = run_cli("serve", CE_API_KEYS="k3y-of-tenant-a:a,:t")
    assert done.returncode == 2
    assert (
        done.stderr.startswith("error: invalid settings: CE_API_KEYS:")
        and "empty key" in done.stderr
    )
    assert "k3y-of-tenant-a" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
