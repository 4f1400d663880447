"""The ids of archived messages' passage vectors, and each message's nearest passage."""

from __future__ import annotations

from collections.abc import Iterable

from app.db.shared.rows import TextHit

# A passage vector's id: its message's id times the stride plus its index in the message
# (app/search/text/passages.py keeps at most 32 passages), so the message is known from the id alone.
PASSAGE_STRIDE = 64


def passage_id(message_id: int, index: int) -> int:
    return message_id * PASSAGE_STRIDE + index


def passage_message(passage: int) -> int:
    return passage // PASSAGE_STRIDE


def passage_index(passage: int) -> int:
    return passage % PASSAGE_STRIDE


def best_passages(hits: Iterable[tuple[int, float]]) -> list[TextHit]:
    """(passage id, distance) rows nearest first -> each message's nearest passage, in order."""
    best: dict[int, float] = {}
    for passage, distance in hits:
        best.setdefault(passage_message(int(passage)), float(distance))
    return [TextHit(message_id, distance) for message_id, distance in best.items()]
