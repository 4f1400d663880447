"""Secret redaction before anything is written, indexed or embedded (recall.md, Privacy policy).

Each secret becomes ``[REDACTED:<kind>]``. The patterns look for the shape of real credentials
(fixed prefixes, lengths, digits in random bodies) so that ordinary words, paths, UUIDs and commit
hashes are left alone. Order matters: URL passwords and whole blocks go first, then the
prefixed tokens, then bearer tokens and generic assignments, whose values may already be redacted.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_Replacer = Callable[[re.Match[str]], str]

_NOT_TOKEN_BEFORE = r"(?<![A-Za-z0-9_-])"
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_-])"

PRIVATE_KEY_RE = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----"
    r"|(?:\s*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+:[^\n]*))*)"  # cut off before its END line
)
URL_PASSWORD_RE = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://)([^\s:/?#@]+):([^\s@/?#]+)@")
ANTHROPIC_KEY_RE = re.compile(_NOT_TOKEN_BEFORE + r"sk-ant-[A-Za-z0-9_-]{20,}" + _NOT_TOKEN_AFTER)
# A random key body always carries a digit; a kebab-case word after "sk-" does not.
OPENAI_KEY_RE = re.compile(
    _NOT_TOKEN_BEFORE + r"sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}" + _NOT_TOKEN_AFTER
)
AWS_ACCESS_KEY_RE = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
GITHUB_TOKEN_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})(?![A-Za-z0-9_])"
)
SLACK_TOKEN_RE = re.compile(_NOT_TOKEN_BEFORE + r"xox[abprs]-[A-Za-z0-9-]{10,}" + _NOT_TOKEN_AFTER)
GOOGLE_API_KEY_RE = re.compile(_NOT_TOKEN_BEFORE + r"AIza[0-9A-Za-z_-]{35}" + _NOT_TOKEN_AFTER)
JWT_RE = re.compile(
    _NOT_TOKEN_BEFORE
    + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    + _NOT_TOKEN_AFTER
)
# "Bearer" followed by a token of at least 16 characters with a digit: prose stays.
BEARER_RE = re.compile(
    r"\b(Bearer\s+)(?=[A-Za-z0-9._~+/-]*[0-9])([A-Za-z0-9._~+/-]{16,}=*)", re.IGNORECASE
)
ASSIGNMENT_RE = re.compile(
    r"\b([A-Za-z0-9_.-]*?(?P<key>password|passwd|api[_-]?key|apikey|secret|secret[_-]?key"
    r"|client[_-]?secret|access[_-]?key|private[_-]?key|(?:access|auth|refresh|session)[_-]?token))"
    r"""(["']?[ \t]*[:=][ \t]*)(?:"(?P<dq>[^"\n]+)"|'(?P<sq>[^'\n]+)'|(?P<bare>[^\s"',;&}]+))""",
    re.IGNORECASE,
)
# "密码是 hunter2", "口令：S3cret!": a separator, then an ASCII value (prose about passwords stays).
CHINESE_PASSWORD_RE = re.compile(r"((?:密码|口令)[ \t]*(?:是|为|[:：=])[ \t]*)([!-~]{4,})")
_PLACEHOLDER_RE = re.compile(
    r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{.*\}\}|<[^>]*>|[*xX.•]+"
    r"|true|false|null|none|nil|undefined|required|optional|string|str|env)$",
    re.IGNORECASE,
)


def _tag(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER_RE.match(value))


def _whole(kind: str) -> _Replacer:
    return lambda _match: _tag(kind)


def _url_password(match: re.Match[str]) -> str:
    if _is_placeholder(match.group(3)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}:{_tag('url_password')}@"


def _bearer(match: re.Match[str]) -> str:
    return match.group(1) + _tag("bearer_token")


def _chinese_password(match: re.Match[str]) -> str:
    return match.group(0) if _is_placeholder(match.group(2)) else match.group(1) + _tag("password")


def _assignment_kind(key: str) -> str:
    key = key.lower()
    if key.startswith("pass"):
        return "password"
    return "api_key" if key.startswith("api") else "secret"


def _assignment(match: re.Match[str]) -> str:
    """Replace only the value of ``key = value``; placeholders and redacted values stay."""
    group = next(name for name in ("dq", "sq", "bare") if match.group(name) is not None)
    value = match.group(group)
    if _is_placeholder(value) or value.startswith("[REDACTED:"):
        return match.group(0)
    start, end = match.span(group)
    tag = _tag(_assignment_kind(match.group("key")))
    return match.string[match.start() : start] + tag + match.string[end : match.end()]


_RULES: tuple[tuple[re.Pattern[str], _Replacer], ...] = (
    (PRIVATE_KEY_RE, _whole("private_key")),
    (URL_PASSWORD_RE, _url_password),
    (ANTHROPIC_KEY_RE, _whole("anthropic_key")),
    (OPENAI_KEY_RE, _whole("openai_key")),
    (AWS_ACCESS_KEY_RE, _whole("aws_access_key")),
    (GITHUB_TOKEN_RE, _whole("github_token")),
    (SLACK_TOKEN_RE, _whole("slack_token")),
    (GOOGLE_API_KEY_RE, _whole("google_api_key")),
    (JWT_RE, _whole("jwt")),
    (BEARER_RE, _bearer),
    (ASSIGNMENT_RE, _assignment),
    (CHINESE_PASSWORD_RE, _chinese_password),
)


def _apply(pattern: re.Pattern[str], replacer: _Replacer, text: str) -> tuple[str, int]:
    """Substitute one rule and count the matches it actually changed."""
    changed = 0

    def substitute(match: re.Match[str]) -> str:
        nonlocal changed
        out = replacer(match)
        changed += out != match.group(0)
        return out

    return pattern.sub(substitute, text), changed


def redact_secrets(text: str) -> tuple[str, int]:
    """The text with every recognised secret replaced, and how many were replaced."""
    # recall.md, Privacy policy: secrets are redacted before anything is written or indexed.
    total = 0
    for pattern, replacer in _RULES:
        text, count = _apply(pattern, replacer, text)
        total += count
    return text, total
