"""Secret redaction before storage (docs/recall.md, Privacy policy)."""

from __future__ import annotations

import pytest

from app.core.rules.redaction import redact_secrets
from app.core.rules.secret_triggers import ALL_TRIGGERS, might_hold_secret

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
GITHUB_PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "-----END RSA PRIVATE KEY-----"
)


KINDS = [
    ("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t done", "key [REDACTED:openai_key] done"),
    ("OPENAI_API_KEY=sk-Ab3dEf6hIj9kLm2nOp5qRs8tUv", "OPENAI_API_KEY=[REDACTED:openai_key]"),
    ("use sk-ant-api03-Xy7_Zk2-Lm9Pq4Rs8Tu1Vw5 here", "use [REDACTED:anthropic_key] here"),
    ("aws key AKIAIOSFODNN7EXAMPLE in config", "aws key [REDACTED:aws_access_key] in config"),
    (f"token {GITHUB_PAT}", "token [REDACTED:github_token]"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijKLMNOP", "pat [REDACTED:github_token]"),
    ("oauth gho_" + "x" * 36, "oauth [REDACTED:github_token]"),
    ("slack xoxb-123456789012-abcdefGHIJKL", "slack [REDACTED:slack_token]"),
    ("user token xoxp-1234-5678-abcdefabcdef", "user token [REDACTED:slack_token]"),
    ("maps AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY ok", "maps [REDACTED:google_api_key] ok"),
    (
        "Authorization: Bearer 9f8e7d6c5b4a39281706abcdef",
        "Authorization: Bearer [REDACTED:bearer_token]",
    ),
    (f"jwt {JWT}", "jwt [REDACTED:jwt]"),
    (
        "DATABASE_URL=postgres://app:S3cr3t!pw@db.internal:5432/app",
        "DATABASE_URL=postgres://app:[REDACTED:url_password]@db.internal:5432/app",
    ),
    (f"key:\n{PEM}\nend", "key:\n[REDACTED:private_key]\nend"),
    ("password=hunter22", "password=[REDACTED:password]"),
    ('{"db_password": "c0rrect horse"}', '{"db_password": "[REDACTED:password]"}'),
    ("api_key: 'abc123xyz789'", "api_key: '[REDACTED:api_key]'"),
    ("X-Api-Key: 0123abcd4567", "X-Api-Key: [REDACTED:api_key]"),
    ("client_secret=QWERTY12345&scope=read", "client_secret=[REDACTED:secret]&scope=read"),
    ("SECRET_KEY = 'django-insecure-abc'", "SECRET_KEY = '[REDACTED:secret]'"),
    ("数据库密码是 Passw0rd!，别外传", "数据库密码是 [REDACTED:password]，别外传"),
]
# Past this many characters the trigger scan runs on the other engine (secret_triggers.py, has_trigger).
LONG_PADDING = "the build is green. " * 300


@pytest.mark.parametrize(("text", "expected"), KINDS)
def test_each_kind_is_redacted(text: str, expected: str) -> None:
    assert redact_secrets(text) == (expected, 1)


@pytest.mark.parametrize(("text", "expected"), KINDS)
def test_each_kind_is_redacted_in_a_long_text(text: str, expected: str) -> None:
    assert redact_secrets(LONG_PADDING + text) == (LONG_PADDING + expected, 1)


@pytest.mark.parametrize("trigger", ALL_TRIGGERS)
@pytest.mark.parametrize("padding", ["", LONG_PADDING])
def test_every_trigger_is_seen_in_any_case(trigger: str, padding: str) -> None:
    for spelling in (trigger, trigger.upper()):
        assert might_hold_secret(f"{padding}({spelling})")
    assert not might_hold_secret(f"{padding}({trigger[1:]})")  # no trigger is part of another


def test_truncated_private_key_is_redacted() -> None:
    truncated = PEM.rsplit("-----END", 1)[0]
    assert redact_secrets("pasted: " + truncated) == ("pasted: [REDACTED:private_key]\n", 1)


def test_several_secrets_are_counted() -> None:
    text = f"gh {GITHUB_PAT} and aws AKIAIOSFODNN7EXAMPLE and password=hunter22"
    redacted, count = redact_secrets(text)
    assert count == 3
    assert "A1b2C3" not in redacted and "AKIA" not in redacted and "hunter22" not in redacted


def test_a_bearer_jwt_is_redacted_once() -> None:
    assert redact_secrets(f"Authorization: Bearer {JWT}") == (
        "Authorization: Bearer [REDACTED:jwt]",
        1,
    )


def test_a_token_used_as_url_password_is_redacted_once() -> None:
    text = f"git clone https://x-access-token:{GITHUB_PAT}@github.com/org/repo.git"
    expected = "git clone https://x-access-token:[REDACTED:url_password]@github.com/org/repo.git"
    assert redact_secrets(text) == (expected, 1)


@pytest.mark.parametrize(
    "text",
    [
        "request id 123e4567-e89b-12d3-a456-426614174000 failed",
        "fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "keys live in /home/dev/.ssh/id_rsa and ~/.aws/credentials",
        "the password policy requires 12 characters",
        "we use a Bearer token for auth; see the Bearer authentication docs",
        "max_tokens=400 temperature=0.2 PWD=/home/dev",
        "password_hash = bcrypt(password)",
        "password: ${DB_PASSWORD}",
        "api_key=<your-api-key>",
        "secret: true",
        "open https://example.com:8443/admin or ssh://git@github.com/org/repo",
        "git@github.com:org/repo.git",
        "task-ant-colony-optimisation-2024 and disk-1234567890abcdefghijk",
        "scikit-learn is sk-learn; skeleton-key-for-all-the-doors",
        "AKIA is the prefix of AWS access keys",
        "密码策略要求至少 12 位，密码为空时报错",
        "postgres://app:${PGPASSWORD}@db:5432/app",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_secrets(text) == (text, 0)


def test_log_lines_are_redacted() -> None:
    # Every log line passes the boundary last, exception text included (docs/quality.md: no secrets in logs).
    import io
    import logging

    import structlog

    from app.logging import configure_logging

    configure_logging("json", "INFO")
    stream = io.StringIO()
    logging.getLogger().handlers[0].setStream(stream)  # type: ignore[attr-defined]
    try:
        structlog.get_logger("t").warning(
            "token AKIAIOSFODNN7EXAMPLE", detail={"k": "password=hunter22"}
        )
        logging.getLogger("std").error(f"std {GITHUB_PAT}")
        try:
            raise ValueError(f"boom {JWT}")
        except ValueError:
            structlog.get_logger("t").exception("failed")
    finally:
        configure_logging("console", "WARNING")
    written = stream.getvalue()
    assert written.count("[REDACTED:") == 4
    assert "AKIAIOSFODNN7EXAMPLE" not in written and "hunter22" not in written
    assert GITHUB_PAT not in written and JWT not in written
