"""The one token estimator (docs/lifecycle.md, "Token estimator").

CJK and other wide code points weigh 1.5 tokens, other astral code points (emoji) 2.0, everything
else 0.25; the sum is rounded up. ASCII therefore costs ceil(len / 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
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
# regex engine (which leaves the GIL to other threads meanwhile), not by a Python loop over every
# character.
_WIDE_RUN_RE = regex.compile(
    "[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in _WIDE_RANGES) + "]+"
)
_OTHER_ASTRAL_RUN_RE = regex.compile("[\\U00010000-\\U0001ffff\\U0002ebf0-\\U0010ffff]+")
# From this length the code points are counted as an array instead: the runs above cost a string
# each (a megabyte of Chinese has a run every few characters), the array one pass.
ARRAY_FROM_CHARS = 1024
# Each range's first code point and the one after its last: a code point is wide when the number
# of edges at or below it is odd.
_WIDE_EDGES = np.array([edge for a, b in _WIDE_RANGES for edge in (a, b + 1)], dtype=np.uint32)


def text_weight(text: str) -> float:
    """The unrounded weighted code-point sum of a text (``estimate_text_tokens`` is its ceiling)."""
    if text.isascii():
        return len(text) / 4
    if len(text) >= ARRAY_FROM_CHARS:
        wide, astral = _counted_as_array(text)
    else:
        wide = sum(map(len, _WIDE_RUN_RE.findall(text, concurrent=True)))
        astral = sum(map(len, _OTHER_ASTRAL_RUN_RE.findall(text, concurrent=True)))
    # Weights 0.25, 1.5 and 2.0 are exact binary fractions: this equals the per-character sum.
    return 0.25 * (len(text) - wide - astral) + 1.5 * wide + 2.0 * astral


def _counted_as_array(text: str) -> tuple[int, int]:
    """Wide code points, and astral ones that are not wide, of the text."""
    # "surrogatepass": a lone surrogate is one code point of weight 0.25, as in the runs above.
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    wide = (np.searchsorted(_WIDE_EDGES, codes, side="right") & 1).astype(bool)
    astral = codes > 0xFFFF
    return int(np.count_nonzero(wide)), int(np.count_nonzero(astral & ~wide))


def estimate_text_tokens(text: str | None) -> int:
    """Estimated tokens of a text: ceil of the weighted code-point sum."""
    if not text:
        return 0
    return math.ceil(text_weight(text))


def fit_to_token_budget(
    texts: Sequence[str], max_tokens: int, count: Callable[[str], int]
) -> list[str]:
    """The texts, in order, while together they hold at most ``max_tokens`` as ``count`` counts
    them: the first that does not fit is cut to its longest prefix that does (found by bisection),
    and the rest are left out. An embedding model's time grows with the tokens it reads, so this
    bounds what one long text can cost."""
    fitted: list[str] = []
    left = max_tokens
    for text in texts:
        tokens = count(text)
        if tokens <= left:
            fitted.append(text)
            left -= tokens
            continue
        low, high = 0, len(text)  # count(text[:low]) fits; count(text[:high]) does not
        while high - low > 1:
            middle = (low + high) // 2
            if count(text[:middle]) <= left:
                low = middle
            else:
                high = middle
        if low and text[:low].strip():
            fitted.append(text[:low])
        break
    return fitted
