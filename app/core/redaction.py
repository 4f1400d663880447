"""Secret redaction: the one boundary every text crosses on its way out of the raw message store
(docs/recall.md, Privacy policy; docs/quality.md, Security).

Each secret becomes ``[REDACTED:<kind>]``. The patterns look for the shape of real credentials
(fixed prefixes, lengths, digits in random bodies) so that ordinary words, paths, UUIDs and commit
hashes are left alone. Order matters: whole private-key blocks and URL passwords go first, then the
prefixed tokens, then bearer tokens and generic assignments, whose values may already be redacted.

Linear time is part of the contract: a 1 MB tool result must not hold the process. The patterns
run on the ``regex`` engine with ``concurrent=True``, which lets other threads (the event loop,
other requests) run while it scans; ``re`` would keep the GIL for a whole call. Every pattern starts at a literal or a bounded run, no unbounded run is
followed by something it could fail on and be retried from the next position, and a private-key
block without an END line is looked for once, not once per BEGIN. A rule runs only when one of its
literal triggers occurs in the text, so text without any secret-like word costs one lowercase copy
and one scan for all the triggers at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

_Replacer = Callable[[regex.Match[str]], str]

REDACTED_PREFIX = "[REDACTED:"
# A token's first characters, then a look back at the character before them: a pattern that starts
# with a literal is found by a fast substring search, one that starts with a look-behind is tried
# at every position (much slower on a megabyte).
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


# The look-ahead on the key's first letters lets the engine skip most positions at once (3x
# faster). Possessive runs keep the engine from retrying shorter values (linear time).
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


def _tag(kind: str) -> str:
    return f"{REDACTED_PREFIX}{kind}]"


def _is_placeholder(value: str) -> bool:
    return value.startswith(REDACTED_PREFIX) or bool(_PLACEHOLDER_RE.match(value))


def _url_password(match: regex.Match[str]) -> str:
    if _is_placeholder(match.group(3)):
        return match.group(0)
    return f"{match.group(1)}{match.group(2)}:{_tag('url_password')}@"


def _bearer(match: regex.Match[str]) -> str:
    return match.group(1) + _tag("bearer_token")


def _chinese_password(match: regex.Match[str]) -> str:
    return match.group(0) if _is_placeholder(match.group(2)) else match.group(1) + _tag("password")


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
    tag = _tag(_assignment_kind(match.group("key")))
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
class _Rule:
    pattern: regex.Pattern[str]
    # The tag that replaces a whole match (substituted in C), or a function for partial matches.
    replace: str | _Replacer
    triggers: tuple[str, ...]  # lowercase substrings, one of which every match contains


_RULES: tuple[_Rule, ...] = (
    _Rule(URL_PASSWORD_RE, _url_password, ("://",)),
    _Rule(ANTHROPIC_KEY_RE, _tag("anthropic_key"), ("sk-ant-",)),
    _Rule(OPENAI_KEY_RE, _tag("openai_key"), ("sk-",)),
    _Rule(AWS_ACCESS_KEY_RE, _tag("aws_access_key"), ("akia", "asia")),
    _Rule(
        GITHUB_TOKEN_RE,
        _tag("github_token"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    _Rule(SLACK_TOKEN_RE, _tag("slack_token"), ("xox",)),
    _Rule(GOOGLE_API_KEY_RE, _tag("google_api_key"), ("aiza",)),
    _Rule(JWT_RE, _tag("jwt"), ("eyj",)),
    _Rule(BEARER_RE, _bearer, ("bearer",)),
    _Rule(ASSIGNMENT_RE, _assignment, _ASSIGNMENT_TRIGGERS),
    _Rule(CHINESE_PASSWORD_RE, _chinese_password, ("密码", "口令")),
)


_PRIVATE_KEY_TRIGGER = "-----begin "
_ALL_TRIGGERS = (_PRIVATE_KEY_TRIGGER, *dict.fromkeys(t for rule in _RULES for t in rule.triggers))


_Trie = dict[str, "_Trie"]


def _trie_pattern(words: tuple[str, ...]) -> str:
    """One alternation of the words, factored on shared prefixes ("s(?:k-|ecret)"): the engine
    reads a character once instead of trying every word at every position. A word that ends where
    a longer one goes on ends the match (any trigger is enough)."""
    tree: _Trie = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def alternation(node: _Trie) -> str:
        if "" in node:
            return ""
        branches = [re.escape(char) + alternation(child) for char, child in node.items()]
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return alternation(tree)


# Most strings of a message ("role", "user", a sentence) hold no trigger; one scan tells. ``re``
# scans a short string several times faster than ``regex``, which is kept for long texts because
# it lets other threads run while it scans.
_TRIGGERS = _trie_pattern(_ALL_TRIGGERS)
_TRIGGER_RE = re.compile(_TRIGGERS)
_LONG_TRIGGER_RE = regex.compile(_TRIGGERS)
_SHORT_TEXT = 4096


def _has_trigger(lowered: str) -> bool:
    if len(lowered) <= _SHORT_TEXT:
        return _TRIGGER_RE.search(lowered) is not None
    return _LONG_TRIGGER_RE.search(lowered, concurrent=True) is not None


def might_hold_secret(text: str) -> bool:
    """False when no rule can match: none of their literal triggers occurs in the text."""
    return _has_trigger(text.lower())


def short_json_without_secrets(json_text: str) -> bool:
    """True only when no string of the JSON value ``json_text`` serialises, key or value, can hold
    a secret: ``redact_value`` would give the value back unchanged. One scan of the text instead
    of one per string (a short message has dozens); a long text is not scanned (False), since its
    strings would be scanned again one by one.

    Exact for JSON written with raw UTF-8 (``compact_json``): every string is in it character for
    character, except the characters JSON escapes (``"``, ``\\`` and control characters), and no
    trigger holds one of those. Lowercasing maps each character on its own (the one exception, a
    capital sigma, depends on its neighbours but lowers to no trigger character), so a trigger in a
    lowered string is in the lowered JSON text too. A property test checks that the two agree."""
    return len(json_text) <= _SHORT_TEXT and _TRIGGER_RE.search(json_text.lower()) is None


def _apply(rule: _Rule, text: str) -> tuple[str, int]:
    """Substitute one rule and count the matches it actually changed."""
    if isinstance(rule.replace, str):
        return rule.pattern.subn(rule.replace, text, concurrent=True)
    replace = rule.replace
    changed = 0

    def substitute(match: regex.Match[str]) -> str:
        nonlocal changed
        out = replace(match)
        changed += out != match.group(0)
        return out

    return rule.pattern.sub(substitute, text, concurrent=True), changed


def _redact_private_keys(text: str) -> tuple[str, int]:
    """Whole ``-----BEGIN … PRIVATE KEY-----`` blocks, up to their END line or, cut off, to the end
    of their base64 body. Once a block has no END line no later one has: the rest of the text is
    then redacted in one substitution, so each END line is looked for once (linear time)."""
    pieces: list[str] = []
    position = count = 0
    while (begin := PRIVATE_KEY_BEGIN_RE.search(text, position, concurrent=True)) is not None:
        end = PRIVATE_KEY_END_RE.search(text, begin.end(), concurrent=True)
        pieces.append(text[position : begin.start()])
        if end is None:
            tail, truncated = TRUNCATED_PRIVATE_KEY_RE.subn(
                _tag("private_key"), text[begin.start() :], concurrent=True
            )
            pieces.append(tail)
            return "".join(pieces), count + truncated
        pieces.append(_tag("private_key"))
        position = end.end()
        count += 1
    if not count:
        return text, 0
    pieces.append(text[position:])
    return "".join(pieces), count


def redact_secrets(text: str) -> tuple[str, int]:
    """The text with every recognised secret replaced, and how many were replaced.

    One pass is idempotent (a property test checks it): every rule that could match again after a
    later rule's tag needs a token character before its match, and a tag ends in "]".
    """
    lowered = text.lower()
    if not _has_trigger(lowered):
        return text, 0
    total = 0
    if "-----BEGIN " in text:
        text, total = _redact_private_keys(text)
        lowered = text.lower()
    for rule in _RULES:
        if any(trigger in lowered for trigger in rule.triggers):
            text, count = _apply(rule, text)
            if count:
                total += count
                lowered = text.lower()
    return text, total


def redact_text(text: str) -> str:
    """The text with every recognised secret replaced."""
    return redact_secrets(text)[0]


_TAG_RE = regex.compile(r"\[REDACTED:[a-z_]{1,32}\]")


def without_secrets(text: str) -> str:
    """The text with every secret and redaction tag removed: what a search may look for or send
    to an embedding provider (a tag as a search term would find every redacted memory)."""
    return _TAG_RE.sub(" ", redact_text(text), concurrent=True)


Redactions = dict[str, tuple[str, int]]


def redact_value(value: Any, seen: Redactions | None = None) -> tuple[Any, int]:
    """A JSON-like value (str, list, dict, scalars) with every string redacted, keys included, and
    how many secrets were replaced. Unchanged values come back as the same objects. ``seen``, when
    given, keeps each string's result: a string met twice is scanned once, and a caller that must
    redact one of the same strings again reads it there (redaction is deterministic)."""
    if isinstance(value, str):
        if seen is None:
            return redact_secrets(value)
        found = seen.get(value)
        if found is None:
            found = seen[value] = redact_secrets(value)
        return found
    if isinstance(value, list):
        items = [redact_value(item, seen) for item in value]
        count = sum(c for _, c in items)
        return ([v for v, _ in items] if count else value), count
    if isinstance(value, dict):
        pairs = [(redact_value(k, seen), redact_value(v, seen)) for k, v in value.items()]
        count = sum(kc + vc for (_, kc), (_, vc) in pairs)
        return ({k: v for (k, _), (v, _) in pairs} if count else value), count
    return value, 0


def redact_message(message: Any) -> Any:
    """A message (or any JSON value) as it may leave the raw store: every string redacted."""
    return redact_value(message)[0]
