"""The operator commands on a seeded database: jobs, worker, sessions, memories, keys."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from app.api.schemas.memories import ImportRecord
from app.cli import main
from tests.console.seed import FAILURE, OTHER_SESSION, SESSION, seed


@pytest.fixture(scope="module")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("admin") / "seeded.db"
    asyncio.run(seed(path))
    return path


@pytest.fixture
def database(seeded_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "admin.db"
    # The backup API copies what the WAL holds too; a file copy would not.
    # Closed explicitly: `with` on a connection alone does not close it.
    with (
        closing(sqlite3.connect(seeded_template)) as source,
        closing(sqlite3.connect(path)) as target,
    ):
        source.backup(target)
    monkeypatch.setenv("CE_DATABASE_URL", f"sqlite:///{path}")
    monkeypatch.setenv("CE_EMBEDDING__PROVIDER", "none")
    monkeypatch.setenv("CE_WORKER__POLL_INTERVAL_MS", "20")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def failed_job(capsys: pytest.CaptureFixture[str]) -> dict:
    status, out, _ = run(capsys, "jobs", "list", "--status", "failed", "--json")
    assert status == 0
    [job] = json_lines(out)
    return job


def test_jobs_list_retry_then_a_worker_process_finishes_the_archive(database: Path, capsys) -> None:
    job = failed_job(capsys)
    assert (job["sessionId"], job["archiveId"], job["error"]) == (SESSION, "archive_003", FAILURE)
    status, out, _ = run(capsys, "jobs", "list")
    assert status == 0 and "archive_003" in out and "failed" in out and out.startswith("JOB")

    assert (
        run(capsys, "jobs", "retry", str(job["jobId"]), "--tenant", "globex")[0] == 1
    )  # not that tenant's
    assert (
        run(capsys, "jobs", "retry", str(job["jobId"]))[1] == f"job {job['jobId']} queued again\n"
    )
    status, _, err = run(capsys, "jobs", "retry", str(job["jobId"]))
    assert status == 1 and "only failed or cancelled jobs can be retried" in err

    assert run(capsys, "worker", "--until-idle")[0] == 0
    _, out, _ = run(capsys, "jobs", "list", "--status", "succeeded", "--json")
    assert job["jobId"] in [j["jobId"] for j in json_lines(out)]
    _, out, _ = run(capsys, "sessions", "show", SESSION, "--tenant", "acme", "--json")
    assert [a["status"] for a in json.loads(out)["archives"]] == ["completed"] * 4


def test_cancel_a_queued_job_fails_its_archive_and_retry_brings_it_back(
    database: Path, capsys
) -> None:
    job = failed_job(capsys)
    run(capsys, "jobs", "retry", str(job["jobId"]))
    assert run(capsys, "jobs", "cancel", str(job["jobId"]))[1] == f"job {job['jobId']} cancelled\n"
    _, out, _ = run(capsys, "sessions", "show", SESSION, "--tenant", "acme", "--json")
    third = json.loads(out)["archives"][2]
    assert (third["status"], third["error"], third["errorStage"]) == (
        "failed",
        "cancelled by an operator",
        "cancelled",
    )
    status, _, err = run(capsys, "jobs", "cancel", str(job["jobId"]))
    assert status == 1 and "only queued or running jobs can be cancelled" in err
    assert run(capsys, "jobs", "retry", str(job["jobId"]))[0] == 0


def test_sessions_list_show_and_export(database: Path, capsys, tmp_path: Path) -> None:
    _, out, _ = run(capsys, "sessions", "list", "--json")
    assert {(s["tenantId"], s["sessionId"]) for s in json_lines(out)} == {
        ("acme", SESSION),
        ("acme", OTHER_SESSION),
        ("globex", "globex-secret"),
    }
    _, out, _ = run(capsys, "sessions", "list", "--tenant", "acme", "--search", "BILL")
    assert OTHER_SESSION in out and SESSION not in out and "globex" not in out

    status, out, _ = run(capsys, "sessions", "show", SESSION, "--tenant", "acme")
    assert status == 0 and f"sessionId: {SESSION}" in out and "archive_003  failed" in out
    assert run(capsys, "sessions", "show", SESSION)[0] == 1  # tenant default has no such session

    target = tmp_path / "session.jsonl"
    status, _, err = run(
        capsys, "sessions", "export", SESSION, "--tenant", "acme", "--output", str(target)
    )
    records = json_lines(target.read_text())
    assert status == 0 and "14 messages" in err
    assert [r["type"] for r in records] == ["session"] + ["archive"] * 4 + ["message"] * 14
    messages = [r for r in records if r["type"] == "message"]
    assert [m["seq"] for m in messages] == list(range(1, 15))
    assert [m["archiveId"] for m in messages][:4] == ["archive_001"] * 4 and messages[-1][
        "archiveId"
    ] is None
    assert messages[-1]["message"]["content"][0]["text"] == "Yes: all pods run v1.4.2."
    assert records[1]["overview"].startswith("# Working Memory")


def test_memories_export_then_import_into_another_tenant_twice(
    database: Path, capsys, tmp_path: Path
) -> None:
    exported = tmp_path / "memories.jsonl"
    status, _, err = run(
        capsys, "memories", "export", "--tenant", "acme", "--output", str(exported)
    )
    records = json_lines(exported.read_text())
    assert status == 0 and "4/4 100%" in err
    assert sorted(r["category"] for r in records) == [
        "entities",
        "events",
        "experiences",
        "preferences",
    ]
    for record in records:
        ImportRecord.model_validate(record)  # the format /memories/import takes

    status, _, err = run(capsys, "memories", "import", str(exported), "--tenant", "copy")
    assert status == 0 and "done: 4 imported, 0 already there" in err
    status, _, err = run(capsys, "memories", "import", str(exported), "--tenant", "copy")
    assert status == 0 and "done: 0 imported, 4 already there" in err
    _, out, _ = run(capsys, "memories", "export", "--tenant", "copy")
    copies = json_lines(out)
    # The ids belong to tenant acme: the copies got ids of their own, the same on every run.
    assert {r["content"] for r in copies} == {r["content"] for r in records}
    assert not {r["id"] for r in copies} & {r["id"] for r in records}


def test_a_bad_line_imports_nothing(database: Path, capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a", "uri": "u", "category": "entities", "content": "x", "ownerKind": "user", "ownerId": "u"}\n'
        "not json\n"
    )
    status, _, err = run(capsys, "memories", "import", str(bad), "--tenant", "fresh")
    assert status == 1 and "line 2 is not JSON" in err
    _, out, _ = run(capsys, "memories", "export", "--tenant", "fresh")
    assert out == ""


def test_commands_refuse_an_unmigrated_database(tmp_path: Path, monkeypatch, capsys) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    monkeypatch.setenv("CE_DATABASE_URL", f"sqlite:///{empty}")
    status, _, err = run(capsys, "jobs", "list")
    assert status == 1 and "run `context-engine migrate` first" in err


def test_keys_new_and_list(database: Path, monkeypatch, capsys) -> None:
    status, out, _ = run(
        capsys, "keys", "new", "--tenant", "acme", "--scope", "memories:read-sensitive"
    )
    entry = out.strip()
    assert status == 0 and re.fullmatch(
        r"ce_[A-Za-z0-9_-]{40,}:acme:memories:read-sensitive", entry
    )
    monkeypatch.setenv("CE_API_KEYS", f"{entry},other-key:globex")
    status, out, _ = run(capsys, "keys", "list")
    assert status == 0 and "acme" in out and "globex" in out and "memories:read-sensitive" in out
    assert entry.split(":")[0] not in out and "other-key" not in out  # fingerprints only
    assert run(capsys, "keys", "new", "--tenant", "bad tenant!")[0] == 1
