"""The passages of a message (or memory chunk) that get vectors of their own, beside the whole
text's (pure).

One vector for a whole message blurs what it says: a turn that tells a fact between two remarks
of small talk, or a long reply that covers five things, sits between all of them, and a question
about one of them finds the turns that say little else first. So archive search also scores a
message by its best passage (``app.search.ranking.blended_similarity``), and memory search a
chunk (``app.search.fusion.with_best_passage``). A passage is one
sentence or line (a very short one joined to its neighbour), with the message's speaker label in
front (who said it is part of what a question asks). A message of one passage needs none: its
whole vector already is that passage's.

The number of passages is bounded, so is their text: past ``MAX_PASSAGES`` pieces, consecutive
pieces are packed into ``MAX_PASSAGES`` passages of similar length, and only the first
``MAX_PASSAGE_TEXT`` characters of a message are read (the model reads 512 tokens of a passage
at most, and embedding costs what the model reads: bench/RESULTS.md, Measurements behind the code).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from app.search.text.query import CJK_CHARS, strip_speaker

V = TypeVar("V")

# A text's similarity to a query is its whole vector's and its best passage's, weighted as here
# (chosen on the tuning half of bench/retrieval.py for archive search: 0.4 and 0.5 within half a
# point overall and equal on paraphrases, 0.3 five points lower on paraphrases; 0.5 was also the
# best weight for the vectors alone).
PASSAGE_WEIGHT = 0.5
# A piece of fewer words and characters than these ("1.", "Dr.", "Thanks!") joins its neighbour.
MIN_PASSAGE_WORDS, MIN_PASSAGE_CHARS = 3, 16
MAX_PASSAGES = 32
MAX_PASSAGE_CHARS = 1000
MAX_PASSAGE_TEXT = 16_000
# A piece ends at a line break, or after a sentence's closing mark followed by a space (directly
# after a CJK one).
_LINES = re.compile(r"\n+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])")
_LIST_MARK = re.compile(r"\d{1,3}[.)]")
_CJK = re.compile(f"[{CJK_CHARS}]")


def message_passages(text: str) -> list[str]:
    """The passages of a stored message text; none when it holds one passage or fewer."""
    body = strip_speaker(text)
    label = text[: len(text) - len(body)]
    pieces = _joined_short(_pieces(body[:MAX_PASSAGE_TEXT]))
    if len(pieces) > MAX_PASSAGES:
        pieces = _packed(pieces, MAX_PASSAGES)
    if len(pieces) < 2:
        return []
    return [label + piece for piece in pieces]


def embedding_order(texts: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """(whole text, its passages) pairs as one list to embed: every whole text first, then every
    passage in order, the layout ``with_their_passages`` reads the vectors back in."""
    return [whole for whole, _ in texts] + [p for _, passages in texts for p in passages]


def with_their_passages(
    texts: Sequence[tuple[str, Sequence[str]]], vectors: Iterable[V]
) -> list[tuple[V, tuple[V, ...]]]:
    """The vectors of ``embedding_order(texts)`` given back to each text: (whole, passages)."""
    flat: Iterator[V] = iter(vectors)
    whole = [next(flat) for _ in texts]
    return [
        (own, tuple(next(flat) for _ in passages))
        for own, (_, passages) in zip(whole, texts, strict=True)
    ]


def _pieces(body: str) -> list[str]:
    """Sentences and lines, stripped, each at most ``MAX_PASSAGE_CHARS`` long (a longer one is cut);
    a line's list number ("2.") stays with its item."""
    out: list[str] = []
    for line in _LINES.split(body):
        sentences = [p.strip() for p in _SENTENCE_END.split(line) if p.strip()]
        if len(sentences) > 1 and _LIST_MARK.fullmatch(sentences[0]):
            sentences[:2] = [f"{sentences[0]} {sentences[1]}"]
        for piece in sentences:
            while piece:
                out.append(piece[:MAX_PASSAGE_CHARS].strip())
                piece = piece[MAX_PASSAGE_CHARS:].strip()
    return [p for p in out if p]


def _joined_short(pieces: list[str]) -> list[str]:
    """Short pieces joined to the next one (the last to the one before): alone, a list number or an abbreviation's first half is little more than the
    speaker label, and would come near any question that names the speaker."""
    joined: list[str] = []
    current = ""
    for piece in pieces:
        current = f"{current} {piece}" if current else piece
        if len(current) >= MIN_PASSAGE_CHARS or _words(current) >= MIN_PASSAGE_WORDS:
            joined.append(current)
            current = ""
    if current:
        if joined:
            joined[-1] = f"{joined[-1]} {current}"
        else:
            joined.append(current)
    return joined


def _words(text: str) -> int:
    """Words of a text: whitespace-separated runs, each CJK character counted as one."""
    cjk = len(_CJK.findall(text))
    return len(_CJK.sub(" ", text).split()) + cjk


def _packed(pieces: list[str], count: int) -> list[str]:
    """Consecutive pieces joined into ``count`` passages of about equal length (in order)."""
    total = sum(len(p) for p in pieces)
    share = total / count
    passages: list[str] = []
    current: list[str] = []
    size = 0
    for index, piece in enumerate(pieces):
        current.append(piece)
        size += len(piece)
        left = len(pieces) - index - 1
        room = count - len(passages) - 1
        if (size >= share and room > 0) or left == room:
            passages.append(" ".join(current))
            current, size = [], 0
    if current:
        passages.append(" ".join(current))
    return passages
