"""The pure parts of ``bench/context.py``: what the model receives, whether it holds the answer,
how a host pairs messages into turns, and how the baselines fill a number of characters.

"Holds the answer" (the measure of a public long-conversation benchmark, kept as it is so the
figures compare): every content word of the gold answer (lowercase, split on non-word characters,
English stop words removed) occurs as a word in the text (lowercased, split the same way). A gold
answer in Chinese has no word boundaries to split on: its string, spaces removed, must occur in the
text. An answer of several parts (a multi-hop question's two values) is held when every part is.

The stop words are this benchmark's own list (the service's may change while this measure must
not); month names are not among them, so "7 May 2023" needs "7", "may" and "2023".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

SUMMARY_MARK = "[Session History Summary]"
STOP_WORDS = frozenset(
    "a about above after again against all am an and any are as at be because been before being "
    "below between both but by can could did do does doing down during each few for from further "
    "had has have having he her here hers herself him himself his how i if in into is it its "
    "itself just me more most my myself no nor not now of off on once only or other our ours "
    "ourselves out over own same she should so some such than that the their theirs them "
    "themselves then there these they this those through to too under until up very was we were "
    "what when where which while who whom why will with would you your yours yourself".split()
)
_NON_WORD = re.compile(r"\W+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SPACE = re.compile(r"\s+")


def words(text: str) -> list[str]:
    """Lowercase words: the text split on non-word characters."""
    return [w for w in _NON_WORD.split(text.lower()) if w]


def content_words(answer: str) -> list[str]:
    """The answer's words without the stop words."""
    return [w for w in words(answer) if w not in STOP_WORDS]


def is_chinese(answer: str) -> bool:
    return _CJK.search(answer) is not None


def missing(answer: Sequence[str], text: str) -> list[str]:
    """What of the gold answer the text lacks: content words, or a Chinese part's whole string.

    Empty means the text holds the answer. An answer (or a part) with nothing to look for is an
    error in the dataset, not a pass."""
    if not answer:
        raise ValueError("a gold answer needs at least one part")
    found = set(words(text))
    lacking: list[str] = []
    for part in answer:
        if is_chinese(part):
            needle = _SPACE.sub("", part)
            if needle not in text:
                lacking.append(needle)
            continue
        needed = content_words(part)
        if not needed:
            raise ValueError(f"the gold answer {part!r} has no content word")
        lacking += [w for w in needed if w not in found]
    return lacking


def holds_answer(answer: Sequence[str], text: str) -> bool:
    return not missing(answer, text)


def message_text(message: Any) -> str:
    """The text blocks of one message (a string content is one block); other blocks are not text."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def model_text(messages: Iterable[Any], additions: Iterable[str | None] = ()) -> str:
    """What the model receives as text: every message's text blocks, then each distinct
    system prompt addition once."""
    parts = [t for t in (message_text(m) for m in messages) if t]
    seen: list[str] = []
    for addition in additions:
        if addition and addition not in seen:
            seen.append(addition)
    return "\n".join(parts + seen)


def summary_text(messages: Iterable[Any]) -> str:
    """The text of the Working Memory message (the one that starts with the summary mark)."""
    for message in messages:
        text = message_text(message)
        if text.startswith(SUMMARY_MARK):
            return text
    return ""


def host_turns(roles: Sequence[str]) -> list[list[int]]:
    """Message indexes grouped into host turns: a turn is the user's message(s) and the
    assistant's answer(s) after them; a user message after an assistant message starts the next
    turn. A conversation that opens with the assistant has that answer as a turn of its own."""
    turns: list[list[int]] = []
    for i, role in enumerate(roles):
        if not turns or (role == "user" and roles[i - 1] != "user"):
            turns.append([i])
        else:
            turns[-1].append(i)
    return turns


def fit_in_order(texts: Sequence[str], order: Iterable[int], chars: int) -> list[int]:
    """The indexes of ``order`` taken while their texts, joined by newlines, fit in ``chars``;
    the first that does not fit ends it (a window is contiguous in its own order)."""
    taken: list[int] = []
    used = -1  # n texts take n - 1 separators
    for i in order:
        cost = len(texts[i]) + 1
        if used + cost > chars:
            break
        taken.append(i)
        used += cost
    return taken


def newest_fitting(texts: Sequence[str], chars: int) -> list[int]:
    """The newest texts that fit in ``chars``, oldest first."""
    return sorted(fit_in_order(texts, range(len(texts) - 1, -1, -1), chars))


def joined(texts: Sequence[str], indexes: Iterable[int]) -> str:
    return "\n".join(texts[i] for i in indexes)


def held_beside(answer: Sequence[str], value: Sequence[str], text: str) -> bool:
    """Whether one line of the text holds both the answer and the value: a stricter reading of a
    temporal answer (the date on the fact's own line, not a date of something else that day)."""
    return any(
        holds_answer(answer, line) and holds_answer(value, line) for line in text.split("\n")
    )
