"""structlog configured once, with the standard library routed through it.

Every log line passes through the redaction boundary last (exception text included): a provider's
error, a failing request's detail or a library's message must not write a secret to the logs.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any

import structlog
from structlog.typing import Processor

from app.core.rules.redaction import redact_value


def redact_event(
    _logger: Any, _method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A structlog processor: every value of the event (message and exception text included) redacted."""
    for key, value in event_dict.items():
        if isinstance(value, str | list | dict):
            event_dict[key] = redact_value(value)[0]
    return event_dict


def configure_logging(log_format: str, level: str) -> None:
    """JSON lines in production, a readable console format in development."""
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer = (
        structlog.processors.JSONRenderer()
        if log_format == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler()
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                redact_event,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
    logging.getLogger("uvicorn.access").disabled = True
    # Alembic narrates every migration context at INFO, /readyz included.
    logging.getLogger("alembic").setLevel(logging.WARNING)
