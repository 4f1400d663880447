"""Adversarial text shapes: inputs that once made a pattern retry from every position.

Shared by the adversarial benchmark and the tests that keep redaction and sanitation linear. Each
shape is deterministic and exactly ``size`` characters long.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _random_base64(size: int, urlsafe: bool) -> str:
    raw = random.Random(size).randbytes(size)
    encoded = base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)
    return encoded.decode()[:size]


def _words(size: int) -> str:
    rng = random.Random(size + 1)
    vocabulary = ["deploy", "error", "config", "token", "retry", "service", "request", "value"]
    return _repeat(" ".join(rng.choice(vocabulary) for _ in range(4096)) + " ", size)


# name -> how to build ``size`` characters of it
SHAPES: dict[str, Callable[[int], str]] = {
    # Minified code, package names and Java stack traces: long runs of dotted identifiers.
    "dotted_run": lambda n: _repeat("a.", n),
    "java_trace": lambda n: _repeat(
        "\tat com.example.orders.OrderServiceImpl.process(OrderServiceImpl.java:42)\n", n
    ),
    "dashed_run": lambda n: _repeat("a-", n),
    "base64": lambda n: _random_base64(n, urlsafe=False),
    "base64_urlsafe": lambda n: _random_base64(n, urlsafe=True),
    # Credential words over and over, with and without values.
    "key_words": lambda n: _repeat("password secret api_key access_token Bearer ", n),
    "key_assignments": lambda n: _repeat("password=", n),
    "unclosed_quotes": lambda n: _repeat('api_key: "', n),
    "token_prefixes": lambda n: _repeat("sk-ghp_AKIAeyJxoxb-AIza", n),
    "url_schemes": lambda n: _repeat("a://b:c", n),
    "key_headers": lambda n: _repeat("-----BEGIN RSA PRIVATE KEY-----\n", n),
    # One long line of words, one long token, and whitespace runs.
    "long_line": _words,
    "long_token": lambda n: _repeat("x", n),
    "newlines": lambda n: _repeat("\n", n),
    "spaces": lambda n: _repeat(" ", n),
    # Capture sanitation: fenced blocks and envelopes that never close.
    "unclosed_fences": lambda n: _repeat("```json\n", n),
    "metadata_headers": lambda n: _repeat("\nConversation info (x): ```", n),
    "unclosed_envelopes": lambda n: _repeat("<openviking-context ", n),
    "compacted_marks": lambda n: "System: [" + _repeat("] Compacted x", n - 10) + "\n",
    "chinese_passwords": lambda n: _repeat("密码是 ", n),
}


def adversarial_text(name: str, size: int) -> str:
    """``size`` characters of the named shape."""
    text = SHAPES[name](size)
    return text[:size]
