"""A database with what the console shows: sessions with archives and tool calls, two Working
Memory versions to compare, a failed Phase 2 job, memories of several categories."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from app.core.clock import utcnow
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.uow import UnitOfWork
from app.jobs import repository as queue
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.messages import assistant, tool_call, tool_result, user

TENANT_KEY = "acme-console-key"
OTHER_KEY = "globex-console-key"
API_KEYS = f"{TENANT_KEY}:acme,{OTHER_KEY}:globex"
SESSION = "deploy-review"
OTHER_SESSION = "billing-cutover"
FAILURE = "TransientProviderError: the LLM answered 503 four times"
AUTH = {"Authorization": f"Bearer {TENANT_KEY}"}


def seed_settings(db: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": f"sqlite:///{db}",
        "api_keys": API_KEYS,
        "embedding": {"provider": "none"},
        "worker": {"poll_interval_ms": 20},
    }
    return Settings(**{**values, **overrides})


def first_turns() -> list[dict[str, Any]]:
    return [
        user("The deploy of api v1.4 failed at 14:00; config is in deploy/prod.yaml"),
        tool_call(
            "t1", "exec", {"command": "kubectl logs deploy/api --tail 20"}, text="Reading the logs."
        ),
        tool_result(
            "t1", "exec", "Error: ImagePullBackOff for registry.local/api:v1.4", is_error=True
        ),
        assistant("The image tag v1.4 does not exist. TODO: pin the tag in deploy/prod.yaml"),
    ]


def second_turns() -> list[dict[str, Any]]:
    return [
        user(
            "We decided to pin v1.4.2 because v1.4 was never pushed. Update deploy/prod.yaml and charts/api/values.yaml"
        ),
        tool_call(
            "t2",
            "edit",
            {"path": "deploy/prod.yaml", "replace": {"image": "registry.local/api:v1.4.2"}},
        ),
        tool_result("t2", "edit", "deploy/prod.yaml: 1 line changed"),
        assistant(
            "Pinned v1.4.2 in deploy/prod.yaml. Open issue: charts/api/values.yaml still says v1.4"
        ),
    ]


async def _commit(
    client: httpx.AsyncClient, session: str, messages: list[dict[str, Any]], wait: bool
) -> dict[str, Any]:
    stored = await client.post(
        "/after-turn",
        headers=AUTH,
        json={"sessionId": session, "sessionKey": "agent:main:cli:7", "messages": messages},
    )
    assert stored.status_code == 200, stored.text
    answer = await client.post(
        f"/sessions/{session}/commit", headers=AUTH, json={"keepRecentCount": 0, "wait": wait}
    )
    assert answer.json()["status"] == "accepted", answer.text
    return answer.json()


async def _seed_completed(db: Path, history: list[dict[str, Any]]) -> None:
    async with app_client(seed_settings(db)) as client:
        history += first_turns()
        assert (await _commit(client, SESSION, history, True))["archive"]["status"] == "completed"
        history += second_turns()
        assert (await _commit(client, SESSION, history, True))["archive"]["status"] == "completed"
        await _commit(
            client,
            OTHER_SESSION,
            [
                user("Move billing to the new ledger on Friday"),
                assistant("Noted: billing cutover on Friday."),
            ],
            True,
        )
        for content, category in (
            ("The user prefers green tea in the afternoon", "preferences"),
            ("Production database is db-prod-7 in eu-west-1", "entities"),
            ("Deploys are frozen after 14:00 on Fridays", "events"),
            (
                "To fix ImagePullBackOff, check that the image tag was pushed before editing manifests",
                "experiences",
            ),
        ):
            made = await client.post(
                "/memories", headers=AUTH, json={"content": content, "category": category}
            )
            assert made.json()["action"] == "ADD", made.text
        other = {"Authorization": f"Bearer {OTHER_KEY}"}
        await client.post(
            "/after-turn",
            headers=other,
            json={"sessionId": "globex-secret", "messages": [user("globex only")]},
        )


async def _seed_failed(db: Path, history: list[dict[str, Any]]) -> None:
    """A third archive whose job ran out of attempts, and live messages after it."""
    async with app_client(seed_settings(db, worker={"enabled": False})) as client:
        history += [
            user("Rollout of v1.4.2 to eu-west-1 next; watch db-prod-7 connections"),
            assistant("Rolling out now."),
        ]
        await _commit(client, SESSION, history, False)
        engine = create_db_engine(seed_settings(db))
        uow = UnitOfWork(engine)
        now = utcnow()
        with uow.write() as session:
            job = queue.claim_next(session, "seed-worker", now, timedelta(seconds=60))
            assert job is not None
            queue.mark_failed(session, job, FAILURE, "working_memory", now)
        engine.dispose()


async def _seed_after_failure(db: Path, history: list[dict[str, Any]]) -> None:
    """A fourth archive that completes although the third failed, then live messages."""
    async with app_client(seed_settings(db)) as client:
        history += [
            user(
                "Rollout finished in eu-west-1. Next: us-east-1 on Monday; check charts/api/values.yaml first"
            ),
            assistant("Planned: us-east-1 on Monday."),
        ]
        assert (await _commit(client, SESSION, history, True))["archive"]["status"] == "completed"
        history += [user("Is the rollout done?"), assistant("Yes: all pods run v1.4.2.")]
        await client.post(
            "/after-turn", headers=AUTH, json={"sessionId": SESSION, "messages": history}
        )


async def seed(db: Path) -> None:
    """Build the console's test database at ``db`` (migrated first)."""
    engine = create_db_engine(seed_settings(db))
    upgrade_to_head(engine)
    engine.dispose()
    history: list[dict[str, Any]] = []  # the host's transcript of SESSION, as it grows
    await _seed_completed(db, history)
    await _seed_failed(db, history)
    await _seed_after_failure(db, history)
    _fold_wal(db)


def _fold_wal(db: Path) -> None:
    """Move every committed write from the WAL into the database file: tests copy the file alone,
    and a connection a busy machine closed late can leave the last writes in the WAL."""
    conn = sqlite3.connect(db)
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.close()
    assert busy == 0, "a connection still holds the seeded database"
