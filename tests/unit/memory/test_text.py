"""MMR tokens and chunking (the word index's phrases: tests/unit/search/test_memory_phrases.py)."""

from __future__ import annotations

import itertools
import random
import re

import pytest

from app.core.rules.tokens import estimate_text_tokens, text_weight
from app.memory.store.chunking import (
    _split_long_line,
    adds_no_words,
    chunk_text,
    word_set,
)
from app.search.diversity import mmr_tokens

# mmr_tokens.


def test_mmr_tokens() -> None:
    assert mmr_tokens("Green TEA, green tea!") == {"green", "tea"}
    assert mmr_tokens("喝绿茶") == {"喝绿", "绿茶"}
    assert mmr_tokens("茶 tea_time") == {"茶", "tea_time"}
    assert mmr_tokens("") == set()


def test_mmr_tokens_see_near_duplicates_through_word_forms_and_stop_words() -> None:
    one = mmr_tokens("Always run the database migrations before you deploy the backend service.")
    two = mmr_tokens("Always run database migrations before deploying the backend service.")
    assert (
        one == two
        and {"database", "migration", "deploy"} <= one
        and not {"the", "you", "deploying"} & one
    )


# chunk_text.


def test_short_text_is_one_chunk_and_empty_text_none() -> None:
    assert chunk_text("A single short memory.\n\nWith two paragraphs.") == [
        "A single short memory.\n\nWith two paragraphs."
    ]
    assert chunk_text("  \n ") == []


def test_chunks_respect_the_budget_and_overlap_on_line_boundaries() -> None:
    lines = [f"line {i:02d} " + "word " * 15 for i in range(40)]  # 21 tokens each
    chunks = chunk_text("\n".join(lines), max_tokens=100, overlap_tokens=20)
    assert len(chunks) > 1
    assert all(estimate_text_tokens(c) <= 100 for c in chunks)
    for previous, current in itertools.pairwise(chunks):
        last_line = previous.split("\n")[-1]
        assert current.split("\n")[0] == last_line  # one whole line (~21 tokens) carried over
    covered = {line for chunk in chunks for line in chunk.split("\n")}
    assert covered == set(lines)


def test_no_overlap_when_asked() -> None:
    lines = [f"line {i:02d} " + "word " * 15 for i in range(40)]
    chunks = chunk_text("\n".join(lines), max_tokens=100, overlap_tokens=0)
    assert "\n".join(chunks) == "\n".join(lines)


def test_chunks_prefer_paragraph_boundaries() -> None:
    paragraph = "\n".join(["sentence " * 8] * 3)  # about 55 tokens
    text = "\n\n".join(f"Paragraph {i}\n{paragraph}" for i in range(6))
    chunks = chunk_text(text, max_tokens=150, overlap_tokens=0)
    assert len(chunks) > 1
    assert all(chunk.startswith("Paragraph") for chunk in chunks)


def test_a_long_chinese_line_is_split_with_overlap() -> None:
    text = "".join(chr(0x4E00 + i) for i in range(1000))  # 1500 tokens, no line breaks
    chunks = chunk_text(text, max_tokens=400, overlap_tokens=80)
    assert len(chunks) >= 4
    assert all(estimate_text_tokens(c) <= 400 for c in chunks)
    assert chunks[0] == text[: len(chunks[0])]
    for previous, current in itertools.pairwise(chunks):
        carried = max(k for k in range(len(current)) if previous.endswith(current[:k]))
        assert 70 <= carried * 1.5 <= 80  # about 80 tokens of the previous chunk
    assert text.endswith(chunks[-1])


def test_invalid_budget() -> None:
    with pytest.raises(ValueError):
        chunk_text("x", max_tokens=0)


def reference_split_long_line(line: str, size: int) -> list[str]:
    """Words that fit whole, else character by character, a piece closed when the next part
    would pass ``size`` tokens (``text_weight``'s quarter per ASCII character)."""
    pieces, current, used = [], "", 0.0
    for word in re.findall(r"\S+\s*|\s+", line):
        weight = text_weight(word)
        for part in [word] if weight <= size else list(word):
            if current and used + text_weight(part) > size:
                pieces.append(current)
                current, used = "", 0.0
            current += part
            used += text_weight(part)
    return [*pieces, current] if current else pieces


def test_long_lines_are_cut_as_character_by_character() -> None:
    rng = random.Random(11)
    words = ["a", "ab ", "x" * 37, "中文 ", "y" * 200 + " ", "é" * 9, "\U00020000" * 3, "  "]
    for _ in range(2000):
        line = "".join(rng.choice(words) for _ in range(rng.randrange(1, 30)))
        size = rng.randrange(1, 60)
        assert _split_long_line(line, size) == reference_split_long_line(line, size), (line, size)


def test_a_text_adding_no_word_is_covered_and_one_adding_a_word_is_not() -> None:
    existing = "The deploy key lives in the vault under ops/prod, since Tuesday."
    # Order, case, punctuation and inflection add nothing.
    assert adds_no_words(word_set("the deploy KEY lives under ops/prod in the vault"), existing)
    assert adds_no_words(word_set("Deploy keys: in the vault."), existing)
    # A different value, a negation or a new word is new information.
    assert not adds_no_words(word_set("The deploy key lives under ops/staging."), existing)
    assert not adds_no_words(word_set("The deploy key does not live in the vault."), existing)
    assert not adds_no_words(word_set("The deploy key lives in the vault under ops/prod!!"), "")
    assert adds_no_words(word_set(""), existing)


def test_chinese_words_are_compared_by_character_pairs() -> None:
    existing = "陈静: 我跑完了太湖半程马拉松，用时不到两小时。"
    assert adds_no_words(word_set("我跑完了太湖半程马拉松"), existing)
    assert not adds_no_words(word_set("我跑完了东湖半程马拉松"), existing)
    assert not adds_no_words(word_set("我在准备半程马拉松"), existing)
