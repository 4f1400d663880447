"""Chunking of memory text, and the word sets that tell whether a text adds anything new.

Pure functions. The word index's phrases and CJK spacing are search's text analysis
(app/search/text/memory_phrases.py).
"""

from __future__ import annotations

import re

from app.core.rules.tokens import estimate_text_tokens, text_weight
from app.search.text.query import document_tokens

# A piece of a chunk: its text, its token weight, and what joins it to the piece before it
# ("\n" between lines, "" between the segments of one over-long line).
_Unit = tuple[str, float, str]


def _weight(text: str) -> float:
    """Unrounded token weight of a text; ``estimate_text_tokens`` is its ceiling."""
    return text_weight(text)


def _split_long_line(line: str, size: int) -> list[str]:
    """Cut a line into segments of at most ``size`` tokens, at spaces where possible."""
    pieces: list[str] = []
    current, used = "", 0.0
    weights: dict[str, float] = {}  # a long line repeats its words: each is weighed once
    for word in re.findall(r"\S+\s*|\s+", line):
        word_weight = weights.get(word)
        if word_weight is None:
            word_weight = weights[word] = _weight(word)
        if word_weight > size and word.isascii():  # a URL, a base64 blob, minified JSON
            current, used = _cut_ascii_word(word, size, pieces, current, used)
            continue
        parts = [(word, word_weight)] if word_weight <= size else [(c, _weight(c)) for c in word]
        for part, weight in parts:
            if current and used + weight > size:
                pieces.append(current)
                current, used = "", 0.0
            current += part
            used += weight
    if current:
        pieces.append(current)
    return pieces


def _cut_ascii_word(
    word: str, size: int, pieces: list[str], current: str, used: float
) -> tuple[str, float]:
    """``_split_long_line``'s character-by-character cut of an over-long word, a slice at a time:
    an ASCII character weighs a quarter, and every weight is a multiple of a quarter (exact in
    binary), so the characters that still fit are ``(size - used) * 4``. Returns the piece being
    filled and its weight."""
    start = 0
    while start < len(word):
        room = int((size - used) * 4)
        if room < 1:
            if current:
                pieces.append(current)
                current, used = "", 0.0
                continue
            room = 1  # a piece holds at least one character
        taken = word[start : start + room]
        current += taken
        used += len(taken) / 4
        start += len(taken)
    return current, used


def _units(text: str, max_tokens: int, overlap: int) -> list[_Unit]:
    """The pieces of a text; an over-long line becomes overlap-sized segments."""
    units: list[_Unit] = []
    for line in text.split("\n"):
        if _weight(line) <= max_tokens:
            units.append((line, _weight(line) + 0.25, "\n"))
            continue
        segments = _split_long_line(line, overlap or max_tokens)
        units.append((segments[0], _weight(segments[0]) + 0.25, "\n"))
        units.extend((segment, _weight(segment), "") for segment in segments[1:])
    return units


def _paragraph_cut(units: list[_Unit]) -> int:
    """Where to end a full chunk: after its last blank line in the second half, else at the end."""
    total = _total(units)
    used = 0.0
    cut = len(units)
    for index, (piece, weight, _) in enumerate(units):
        used += weight
        if not piece.strip() and used * 2 >= total and index + 1 < len(units):
            cut = index + 1
    return cut


def _overlap_tail(units: list[_Unit], overlap: int, cap: float) -> list[_Unit]:
    """Trailing pieces worth at most ``overlap`` tokens; else the last piece alone, up to ``cap``."""
    tail: list[_Unit] = []
    used = 0.0
    for unit in reversed(units):
        if used + unit[1] > overlap:
            break
        tail.insert(0, unit)
        used += unit[1]
    if not tail and overlap > 0 and units and units[-1][1] <= cap:
        tail = [units[-1]]  # a line longer than the overlap is carried whole
    return tail


def _emit(chunks: list[str], units: list[_Unit]) -> None:
    text = "".join(sep + piece for piece, _, sep in units)[len(units[0][2]) :] if units else ""
    text = text.strip("\n")
    if text.strip():
        chunks.append(text)


def _total(units: list[_Unit]) -> float:
    return sum(weight for _, weight, _ in units)


def chunk_text(text: str, max_tokens: int = 400, overlap_tokens: int = 80) -> list[str]:
    """Split a memory into chunks of about ``max_tokens`` with ``overlap_tokens`` carried over."""
    # docs/recall.md, Hybrid search (chunks of ~400 tokens with 80 overlap, docs/peers.md, OpenClaw §2.2).
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not text.strip():
        return []
    if estimate_text_tokens(text) <= max_tokens:
        return [text]
    overlap = min(max(0, overlap_tokens), max_tokens - 1)
    chunks: list[str] = []
    current: list[_Unit] = []
    for unit in _units(text, max_tokens, overlap):
        if current and _total(current) + unit[1] > max_tokens:
            cut = _paragraph_cut(current)
            if _total(current[cut:]) + unit[1] > max_tokens:
                cut = len(current)  # what follows the paragraph would not fit with this piece
            _emit(chunks, current[:cut])
            current = _overlap_tail(current[:cut], overlap, max_tokens / 2) + current[cut:]
            while current and _total(current) + unit[1] > max_tokens:
                current.pop(0)  # only carried overlap can go here
        current.append(unit)
    _emit(chunks, current)
    return chunks


def word_set(text: str) -> frozenset[str]:
    """The words of a text as search counts them (stemmed, CJK character pairs), stop words
    included: a "not" is information."""
    return frozenset(document_tokens(text))


def adds_no_words(words: frozenset[str], existing: str) -> bool:
    """Whether every word of a new text (``word_set``) is already in ``existing``: a text that
    adds a word, however close its vector, may say something ``existing`` does not."""
    return words <= word_set(existing)
