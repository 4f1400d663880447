"""The one token estimator (lifecycle.md, "Token estimator").

CJK and other wide code points weigh 1.5 tokens, other astral code points (emoji) 2.0, everything
else 0.25; the sum is rounded up. ASCII therefore costs ceil(len / 4).
"""

from __future__ import annotations

import math

# Ranges of wide code points (reference openviking.md §2.2), sorted by start.
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


def _char_weight(code: int) -> float:
    if code < 0x1100:
        return 0.25
    for start, end in _WIDE_RANGES:
        if start <= code <= end:
            return 1.5
    if code > 0xFFFF:
        return 2.0
    return 0.25


def estimate_text_tokens(text: str | None) -> int:
    """Estimated tokens of a text: ceil of the weighted code-point sum."""
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) / 4)
    total = 0.0
    for ch in text:
        total += _char_weight(ord(ch))
    return math.ceil(total)
