"""The baselines of ``bench/retrieval.py``, computed over the same turns in the same run.

- **BM25**: Okapi k1 1.2, b 0.75 over lowercase words and CJK character pairs, English and Chinese
  stop words removed, no stemming, the conversation's own statistics, the turn as stored (speaker
  name included);
- **dense**: cosine between the local model's query vector and each turn's passage vector, the turn
  as stored.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from app.search.text.query import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, normalise
from bench.conversations import Conversation

Ranker = Callable[[str], list[int]]


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for word in normalise(text).replace("?", " ").split():
        word = "".join(ch for ch in word if ch.isalnum())
        for stop in CHINESE_STOPWORDS:
            word = word.replace(stop, " ")
        for piece in word.split():
            if piece.isascii():
                if piece not in ENGLISH_STOPWORDS and len(piece) > 1:
                    out.append(piece)
            else:
                out += (
                    [piece] if len(piece) < 2 else [piece[i : i + 2] for i in range(len(piece) - 1)]
                )
    return out


def bm25_baseline(conv: Conversation) -> Ranker:
    docs = [_tokens(t.text) for t in conv.turns]
    n, avg = len(docs), sum(map(len, docs)) / len(docs)
    df: dict[str, int] = defaultdict(int)
    for d in docs:
        for token in set(d):
            df[token] += 1

    def rank(question: str) -> list[int]:
        q = set(_tokens(question))
        scores = []
        for i, d in enumerate(docs):
            s = 0.0
            for token in q:
                tf = d.count(token)
                if tf:
                    idf = math.log(1 + (n - df[token] + 0.5) / (df[token] + 0.5))
                    s += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(d) / avg))
            if s > 0:
                scores.append((-s, i))
        return [i for _, i in sorted(scores)[:10]]

    return rank


def dense_baseline(vectors: list[list[float]], query_vectors: dict[str, list[float]]) -> Ranker:
    def rank(question: str) -> list[int]:
        q = query_vectors[question]
        sims = [(-sum(a * b for a, b in zip(q, v, strict=True)), i) for i, v in enumerate(vectors)]
        return [i for _, i in sorted(sims)[:10]]

    return rank
