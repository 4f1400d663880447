"""What capture writes for one message, computed before the write transaction opens.

The body is the sanitized message, verbatim (lossless), unless the operator asks for stored
messages to be redacted as well. What leaves the store passes through the redaction boundary
(docs/quality.md, Security): the search text that feeds the full-text index, and the redacted copy of
a body that holds a secret, which assembly and Phase 2 read instead of the body. Redaction and
serialisation are the CPU-heavy part of capture, so they never run while the write lock is held.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.canonical_json import compact_json
from app.core.rules.messages import Message, message_text, message_tokens
from app.core.rules.redaction import Redactions, redact_text, redact_value
from app.core.rules.secret_triggers import short_json_without_secrets


@dataclass(frozen=True, slots=True)
class StoredForm:
    body: str
    redacted_body: str | None  # None: the body holds no secret (or is itself redacted)
    search_text: str
    tokens: int


def stored_form(message: Message, image_tokens: int, redact_body: bool) -> StoredForm:
    """The row fields of a sanitized message; the tokens are those of the message as the host sent it."""
    body = compact_json(message)
    seen: Redactions = {}
    # A short message whose JSON holds no trigger has no string to walk; its search text, which
    # joins strings (a secret can span them), is still scanned (``_redacted_text``).
    redacted, secrets = (
        (message, 0) if short_json_without_secrets(body) else redact_value(message, seen)
    )
    redacted_json = compact_json(redacted) if secrets else None
    return StoredForm(
        body=redacted_json if redact_body and redacted_json is not None else body,
        redacted_body=None if redact_body else redacted_json,
        search_text=_redacted_text(message_text(message), seen),
        tokens=message_tokens(message, image_tokens),
    )


def _redacted_text(text: str, seen: Redactions) -> str:
    """The search text redacted. Most messages' text is one of their strings (a single text block),
    already redacted with the body: scanning a megabyte tool result twice cost a third of its
    capture. Text joined from several blocks, or built from a tool call, is scanned whole, since a
    secret can span the pieces (a key and its value in a call's arguments)."""
    found = seen.get(text)
    return found[0] if found is not None else redact_text(text)
