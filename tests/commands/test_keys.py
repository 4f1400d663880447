"""``keys create|list|revoke``: stored keys, hashed; the key is printed once and works at once."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from app.cli import main
from app.settings import Settings
from tests.conftest import app_client

KEY = re.compile(r"ce_[A-Za-z0-9_-]{40,}")


@pytest.fixture
def database(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CE_DATABASE_URL", f"sqlite:///{db_path}")
    monkeypatch.delenv("CE_API_KEYS", raising=False)
    return db_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def stored_rows(db: Path) -> list[tuple[str, ...]]:
    with closing(sqlite3.connect(db)) as conn:  # `with` on a connection alone does not close it
        return conn.execute("SELECT * FROM api_keys").fetchall()


async def test_a_created_key_works_at_once_and_stops_when_revoked(
    database: Path, capsys: pytest.CaptureFixture[str], make_settings: Callable[..., Settings]
) -> None:
    status, out, err = run(capsys, "keys", "create", "--tenant", "acme", "--name", "ci bot")
    key = out.strip()
    assert status == 0 and KEY.fullmatch(key), out
    assert "shown once" in err and key not in err
    # Only the hash is stored: no column holds the key.
    assert not any(key in str(value) for row in stored_rows(database) for value in row)

    assert run(capsys, "keys", "create", "--tenant", "globex")[0] == 0  # keys stay required
    headers = {"Authorization": f"Bearer {key}"}
    async with app_client(make_settings()) as client:
        assert (await client.get("/memories", headers=headers)).status_code == 200
        assert (await client.get("/memories")).status_code == 401
        status, out, _ = run(capsys, "keys", "revoke", key[:12])
        assert status == 0 and "revoked" in out
        assert (await client.get("/memories", headers=headers)).status_code == 401


def test_create_json_list_and_revoke_by_id(
    database: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out, _ = run(
        capsys, "keys", "create", "--tenant", "acme", "--scope", "memories:read-sensitive", "--json"
    )
    created = json.loads(out)
    assert status == 0 and KEY.fullmatch(created["key"])
    assert created["tenantId"] == "acme" and created["scopes"] == "memories:read-sensitive"
    assert created["prefix"] == created["key"][:12] and created["revokedAt"] is None
    monkeypatch.setenv("CE_API_KEYS", "env-secret-key:globex")

    status, out, _ = run(capsys, "keys", "list")
    assert status == 0 and "acme" in out and "globex" in out and created["prefix"] in out
    assert created["key"] not in out and "env-secret-key" not in out  # prefixes and fingerprints

    status, out, _ = run(capsys, "keys", "revoke", str(created["keyId"]))
    assert status == 0 and f"key {created['keyId']}" in out
    status, out, _ = run(capsys, "keys", "revoke", str(created["keyId"]))
    assert status == 0 and "already revoked" in out

    status, out, _ = run(capsys, "keys", "list", "--json")
    records = [json.loads(line) for line in out.splitlines()]
    [stored] = [r for r in records if r["source"] == "database"]
    [entry] = [r for r in records if r["source"] == "CE_API_KEYS"]
    assert stored["keyId"] == created["keyId"] and stored["revokedAt"] is not None
    assert entry["tenantId"] == "globex" and "env-secret-key" not in json.dumps(entry)


def test_bad_input_is_one_line_and_stores_nothing(
    database: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "keys", "create", "--tenant", "bad tenant!")[0] == 1
    status, _, err = run(capsys, "keys", "revoke", "ce_nosuchkey")
    assert status == 1 and "not found" in err
    assert run(capsys, "keys", "revoke", "c")[0] == 1
    assert stored_rows(database) == []
    status, out, _ = run(capsys, "keys", "list")
    assert status == 0 and out.startswith("no API keys")


def test_an_ambiguous_prefix_revokes_nothing(
    database: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tails = iter(["first" * 9, "second" * 8])
    monkeypatch.setattr("app.keys.service.new_key", lambda: "ce_SAMEPREFIX" + next(tails))
    for _ in range(2):
        assert run(capsys, "keys", "create", "--tenant", "acme")[0] == 0
    status, _, err = run(capsys, "keys", "revoke", "ce_SAME")
    assert status == 1 and "2 keys" in err
    assert all(row[-1] is None for row in stored_rows(database))
