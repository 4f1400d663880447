"""What capture writes for one message, computed before the write transaction opens.

The body is the sanitized message, verbatim (lossless), unless the operator asks for stored
messages to be redacted as well; the search text that feeds the full-text index always passes
through the redaction boundary (quality.md, Security). Redaction and serialisation are the CPU-heavy
part of capture, so they never run while the write lock is held.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.canonical_json import compact_json
from app.core.messages import Message, message_text, message_tokens
from app.core.redaction import redact_message, redact_text


@dataclass(frozen=True, slots=True)
class StoredForm:
    body: str
    search_text: str
    tokens: int


def stored_form(message: Message, image_tokens: int, redact_body: bool) -> StoredForm:
    """The row fields of a sanitized message; the tokens are those of the message as the host sent it."""
    body = redact_message(message) if redact_body else message
    return StoredForm(
        body=compact_json(body),
        search_text=redact_text(message_text(message)),
        tokens=message_tokens(message, image_tokens),
    )
