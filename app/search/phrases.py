"""The typed phrase every word-index query is made of: its words (``text.words``) and whether
its last word is a prefix. Query understanding builds phrases (``text.memory_phrases``); the
storage layer reads rows for them and the scoring counts them, so no query text is ever parsed
back."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Phrase:
    """One phrase of an FTS5 expression: its words, the last one a prefix when ``prefix``."""

    tokens: tuple[str, ...]
    prefix: bool

    def count_in(self, tokens: list[str]) -> int:
        """How often the phrase occurs in a row's words (FTS5's phrase frequency)."""
        size = len(self.tokens)
        if size == 1:
            return _count_word(self.tokens[0], self.prefix, tokens)
        head, last = list(self.tokens[:-1]), self.tokens[-1]
        hits = 0
        start = 0
        # The first word is never a prefix: list.index finds its places without a Python loop.
        while True:
            try:
                start = tokens.index(head[0], start)
            except ValueError:
                return hits
            window = tokens[start : start + size]
            if len(window) == size and window[:-1] == head:
                word = window[-1]
                hits += word == last or (self.prefix and word.startswith(last))
            start += 1


def _count_word(word: str, prefix: bool, tokens: list[str]) -> int:
    if not prefix:
        return tokens.count(word)
    return sum(token.startswith(word) for token in tokens)
