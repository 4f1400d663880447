"""The operator commands of ``context-engine`` (``python -m app``) beyond serve/migrate/openapi.

Each module adds its subcommand with ``add_parser`` and sets ``run(args) -> exit status``.
argparse (standard library) is enough here: nested subcommands, ``--help`` everywhere, and no
dependency for a service that must install offline.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from pydantic import ValidationError

from app.commands import (
    backup,
    check,
    copy,
    imports,
    jobs,
    keys,
    memories,
    reembed,
    sessions,
    worker,
)
from app.commands.runtime import EXIT_PROBLEM, EXIT_USAGE, CommandError
from app.errors import AppError
from app.logging import configure_logging

MODULES = (worker, jobs, sessions, memories, imports, reembed, backup, copy, check, keys)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for module in MODULES:
        module.add_parser(sub)


def dispatch(args: argparse.Namespace) -> int:
    """Run the chosen command; a problem the operator can fix is one line on stderr, not a trace."""
    _log_to_stderr(args.command)
    try:
        return int(args.run(args))
    except (CommandError, AppError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_PROBLEM
    except BrokenPipeError:
        # The reader went away (`… | head`): stop quietly, and keep Python from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PROBLEM
    except ValidationError as exc:
        sys.stderr.write(f"error: invalid configuration: {exc.errors()[0].get('msg', exc)}\n")
        return EXIT_USAGE


def _log_to_stderr(command: str) -> None:
    """Logs go to stderr (stdout carries exports): warnings only, but the worker's progress too."""
    if logging.getLogger().handlers:
        return  # already set up by whoever runs us
    default = "INFO" if command == "worker" else "WARNING"
    level = os.environ.get("CE_LOG_LEVEL", default).upper()
    configure_logging(
        os.environ.get("CE_LOG_FORMAT", "console"),
        level if level in logging.getLevelNamesMapping() else default,
    )
