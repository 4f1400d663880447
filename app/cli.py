"""Command line: ``serve`` (the embedded default), ``migrate``, ``openapi``; the operator commands
(worker, jobs, sessions, memories, reembed, backup, check, keys) live in ``app.commands``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import uvicorn

from app import commands
from app.db.engine import create_db_engine
from app.db.migrate import upgrade_to_head
from app.main import create_app
from app.settings import Settings


def openapi_document() -> dict[str, object]:
    """The OpenAPI document of the app (no lifespan needed)."""
    return create_app(Settings(), configure_logs=False).openapi()


def write_openapi(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(openapi_document(), indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="context-engine", description="A lossless, bounded context service for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the service (settings from CE_* variables)")
    sub.add_parser("migrate", help="apply database migrations")
    openapi = sub.add_parser("openapi", help="write the OpenAPI document")
    openapi.add_argument("--output", default="openapi/openapi.json")
    commands.register(sub)
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is not None:
        return commands.dispatch(args)
    settings = Settings()
    if args.command == "serve":
        try:
            settings.check_safe_to_serve()
        except ValueError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=None,
                    access_log=False, timeout_graceful_shutdown=10)
    elif args.command == "migrate":
        engine = create_db_engine(settings)
        upgrade_to_head(engine)
        engine.dispose()
    else:
        write_openapi(Path(args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
