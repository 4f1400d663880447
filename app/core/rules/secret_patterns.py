"""The shapes of the secrets redaction replaces (``app.core.rules.redaction``), each with the tag that
replaces it and the literal triggers one of which every match holds.

The patterns look for the shape of real credentials (fixed prefixes, lengths, digits in random
bodies) so that ordinary words, paths, UUIDs and commit hashes are left alone. Their order is the
order they run in: the prefixed tokens first, then bearer tokens and generic assignments, whose
values may already be redacted.

Linear time is part of the contract: every pattern starts at a literal or a bounded run, and no
unbounded run is followed by something it could fail on and be retried from the next position.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import regex

Replacer = Callable[[regex.Match[str]], str]

REDACTED_PREFIX = "[REDACTED:"
# A token's first characters, then a look back at the character before them: a pattern that starts
# with a literal is found by a fast substring search, one that starts with a look-behind is tried
# at every position (bench/RESULTS.md, Measurements behind the code).
_NOT_TOKEN_AFTER = r"(?![A-Za-z0-9_-])"  # noqa: S105 (a pattern, not a password)


def _token_start(literal: str, before: str = "[A-Za-z0-9_-]") -> str:
    """``literal`` where the character before it is not ``before`` (it starts a token)."""
    return f"{literal}(?<!{before}{literal})"


# A private key's header and footer; the key type is at most a few words ("ENCRYPTED", "RSA").
PRIVATE_KEY_BEGIN_RE = regex.compile(r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY-----")
PRIVATE_KEY_END_RE = regex.compile(r"-----END (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY-----")
# A block cut off before its END line: the header, then base64 lines and "Proc-Type: ..." headers.
TRUNCATED_PRIVATE_KEY_RE = regex.compile(
    PRIVATE_KEY_BEGIN_RE.pattern + r"(?:\s*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]{1,64}:[^\n]{0,1024}))*"
)
# The scheme is bounded: an unbounded one is retried from every letter of a long dotted run.
URL_PASSWORD_RE = regex.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{0,24}://)([^\s:/?#@]+):([^\s@/?#]+)@")
ANTHROPIC_KEY_RE = regex.compile(_token_start("sk-ant-") + r"[A-Za-z0-9_-]{20,}" + _NOT_TOKEN_AFTER)
# A random key body always carries a digit; a kebab-case word after "sk-" does not.
OPENAI_KEY_RE = regex.compile(
    _token_start("sk-") + r"(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}" + _NOT_TOKEN_AFTER
)
AWS_ACCESS_KEY_RE = regex.compile(r"A(?:KIA|SIA)(?<![A-Za-z0-9]A[KS]IA)[A-Z0-9]{16}(?![A-Za-z0-9])")
GITHUB_TOKEN_RE = regex.compile(
    r"(?:" + _token_start("gh[pousr]_", "[A-Za-z0-9_]") + r"[A-Za-z0-9]{36,}"
    r"|" + _token_start("github_pat_", "[A-Za-z0-9_]") + r"[A-Za-z0-9_]{22,})(?![A-Za-z0-9_])"
)
SLACK_TOKEN_RE = regex.compile(
    _token_start("xox[abprs]-") + r"[A-Za-z0-9-]{10,}" + _NOT_TOKEN_AFTER
)
GOOGLE_API_KEY_RE = regex.compile(_token_start("AIza") + r"[0-9A-Za-z_-]{35}" + _NOT_TOKEN_AFTER)
JWT_RE = regex.compile(
    _token_start("eyJ")
    + r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
    + _NOT_TOKEN_AFTER
)
# "Bearer" followed by a token of at least 16 characters with a digit: prose stays.
BEARER_RE = regex.compile(
    r"\b(Bearer[ \t\r\n]{1,8})(?=[A-Za-z0-9._~+/-]*[0-9])([A-Za-z0-9._~+/-]{16,}=*)",
    regex.IGNORECASE,
)
# ``key = value`` where the identifier ends in a credential word ("db_password", "X-Api-Key").
# No identifier prefix is matched (the text before the key word is kept as it is anyway): a lazy
# prefix run was retried from every word boundary of a dotted or dashed run.
_KEY = (
    r"(?:pass(?:word|wd)|api[_-]?key|secret(?:[_-]?key)?|client[_-]?secret|access[_-]?(?:key|token)"
    r"|private[_-]?key|(?:auth|refresh|session)[_-]?token)"
)
_SEPARATOR = r"""["']?[ \t]{0,8}[:=][ \t]{0,8}"""
_KEY_FIRST_LETTERS = "pPaAsScCrR"


def _value_char(allowed: str) -> str:
    """One character of a value that does not start the next ``key =`` (a quote left open must
    not swallow the next assignment's key and leave its value in clear)."""
    return rf"(?:[^{_KEY_FIRST_LETTERS}{allowed}]|(?!{_KEY}{_SEPARATOR})[{_KEY_FIRST_LETTERS}])"


# The look-ahead on the key's first letters lets the engine skip most positions at once instead of
# trying the key words at each. Possessive runs keep the engine from retrying shorter values
# (linear time).
_DQ_CHAR = _value_char('"\n')
_SQ_CHAR = _value_char("'\n")
_BARE_CHAR = _value_char(r"""\s"',;&}""")
ASSIGNMENT_RE = regex.compile(
    rf"(?=[{_KEY_FIRST_LETTERS}])(?P<key>{_KEY})(?P<sep>{_SEPARATOR})"
    rf"""(?:"(?P<dq>{_DQ_CHAR}++)"?+|'(?P<sq>{_SQ_CHAR}++)'?+|["']?(?P<bare>{_BARE_CHAR}++))""",
    regex.IGNORECASE,
)
# "密码是 hunter2", "口令：S3cret!": a separator, then an ASCII value (prose about passwords stays).
CHINESE_PASSWORD_RE = regex.compile(
    r"((?:密码|口令)[ \t]{0,8}(?:是|为|[:：=])[ \t]{0,8})([!-~]{4,})"
)
_PLACEHOLDER_RE = regex.compile(
    r"^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\{\{[^\n]*\}\}|<[^>]*>|[*xX.•]+"
    r"|true|false|null|none|nil|undefined|required|optional|string|str|env)$",
    regex.IGNORECASE,
)


def redaction_tag(kind: str) -> str:
    return f"{REDACTED_PREFIX}{kind}]"


def _is_placeholder(value: str) -> bool:
    return value.startswith(REDACTED_PREFIX) or bool(_PLACEHOLDER_RE.match(value))


def _url_password(match: regex.Match[str]) -> str:
    if _is_placeholder(match.group(3)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}:{redaction_tag('url_password')}@"


def _bearer(match: regex.Match[str]) -> str:
    return match.group(1) + redaction_tag("bearer_token")


def _chinese_password(match: regex.Match[str]) -> str:
    return (
        match.group(0)
        if _is_placeholder(match.group(2))
        else match.group(1) + redaction_tag("password")
    )


def _assignment_kind(key: str) -> str:
    key = key.lower()
    if key.startswith("pass"):
        return "password"
    return "api_key" if key.startswith("api") else "secret"


def _assignment(match: regex.Match[str]) -> str:
    """Replace only the value of ``key = value``; placeholders and redacted values stay."""
    group = next(name for name in ("dq", "sq", "bare") if match.group(name) is not None)
    value = match.group(group)
    if _is_placeholder(value):
        return match.group(0)
    start, end = match.span(group)
    tag = redaction_tag(_assignment_kind(match.group("key")))
    return match.string[match.start() : start] + tag + match.string[end : match.end()]


# Every lowercase spelling of the assignment rule's key words (separators "_", "-" or none).
_ASSIGNMENT_TRIGGERS = (
    "password",
    "passwd",
    "secret",
    *(
        f"{head}{sep}{tail}"
        for head, tails in (
            ("api", ("key",)),
            ("access", ("key", "token")),
            ("private", ("key",)),
            ("auth", ("token",)),
            ("refresh", ("token",)),
            ("session", ("token",)),
        )
        for tail in tails
        for sep in ("_", "-", "")
    ),
)


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: regex.Pattern[str]
    # The tag that replaces a whole match (substituted in C), or a function for partial matches.
    replace: str | Replacer
    triggers: tuple[str, ...]  # lowercase substrings, one of which every match contains


RULES: tuple[Rule, ...] = (
    Rule(URL_PASSWORD_RE, _url_password, ("://",)),
    Rule(ANTHROPIC_KEY_RE, redaction_tag("anthropic_key"), ("sk-ant-",)),
    Rule(OPENAI_KEY_RE, redaction_tag("openai_key"), ("sk-",)),
    Rule(AWS_ACCESS_KEY_RE, redaction_tag("aws_access_key"), ("akia", "asia")),
    Rule(
        GITHUB_TOKEN_RE,
        redaction_tag("github_token"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    Rule(SLACK_TOKEN_RE, redaction_tag("slack_token"), ("xox",)),
    Rule(GOOGLE_API_KEY_RE, redaction_tag("google_api_key"), ("aiza",)),
    Rule(JWT_RE, redaction_tag("jwt"), ("eyj",)),
    Rule(BEARER_RE, _bearer, ("bearer",)),
    Rule(ASSIGNMENT_RE, _assignment, _ASSIGNMENT_TRIGGERS),
    Rule(CHINESE_PASSWORD_RE, _chinese_password, ("密码", "口令")),
)
