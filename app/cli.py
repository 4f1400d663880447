"""Command line: ``serve`` (the embedded default), ``migrate``, ``openapi``."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import httpx
import uvicorn
from pydantic import ValidationError

from app.api.http_server import server_config
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.db.preflight import DatabaseUnusable, check_database
from app.db.uow import UnitOfWork
from app.main import build_embedder, create_app
from app.memory.embedding_cache import CachedEmbedder
from app.memory.reembed import reembed_stale
from app.memory.service import MemoryService
from app.settings import Settings


def openapi_document() -> dict[str, object]:
    """The OpenAPI document of the app (no lifespan needed)."""
    return create_app(Settings(), configure_logs=False).openapi()


def write_openapi(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(openapi_document(), indent=2, ensure_ascii=False, sort_keys=True) + "\n")


async def reembed(settings: Settings) -> int:
    """Open the database and the configured embedder, and re-embed stale memories."""
    engine = create_db_engine(settings)
    upgrade_to_head(engine)
    async with httpx.AsyncClient(timeout=settings.embedding.timeout_s) as http:
        embedder = build_embedder(settings, http)
        uow = UnitOfWork(engine)
        cached = CachedEmbedder(uow, embedder) if embedder is not None else None
        service = MemoryService(uow, cached, settings.embedding.max_chunks_per_memory)
        try:
            return await reembed_stale(service)
        finally:
            engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="context-engine")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the service (settings from CE_* variables)")
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("reembed", help="re-embed memories whose vectors came from another embedding model")
    openapi = sub.add_parser("openapi", help="write the OpenAPI document")
    openapi.add_argument("--output", default="openapi/openapi.json")
    args = parser.parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as exc:
        sys.stderr.write(f"error: invalid settings: {settings_errors(exc)}\n")
        return 2
    try:
        return run_command(args, settings)
    except DatabaseUnusable as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1


def settings_errors(exc: ValidationError) -> str:
    """One line naming each bad setting, without its value (an API key must not be printed)."""
    return "; ".join(
        f"CE_{'__'.join(str(part) for part in error['loc']).upper()}: {error['msg']}" for error in exc.errors()
    )


def run_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        try:
            settings.check_safe_to_serve()
        except ValueError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        check_database(settings, migrate=settings.auto_migrate)
        server = uvicorn.Server(server_config(settings, create_app(settings)))
        server.run()
        return 0 if server.started else 1
    if args.command == "reembed":
        check_database(settings, migrate=True)
        count = asyncio.run(reembed(settings))
        sys.stdout.write(f"re-embedded {count} memories\n")
    elif args.command == "migrate":
        check_database(settings, migrate=True)
    else:
        write_openapi(Path(args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
