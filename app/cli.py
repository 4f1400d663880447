"""Command line: ``serve`` (the embedded default), ``migrate``, ``openapi``; the operator commands
(worker, jobs, sessions, memories, reembed, backup, check, keys) live in ``app.commands``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import ValidationError

from app import commands
from app.api.http_server import ServiceServer, server_config
from app.db.preflight import DatabaseUnusable, check_database
from app.main import create_app
from app.settings import Settings


def openapi_document() -> dict[str, object]:
    """The OpenAPI document of the app (no lifespan needed)."""
    return create_app(Settings(), configure_logs=False).openapi()


def write_openapi(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(openapi_document(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="context-engine", description="A lossless, bounded context service for AI agents."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run the service (settings from CE_* variables)")
    sub.add_parser("migrate", help="apply database migrations")
    openapi = sub.add_parser("openapi", help="write the OpenAPI document")
    openapi.add_argument("--output", default="openapi/openapi.json")
    commands.register(sub)
    args = parser.parse_args(argv)
    if getattr(args, "run", None) is not None:
        return commands.dispatch(args)
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
        f"CE_{'__'.join(str(part) for part in error['loc']).upper()}: {error['msg']}"
        for error in exc.errors()
    )


def run_command(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "serve":
        try:
            settings.check_safe_to_serve()
        except ValueError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 2
        check_database(settings, migrate=settings.auto_migrate)
        server = ServiceServer(server_config(settings, create_app(settings)))
        server.run()
        return 0 if server.started else 1
    if args.command == "migrate":
        check_database(settings, migrate=True)
    else:
        write_openapi(Path(args.output))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
