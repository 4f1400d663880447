"""Secret redaction: the one boundary every text crosses on its way out of the raw message store
(docs/recall.md, Privacy policy; docs/quality.md, Security).

Each secret becomes ``[REDACTED:<kind>]`` (the shapes and their tags: ``app.core.rules.secret_patterns``).
Order matters: whole private-key blocks and URL passwords go first, then the prefixed tokens, then
bearer tokens and generic assignments, whose values may already be redacted.

Linear time is part of the contract: a 1 MB tool result must not hold the process. The patterns
run on the ``regex`` engine with ``concurrent=True``, which lets other threads (the event loop,
other requests) run while it scans; ``re`` would keep the GIL for a whole call. A private-key
block without an END line is looked for once, not once per BEGIN. A rule runs only when one of its
literal triggers occurs in the text (``app.core.rules.secret_triggers``).
"""

from __future__ import annotations

from typing import Any

import regex

from app.core.rules.secret_patterns import (
    PRIVATE_KEY_BEGIN_RE,
    PRIVATE_KEY_END_RE,
    RULES,
    TRUNCATED_PRIVATE_KEY_RE,
    Rule,
    redaction_tag,
)
from app.core.rules.secret_triggers import has_trigger


def _apply(rule: Rule, text: str) -> tuple[str, int]:
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
                redaction_tag("private_key"), text[begin.start() :], concurrent=True
            )
            pieces.append(tail)
            return "".join(pieces), count + truncated
        pieces.append(redaction_tag("private_key"))
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
    if not has_trigger(lowered):
        return text, 0
    total = 0
    if "-----BEGIN " in text:
        text, total = _redact_private_keys(text)
        lowered = text.lower()
    for rule in RULES:
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
