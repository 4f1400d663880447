"""The one token estimator (docs/lifecycle.md, "Token estimator").

CJK and other wide code points weigh 1.5 tokens, other astral code points (emoji) 2.0, everything
else 0.25; the sum is rounded up. ASCII therefore costs ceil(len / 4).
"""

from __future__ import annotations

import math

import regex

# Ranges of wide code points (docs/peers.md, OpenViking §2.2), sorted by start.
_WIDE_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),
    (0x3000, 0x303F),
    (0x3040, 0x30FF),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF00, 0xFFEF),
    (0x20000, 0x2EBEF),
)


# Runs of wide code points, and of astral code points outside the wide ranges: counted by the
# regex engine (which leaves the GIL to other threads meanwhile), so that a megabyte of Chinese
# costs milliseconds, not a Python loop over every character.
_WIDE_RUN_RE = regex.compile(
    "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _WIDE_RANGES) + "]+"
)
_OTHER_ASTRAL_RUN_RE = regex.compile("[\\U00010000-\\U0001ffff\\U0002ebf0-\\U0010ffff]+")


def text_weight(text: str) -> float:
    """The unrounded weighted code-point sum of a text (``estimate_text_tokens`` is its ceiling)."""
    if text.isascii():
        return len(text) / 4
    wide = sum(map(len, _WIDE_RUN_RE.findall(text, concurrent=True)))
    astral = sum(map(len, _OTHER_ASTRAL_RUN_RE.findall(text, concurrent=True)))
    # Weights 0.25, 1.5 and 2.0 are exact binary fractions: this equals the per-character sum.
    return 0.25 * (len(text) - wide - astral) + 1.5 * wide + 2.0 * astral


def estimate_text_tokens(text: str | None) -> int:
    """Estimated tokens of a text: ceil of the weighted code-point sum."""
    if not text:
        return 0
    return math.ceil(text_weight(text))
