"""stored_form: what capture writes for a message, and the redaction it pays for."""

from __future__ import annotations

from typing import Any

import pytest

from app.core import redaction
from app.core.messages import message_text
from app.core.redaction import redact_text
from app.sessions import stored_form as stored_form_module
from app.sessions.stored_form import stored_form

SECRET = "password=hunter2hunter2"

MESSAGES: dict[str, dict[str, Any]] = {
    "string content": {"role": "user", "content": f"deploy with {SECRET} now"},
    "one text block": {
        "role": "toolResult",
        "toolCallId": "t1",
        "content": [{"type": "text", "text": f"log line\n{SECRET}\n"}],
    },
    "two text blocks": {
        "role": "assistant",
        "content": [{"type": "text", "text": "first"}, {"type": "text", "text": SECRET}],
    },
    # A key and its value only meet in the text of the call's arguments.
    "tool call arguments": {
        "role": "assistant",
        "content": [
            {
                "type": "toolCall",
                "id": "c1",
                "name": "login",
                "arguments": {"password": "hunter2hunter2"},
            }
        ],
    },
    "no secret": {"role": "user", "content": "nothing to hide here"},
}


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_the_search_text_is_the_redacted_text_of_the_message(name: str) -> None:
    message = MESSAGES[name]
    form = stored_form(message, 1000, redact_body=False)
    assert form.search_text == redact_text(message_text(message))
    assert "hunter2hunter2" not in form.search_text


@pytest.mark.parametrize("name", ["string content", "one text block"])
def test_a_single_text_is_scanned_for_secrets_once(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    scanned: list[str] = []
    original = redaction.redact_secrets

    def counting(text: str) -> tuple[str, int]:
        scanned.append(text)
        return original(text)

    monkeypatch.setattr(redaction, "redact_secrets", counting)
    monkeypatch.setattr(stored_form_module, "redact_text", lambda text: counting(text)[0])
    message = MESSAGES[name]
    form = stored_form(message, 1000, redact_body=False)
    text = message_text(message)
    assert scanned.count(text) == 1
    assert form.search_text == original(text)[0]
    assert form.redacted_body is not None and "hunter2hunter2" not in form.redacted_body
