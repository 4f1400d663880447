"""Maximal marginal relevance: reorder a ranked list so that near-duplicates of what is already
chosen step back (docs/recall.md, Hybrid search step 6). Used by memory search and by ranked
archive search; pure.

Similarity is Jaccard over token sets (``mmr_tokens``): the text's tokens as search sees them
(``app.search.text.query.document_tokens``: stemmed, CJK bigrams) without stop words, so "before you
deploy the" and "before deploying the" read as the near-duplicates they are.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from app.search.text.query import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, document_tokens

# Only a text's opening is compared: tokenising costs what the text's length costs, so a 100 KB
# memory or tool output took a large share of a search's CPU with the interpreter's lock held
# (a concurrent small request waited on it), and the cache below kept every such text alive.
MMR_TEXT_CHARS = 1000


def mmr_tokens(text: str) -> frozenset[str]:
    """What MMR compares of a text: the tokens of its first ``MMR_TEXT_CHARS`` characters."""
    return _opening_tokens(text[:MMR_TEXT_CHARS])


# A search compares the same memories again and again: their tokens are kept by text.
@functools.lru_cache(maxsize=2048)
def _opening_tokens(opening: str) -> frozenset[str]:
    return frozenset(
        t
        for t in document_tokens(opening)
        if t not in ENGLISH_STOPWORDS and t not in CHINESE_STOPWORDS
    )


def mmr_order(
    relevance: Sequence[float],
    tokens: Sequence[frozenset[str]],
    lambda_: float,
    limit: int | None = None,
) -> list[tuple[int, float]]:
    """(index, MMR value) of up to ``limit`` items, chosen one at a time by the largest
    λ·relevance − (1−λ)·(largest similarity to a chosen item). Relevance is clamped to [0, 1] for
    the value; ties go to the larger relevance as given, then to the earlier index."""
    if not 0.0 <= lambda_ <= 1.0:
        raise ValueError("lambda_ must be within [0, 1]")
    count = len(relevance) if limit is None else min(max(0, limit), len(relevance))
    clamped = [min(1.0, max(0.0, r)) for r in relevance]
    sizes = [len(t) for t in tokens]
    max_sim = [0.0] * len(relevance)
    remaining = list(range(len(relevance)))
    chosen: list[tuple[int, float]] = []
    while len(chosen) < count:
        pick = max(
            remaining,
            key=lambda i: (lambda_ * clamped[i] - (1 - lambda_) * max_sim[i], relevance[i], -i),
        )
        remaining.remove(pick)
        chosen.append((pick, lambda_ * clamped[pick] - (1 - lambda_) * max_sim[pick]))
        picked, picked_size = tokens[pick], sizes[pick]
        for i in remaining:
            # Jaccard written out, the union's size from the sets' sizes: the hot loop of a search.
            shared = len(tokens[i] & picked)
            union = sizes[i] + picked_size - shared
            if union and shared / union > max_sim[i]:
                max_sim[i] = shared / union
    return chosen
