"""stored_form: what capture writes for a message, and the redaction it pays for."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.core.canonical_json import compact_json
from app.core.rules import redaction
from app.core.rules.messages import message_text
from app.core.rules.redaction import redact_text, redact_value
from app.core.rules.secret_triggers import ALL_TRIGGERS, short_json_without_secrets
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


# Pieces of the strings of generated messages: secrets, the redaction triggers alone, triggers cut
# by a character JSON escapes, those characters, and characters whose lowercase is unusual
# (Kelvin sign, dotted capital I, capital sigma) or that JSON keeps raw (Chinese, emoji, U+2028).
SECRETS = (
    SECRET,
    "Api-Key: 'abc123def456ghi789'",
    "sk-ant-api03-" + "a1B2" * 6,
    "sk-proj-" + "x9Y8" * 6,
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "A1b2" * 9,
    "xoxb-123456789012-abcdef",
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
    "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2Q",
    "Authorization: Bearer 9f8e7d6c5b4a39281706abcdef",
    "postgres://app:S3cr3t!pw@db.internal:5432/app",
    "密码是 hunter2hunter2",
    "口令：S3cret!42",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO\n-----END RSA PRIVATE KEY-----",
)
ESCAPED = ('"', "\\", "\n", "\t", "\r", "\x00", "\x1f")
UNUSUAL = ("é", "Σ", "ς", "İ", "\u212a", "ß", "😀", "\u2028", "\x7f", "：", "密码", "口令")
WORDS = ("hello", " ", "the log", "=", ":", "//", "-", "_", "key", "pass", "sk", "[REDACTED:x]")


def _random_case(rng: random.Random, text: str) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c for c in text)


def _piece(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        secret = rng.choice(SECRETS)
        return _random_case(rng, secret) if rng.random() < 0.3 else secret
    if kind in (1, 2):
        trigger = _random_case(rng, rng.choice(ALL_TRIGGERS))
        if kind == 2 and len(trigger) > 1:  # cut by an escaped character: no trigger left
            cut = rng.randrange(1, len(trigger))
            trigger = trigger[:cut] + rng.choice(ESCAPED) + trigger[cut:]
        return trigger
    return rng.choice((ESCAPED, UNUSUAL, WORDS, WORDS)[kind - 2])


def _string(rng: random.Random) -> str:
    return "".join(_piece(rng) for _ in range(rng.randrange(0, 6)))


def _split_call(rng: random.Random) -> dict[str, Any]:
    """A tool call whose name and arguments are the halves of a secret cut at a space: only the
    call's text, which joins them with a space, holds the secret (a private key's header)."""
    secret = _random_case(rng, rng.choice([s for s in SECRETS if " " in s]))
    name, _, arguments = secret.partition(" ")
    return {"type": "toolCall", "id": "c2", "name": name, "arguments": arguments}


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(9 if depth < 3 else 5)
    if kind == 8:
        return _split_call(rng)
    if kind < 3:
        return _string(rng)
    if kind == 3:
        return rng.choice((0, -7, 2.5, True, False, None))
    if kind == 4:
        return {"type": "text", "text": _string(rng)}
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 6:
        arguments = {_string(rng): _value(rng, depth + 1) for _ in range(rng.randrange(3))}
        return {"type": "toolCall", "id": "c1", "name": _string(rng), "arguments": arguments}
    return {_string(rng): _value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _message(rng: random.Random) -> dict[str, Any]:
    message: dict[str, Any] = {"role": rng.choice(("user", "assistant", "toolResult"))}
    blocks = [_value(rng, 1) for _ in range(rng.randrange(4))]
    message["content"] = _string(rng) if rng.random() < 0.3 else blocks
    for _ in range(rng.randrange(3)):
        message[_string(rng)] = _value(rng, 1)
    if rng.random() < 0.2:
        message["summary"] = _string(rng)
    return message


def test_the_trigger_scan_of_the_whole_json_changes_no_stored_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message whose JSON holds no trigger is not walked string by string: generated messages,
    with secrets, triggers in any case, triggers cut by escaped characters and unusual letters
    anywhere (keys too), get the same stored form as when every message is walked."""
    rng = random.Random(20240611)
    messages = [_message(rng) for _ in range(4000)]
    fast = {rb: [stored_form(m, 1000, rb) for m in messages] for rb in (False, True)}
    monkeypatch.setattr(stored_form_module, "short_json_without_secrets", lambda _: False)
    walked = {rb: [stored_form(m, 1000, rb) for m in messages] for rb in (False, True)}
    assert fast == walked
    skipped = [short_json_without_secrets(compact_json(m)) for m in messages]
    redacted = [form.redacted_body is not None for form in walked[False]]
    # Both ways are taken often, and the messages hold secrets to find.
    assert 400 < sum(skipped) < 3600
    assert sum(redacted) > 1000
    for message, skip in zip(messages, skipped, strict=True):
        if skip:
            assert redact_value(message) == (message, 0)


def test_no_redaction_trigger_holds_a_character_json_escapes() -> None:
    """What makes one scan of a message's JSON stand for a scan of each of its strings."""
    for trigger in ALL_TRIGGERS:
        assert compact_json(trigger) == f'"{trigger}"'
        assert trigger == trigger.lower()
