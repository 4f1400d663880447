"""The memory word index's phrases of a query, and the CJK spacing both its texts and its
queries go through (docs/recall.md, Hybrid search step 2). CJK here means the Han, kana and Hangul
blocks; their punctuation is not included."""

from __future__ import annotations

import re

from app.search.phrases import Phrase
from app.search.text.query import CJK_CHARS, Query
from app.search.text.words import words

MAX_PHRASES = 24

# A space goes between a CJK character and any adjacent non-space character.
_CJK_GAP_RE = re.compile(f"(?<=[{CJK_CHARS}])(?=\\S)|(?<=\\S)(?=[{CJK_CHARS}])")
_CJK_RE = re.compile(f"[{CJK_CHARS}]")


def memory_phrases(query: Query, max_phrases: int = MAX_PHRASES) -> list[Phrase]:
    """The word-index phrases of a query parsed by ``text.query``: English stems as prefixes
    (``visit`` finds ``visited``), CJK character pairs and whole CJK words, compounds, quoted parts
    and ISO days (``2023-05-07`` is indexed for "yesterday" said on 8 May) as phrases. Each is the
    index's own words (``text.words``) of the CJK-spaced text, as the index holds them."""
    texts = [
        (
            t.literal,
            t.kind == "word" and t.literal.isascii() and t.literal.isalpha() and len(t.literal) > 2,
        )
        for t in query.terms
    ]
    texts += [(w, False) for w in query.cjk_words if len(w) > 2] + [
        (p, False) for p in query.phrases
    ]
    # At most ``max_phrases`` distinct texts, then one phrase for texts of the same words.
    distinct: dict[tuple[str, bool], None] = {}
    for text, prefix in texts:
        spaced = cjk_spaced(text.strip())
        if re.search(r"\w", spaced):
            distinct.setdefault((spaced, prefix), None)
    phrases: dict[Phrase, None] = {}
    for spaced, prefix in list(distinct)[: max(0, max_phrases)]:
        tokens = tuple(words(spaced))
        if tokens:
            phrases.setdefault(Phrase(tokens, prefix), None)
    return list(phrases)


def cjk_spaced(text: str) -> str:
    """The text with every CJK character set apart by spaces, for the unicode61 tokenizer."""
    # The gap pattern is tried at every position: a text without CJK is kept as it is.
    return _CJK_GAP_RE.sub(" ", text) if _CJK_RE.search(text) else text
