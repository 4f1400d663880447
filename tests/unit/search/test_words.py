"""``app.search.text.words.words``: FTS5's unicode61 words (letters, numbers and private-use characters;
lower case without diacritics), whatever its per-character cache holds."""

from __future__ import annotations

import random
import unicodedata

import pytest

from app.search.text import words as fts5_words


def reference_words(text: str) -> list[str]:
    """unicode61 with ``remove_diacritics 2``, one character at a time."""
    found, current = [], []
    for char in text:
        category = unicodedata.category(char)
        if category[0] in "LN" or category == "Co":
            decomposed = unicodedata.normalize("NFD", char.lower())
            current.append(
                "".join(c for c in decomposed if not unicodedata.combining(c)) or char.lower()
            )
        elif current:
            found.append("".join(current))
            current = []
    if current:
        found.append("".join(current))
    return found


def random_text(rng: random.Random) -> str:
    planes = [(0x20, 0x7F), (0x80, 0x2FF), (0x300, 0x36F), (0x3000, 0x9FFF), (0xE000, 0xF8FF)]
    chars = []
    for _ in range(rng.randrange(0, 80)):
        low, high = rng.choice([*planes, (0x10000, 0x2FFFF)])
        chars.append(chr(rng.randrange(low, high)))
    return "".join(chars)


@pytest.mark.parametrize("cache_size", [2, 65_536])
def test_words_are_unicode61_words(monkeypatch: pytest.MonkeyPatch, cache_size: int) -> None:
    # A cache of two entries is cleared all the time: the answer must not depend on it.
    monkeypatch.setattr(fts5_words, "_FOLDED_MAX", cache_size)
    monkeypatch.setattr(fts5_words, "_FOLDED", {})
    rng = random.Random(cache_size)
    for _ in range(2000):
        text = random_text(rng)
        assert fts5_words.words(text) == reference_words(text), text
        ascii_text = "".join(chr(rng.randrange(0, 0x80)) for _ in range(rng.randrange(80)))
        assert fts5_words.words(ascii_text) == reference_words(ascii_text), ascii_text
    assert len(fts5_words._FOLDED) <= cache_size


def test_words_fold_case_and_diacritics() -> None:
    assert fts5_words.words("Ünïcode café, NAÏVE_test 支付 x2") == [
        "unicode",
        "cafe",
        "naive",
        "test",
        "支付",
        "x2",
    ]
