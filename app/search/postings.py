"""The postings of the memory word index: pure functions, no I/O.

Scoring BM25 over every chunk that holds a query word costs as much as the number of such chunks
(bench/RESULTS.md, Measurements behind the code). Both backends therefore keep, beside each chunk's words,
one posting per (partition, term, chunk) with the term's frequency and its *impact* (the BM25 term
weight without the idf), b-tree-ordered by impact: a search reads the best few postings of each
query term, then scores those candidates exactly. Kept per-partition counters give the statistics
(chunks, words, chunks holding a term), so nothing at query time grows with the partition.

Terms are the chunk's words, plus every pair of adjacent CJK characters (``支付``): a Chinese
phrase then has postings of its own, where its single characters are common to most chunks.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from app.search.bm25 import BM25_B, BM25_K1, impact
from app.search.phrases import Phrase

# Unified ideographs, kana and Hangul: one tokenizer word per character once spaced for FTS.
_CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def is_cjk(token: str) -> bool:
    return len(token) == 1 and _CJK_CHAR.match(token) is not None


def chunk_terms(tokens: list[str]) -> Counter[str]:
    """The posting terms of a chunk's words with their frequencies: each word, and each pair of
    adjacent CJK characters."""
    terms = Counter(tokens)
    match = _CJK_CHAR.match  # is_cjk, inlined: it runs for every word of every chunk written
    cjk = [len(t) == 1 and match(t) is not None for t in tokens]
    terms.update(tokens[i] + tokens[i + 1] for i in range(len(tokens) - 1) if cjk[i] and cjk[i + 1])
    return terms


def phrase_keys(phrase: Phrase) -> list[str]:
    """The terms every row holding the phrase holds (its prefix word aside): the CJK pairs of a run of
    CJK characters, the other words as they are."""
    tokens = list(phrase.tokens[:-1] if phrase.prefix else phrase.tokens)
    keys: list[str] = []
    index = 0
    while index < len(tokens):
        run = index
        while run < len(tokens) and is_cjk(tokens[run]):
            run += 1
        if run - index >= 2:
            keys += [tokens[i] + tokens[i + 1] for i in range(index, run - 1)]
            index = run
        else:
            keys.append(tokens[index])
            index += 1
    return list(dict.fromkeys(keys))


@dataclass(frozen=True, slots=True)
class Posting:
    partition: str
    term: str
    chunk_id: int
    frequency: int
    impact: float


TermCounts = list[tuple[str, int]]


def term_counts(tokens: list[str]) -> TermCounts:
    """A chunk's posting terms with their frequencies, in term order: pure work that a writer does
    before its transaction where it can (most of what posting a long memory costs)."""
    return sorted(chunk_terms(tokens).items())


def postings(
    partition: str,
    chunk_id: int,
    tokens: list[str],
    average_length: float,
    counts: TermCounts | None = None,
) -> list[Posting]:
    """One chunk's postings, in term order (``counts``: its ``term_counts``, where known)."""
    return [
        Posting(partition, term, chunk_id, count, impact(count, len(tokens), average_length))
        for term, count in (term_counts(tokens) if counts is None else counts)
    ]


def term_deltas(changes: Iterable[tuple[str, list[str], int]]) -> list[tuple[str, str, int]]:
    """(partition, term, change in chunks holding it) for chunks added (+1) or removed (-1), in
    (partition, term) order: concurrent writers then lock counter rows in one order."""
    deltas: Counter[tuple[str, str]] = Counter()
    for partition, tokens, sign in changes:
        for term in chunk_terms(tokens):
            deltas[(partition, term)] += sign
    return [(p, t, d) for (p, t), d in sorted(deltas.items()) if d]


def added_term_deltas(posted: Iterable[Posting]) -> list[tuple[str, str, int]]:
    """``term_deltas`` of the chunks whose postings these are, all added: one per posting, so the
    chunks' terms are not counted a second time."""
    deltas = Counter((x.partition, x.term) for x in posted)
    return [(p, t, d) for (p, t), d in sorted(deltas.items())]


def partition_deltas(
    changes: Iterable[tuple[str, list[str], int]],
) -> list[tuple[str, int, int]]:
    """(partition, change in chunks, change in words), in partition order."""
    chunks: Counter[str] = Counter()
    words: Counter[str] = Counter()
    for partition, tokens, sign in changes:
        chunks[partition] += sign
        words[partition] += sign * len(tokens)
    return [(p, chunks[p], words[p]) for p in sorted(chunks) if chunks[p] or words[p]]


_WORD, _PREFIX, _PAIR, _POSITIONS = range(4)


@dataclass(frozen=True, slots=True)
class _Part:
    kind: int
    text: str  # the word, the prefix, or the CJK pair
    phrase: Phrase
    idf: float
    words: Collection[str] | None = None  # a prefix's words, where known
    # A phrase read from positions: the words and CJK pairs every chunk holding it holds.
    keys: tuple[str, ...] = ()


def score_chunks(
    rows: Iterable[tuple[int, list[str]]],
    phrases: list[Phrase],
    idfs: list[float],
    average_length: float,
    prefix_words: Mapping[str, Collection[str]] | None = None,
) -> list[tuple[int, float]]:
    """FTS5's bm25() of each (chunk id, words) row (negative, lower is better). A phrase's frequency
    is read from the chunk's word counts where its positions do not matter; ``prefix_words`` may
    give every word each prefix stands for among the rows (then looked up, not searched for)."""
    known = prefix_words or {}
    parts = [_part(p, idf, known.get(p.tokens[-1])) for p, idf in zip(phrases, idfs, strict=True)]
    # Which parts each word and CJK pair counts for (a word, a known prefix's words, a pair): a
    # row's distinct words are looked up once, whatever the number of parts and prefix words.
    by_word: dict[str, list[int]] = {}
    by_pair: dict[str, list[int]] = {}
    searched: list[int] = []  # unknown prefixes and phrases read from positions
    for index, part in enumerate(parts):
        if part.kind == _WORD:
            by_word.setdefault(part.text, []).append(index)
        elif part.kind == _PREFIX and part.words is not None:
            for word in part.words:
                by_word.setdefault(word, []).append(index)
        elif part.kind == _PAIR:
            by_pair.setdefault(part.text, []).append(index)
        else:
            searched.append(index)
    with_pairs = bool(by_pair) or any(_is_pair(k) for p in parts for k in p.keys)
    average = average_length if average_length > 0 else 1.0
    scored = []
    for chunk_id, tokens in rows:
        counts = Counter(tokens)
        pairs = _pair_counts(tokens) if with_pairs else _NO_PAIRS
        frequencies = [0] * len(parts)
        for word, count in counts.items():
            for index in by_word.get(word, ()):
                frequencies[index] += count
        for pair, indexes in by_pair.items():
            for index in indexes:
                frequencies[index] = pairs.get(pair, 0)
        for index in searched:
            frequencies[index] = _frequency(parts[index], tokens, counts, pairs)
        # ``impact`` written out: this runs for every candidate and query phrase.
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(tokens) / average)
        total = 0.0
        for part, frequency in zip(parts, frequencies, strict=True):
            if frequency:
                total += part.idf * (frequency * (BM25_K1 + 1) / (frequency + norm))
        scored.append((chunk_id, -total))
    return scored


def score_chunk(
    tokens: list[str], phrases: list[Phrase], idfs: list[float], average_length: float
) -> float:
    """``score_chunks`` of one chunk."""
    return score_chunks([(0, tokens)], phrases, idfs, average_length)[0][1]


def _part(phrase: Phrase, idf: float, prefix_words: Collection[str] | None = None) -> _Part:
    words = phrase.tokens
    if len(words) == 1:
        if phrase.prefix:
            return _Part(_PREFIX, words[0], phrase, idf, prefix_words)
        return _Part(_WORD, words[0], phrase, idf)
    if len(words) == 2 and not phrase.prefix and is_cjk(words[0]) and is_cjk(words[1]):
        return _Part(_PAIR, words[0] + words[1], phrase, idf)
    return _Part(_POSITIONS, "", phrase, idf, keys=tuple(phrase_keys(phrase)))


def _frequency(part: _Part, tokens: list[str], counts: Counter[str], pairs: Counter[str]) -> int:
    if part.kind == _WORD:
        return counts.get(part.text, 0)
    if part.kind == _PREFIX:
        if part.words is not None and len(part.words) <= len(counts):
            return sum(counts.get(word, 0) for word in part.words)
        return sum(count for token, count in counts.items() if token.startswith(part.text))
    if part.kind == _PAIR:
        return pairs.get(part.text, 0)
    if any(key not in counts and key not in pairs for key in part.keys):
        return 0  # a word or a CJK pair of the phrase is missing: no need to look at positions
    return part.phrase.count_in(tokens)


_NO_PAIRS: Counter[str] = Counter()


def _is_pair(key: str) -> bool:
    return len(key) == 2 and is_cjk(key[0]) and is_cjk(key[1])


def _pair_counts(tokens: list[str]) -> Counter[str]:
    """How often each pair of adjacent words occurs (counted in C: cheaper than picking)."""
    return Counter(map(operator.add, tokens, tokens[1:]))
