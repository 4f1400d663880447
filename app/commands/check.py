"""``check``: is this installation ready to serve? One line per part, exit status 1 on a problem.

Parts: the configuration, the database, its migrations, the SQLite extensions, the embedding
model and the LLM. Nothing is created or migrated: a check only looks.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx
from pydantic import ValidationError

from app.commands.runtime import EXIT_OK, EXIT_PROBLEM
from app.db.backup import BackupError, sqlite_path
from app.db.engine import create_db_engine
from app.db.health import (
    ExtensionMissing,
    describe_postgres,
    extension_versions,
    is_postgres,
    ping,
    postgres_extensions,
    probe_postgres,
)
from app.db.migrate import current_and_head
from app.main import build_embedder
from app.settings import Settings

LLM_CHECK_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Outcome:
    ok: bool
    detail: str


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser(
        "check",
        help="check configuration, database, migrations, extensions, model and LLM",
        description="Print one line per part (ok or FAIL with the reason) and exit with status 1 when "
        "any part has a problem. Changes nothing.",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:  # noqa: ARG001 (every command takes its parsed arguments)
    try:
        settings = Settings()
    except ValidationError as exc:
        _report("config", Outcome(False, _settings_error(exc)))
        return EXIT_PROBLEM
    checks: list[tuple[str, Callable[[Settings], Outcome]]] = [
        ("config", check_config),
        ("database", check_database),
        ("migrations", check_migrations),
        ("extensions", check_extensions),
        ("model", check_model),
        ("llm", check_llm),
    ]
    healthy = True
    for name, check in checks:
        try:
            outcome = check(settings)
        except Exception as exc:  # noqa: BLE001 - a check that breaks is a problem to report, not a crash
            outcome = Outcome(False, _one_line(exc))
        _report(name, outcome)
        healthy = healthy and outcome.ok
    return EXIT_OK if healthy else EXIT_PROBLEM


def _report(name: str, outcome: Outcome) -> None:
    sys.stdout.write(f"{'ok  ' if outcome.ok else 'FAIL'}  {name:<11} {outcome.detail}\n")
    sys.stdout.flush()


def _one_line(exc: Exception) -> str:
    """The error in one line: the driver's own error rather than the ORM's wrapper and its notes."""
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).splitlines()[0] if str(cause) else ""
    return f"{cause.__class__.__name__}: {text}"


def _settings_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = "CE_" + "__".join(str(part).upper() for part in first.get("loc", ()))
    return f"{where}: {first.get('msg', 'invalid')}"


def check_config(settings: Settings) -> Outcome:
    try:
        settings.check_safe_to_serve()
    except ValueError as exc:
        return Outcome(False, str(exc))
    if settings.wm.mode == "llm" and not settings.llm.configured:
        return Outcome(False, "CE_WM__MODE=llm needs CE_LLM__BASE_URL and CE_LLM__MODEL")
    keys = (
        f"{len(settings.api_keys)} API keys" if settings.api_keys else "no API keys (loopback only)"
    )
    return Outcome(True, f"listening on {settings.host}:{settings.port}, {keys}")


def check_database(settings: Settings) -> Outcome:
    if is_postgres(settings.database_url):
        return Outcome(True, probe_postgres(settings, describe_postgres))
    path = _existing_database(settings)
    if isinstance(path, Outcome):
        return path
    engine = create_db_engine(settings)
    try:
        ping(engine)
    finally:
        engine.dispose()
    return Outcome(True, f"{path} ({path.stat().st_size} bytes)")


def check_migrations(settings: Settings) -> Outcome:
    path = None if is_postgres(settings.database_url) else _existing_database(settings)
    if isinstance(path, Outcome):
        return Outcome(False, "no database to look at")
    engine = create_db_engine(settings)
    try:
        current, head = current_and_head(engine)
    finally:
        engine.dispose()
    if current != head:
        return Outcome(
            False,
            f"the database is at {current or 'no migration'}, the code at {head}: "
            "run `context-engine migrate` (the service also migrates at start-up)",
        )
    return Outcome(True, f"at {head}")


def _existing_database(settings: Settings):  # type: ignore[no-untyped-def]
    try:
        path = sqlite_path(settings.database_url)
    except BackupError as exc:
        return Outcome(False, str(exc))
    if not path.exists():
        return Outcome(
            False, f"{path} does not exist: run `context-engine migrate` or start the service"
        )
    return path


def check_extensions(settings: Settings) -> Outcome:
    """sqlite-vec loads and this SQLite has FTS5 with the trigram tokenizer; on PostgreSQL, the
    database has pgvector and pg_trgm."""
    try:
        if is_postgres(settings.database_url):
            return Outcome(True, probe_postgres(settings, postgres_extensions))
        return Outcome(True, extension_versions())
    except ExtensionMissing as exc:
        return Outcome(False, str(exc))


def check_model(settings: Settings) -> Outcome:
    """The embedding model answers one sentence with a vector of the index's size."""
    if settings.embedding.provider == "none":
        return Outcome(True, "none configured: memory search is keyword-only")
    return asyncio.run(_embed_once(settings))


async def _embed_once(settings: Settings) -> Outcome:
    async with httpx.AsyncClient(timeout=settings.embedding.timeout_s) as http:
        embedder = build_embedder(settings, http)
        assert embedder is not None
        started = time.monotonic()
        try:
            vector = (await embedder.embed_queries(["context-engine check"]))[0]
        except Exception as exc:  # noqa: BLE001 - any failure of the provider is the finding
            return Outcome(
                False, f"{embedder.provider} {embedder.model_id}: {exc.__class__.__name__}: {exc}"
            )
    if len(vector) != settings.embedding.dimensions:
        return Outcome(
            False,
            f"{embedder.model_id} returned {len(vector)} dimensions, the index holds "
            f"{settings.embedding.dimensions}",
        )
    return Outcome(
        True,
        f"{embedder.provider} {embedder.model_id}, {len(vector)} dimensions, "
        f"{time.monotonic() - started:.1f}s for one sentence",
    )


def check_llm(settings: Settings) -> Outcome:
    """The LLM endpoint answers (GET /models) and accepts the key; no tokens are spent."""
    if not settings.llm.configured:
        return Outcome(
            True, "none configured: Working Memories are built by the extractive builder"
        )
    if not settings.uses_llm:
        return Outcome(True, "configured but unused (CE_WM__MODE=extractive)")
    llm = settings.llm
    url = f"{(llm.base_url or '').rstrip('/')}/models"
    headers = {
        **llm.extra_headers,
        **({"Authorization": f"Bearer {llm.api_key}"} if llm.api_key else {}),
    }
    try:
        response = httpx.get(url, headers=headers, timeout=min(llm.timeout_s, LLM_CHECK_TIMEOUT_S))
    except httpx.HTTPError as exc:
        return Outcome(False, f"{llm.base_url} is unreachable: {exc.__class__.__name__}: {exc}")
    if response.status_code in (401, 403):
        return Outcome(False, f"{llm.base_url} refused the API key (HTTP {response.status_code})")
    if response.status_code >= 500:
        return Outcome(False, f"{llm.base_url} answered HTTP {response.status_code}")
    return Outcome(
        True, f"{llm.base_url} reachable (HTTP {response.status_code}), model {llm.model}"
    )
