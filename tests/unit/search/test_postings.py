"""The pure half of the memory word postings (app/search/postings.py)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from app.search.bm25 import impact
from app.search.phrases import Phrase
from app.search.postings import (
    added_term_deltas,
    chunk_terms,
    is_cjk,
    partition_deltas,
    phrase_keys,
    postings,
    score_chunk,
    score_chunks,
    term_deltas,
)

WORDS = ["deploy", "deployed", "deploying", "script", "ops", "sh", "部", "署", "失", "败", "x"]


def _bm25_by_positions(
    tokens: list[str], phrases: list[Phrase], idfs: list[float], average: float
) -> float:
    """FTS5's bm25() straight from its definition: phrase frequencies counted at every position."""
    total = 0.0
    for phrase, idf in zip(phrases, idfs, strict=True):
        size = len(phrase.tokens)
        tf = 0
        for start in range(len(tokens) - size + 1):
            window = tokens[start : start + size]
            head_ok = window[:-1] == list(phrase.tokens[:-1])
            last = window[-1]
            tf += head_ok and (
                last == phrase.tokens[-1] or (phrase.prefix and last.startswith(phrase.tokens[-1]))
            )
        if tf:
            norm = 1.2 * (1 - 0.75 + 0.75 * len(tokens) / average)
            total += idf * tf * 2.2 / (tf + norm)
    return -total


def _frequency(phrase: Phrase, tokens: list[str]) -> int:
    """The phrase frequency a chunk's score implies (idf 1, chunk of average length)."""
    score = -score_chunk(tokens, [phrase], [1.0], float(len(tokens)))
    return next((f for f in range(len(tokens) + 1) if math.isclose(score, impact(f, 1, 1.0))), -1)


def test_terms_are_the_words_and_adjacent_cjk_pairs() -> None:
    assert chunk_terms(["部", "署", "deploy", "失", "败", "失", "败", "x"]) == {
        "部": 1,
        "署": 1,
        "部署": 1,
        "deploy": 1,
        "失": 2,
        "败": 2,
        "失败": 2,
        "败失": 1,
        "x": 1,
    }
    assert chunk_terms([]) == {}
    assert chunk_terms(["ab", "cd"]) == {"ab": 1, "cd": 1}  # pairs of CJK characters only


@pytest.mark.parametrize(
    ("tokens", "prefix", "keys"),
    [
        (("deploy",), False, ["deploy"]),
        (("deploy",), True, []),  # a lone prefix has no exact term
        (("ops", "deploy", "sh"), False, ["ops", "deploy", "sh"]),
        (("ops", "deploy"), True, ["ops"]),
        (("部", "署"), False, ["部署"]),
        (("部", "署", "失", "败"), False, ["部署", "署失", "失败"]),
        (("x", "部", "署", "x"), False, ["x", "部署"]),
        (("部",), False, ["部"]),
    ],
)
def test_phrase_keys_are_terms_every_holding_chunk_has(
    tokens: tuple[str, ...], prefix: bool, keys: list[str]
) -> None:
    assert phrase_keys(Phrase(tokens, prefix)) == keys


def test_every_holding_chunk_has_the_phrase_keys() -> None:
    rng = random.Random(1)
    for _ in range(500):
        tokens = [rng.choice(WORDS) for _ in range(rng.randint(1, 12))]
        start = rng.randrange(len(tokens))
        phrase = Phrase(tuple(tokens[start : start + rng.randint(1, 4)]), rng.random() < 0.3)
        assert set(phrase_keys(phrase)) <= set(chunk_terms(tokens))


def test_impact_is_bm25s_term_weight_without_idf() -> None:
    assert impact(1, 10, 10.0) == pytest.approx(1.0)  # at average length, tf 1 weighs 1
    assert impact(3, 10, 10.0) == pytest.approx(3 * 2.2 / (3 + 1.2))
    assert impact(1, 20, 10.0) < impact(1, 10, 10.0) < impact(1, 5, 10.0)
    assert impact(2, 10, 0.0) == impact(2, 10, 1.0)  # no average yet: taken as 1
    longer = [impact(tf, 10, 10.0) for tf in range(1, 50)]
    assert longer == sorted(longer) and longer[-1] < 2.2  # saturates at k1 + 1


def test_postings_carry_frequency_and_impact_in_term_order() -> None:
    found = postings("t:user:u", 7, ["b", "a", "b"], 3.0)
    assert [(p.term, p.frequency) for p in found] == [("a", 1), ("b", 2)]
    assert all(p.partition == "t:user:u" and p.chunk_id == 7 for p in found)
    assert found[1].impact == pytest.approx(impact(2, 3, 3.0))


def test_score_is_fts5_bm25_for_every_kind_of_phrase() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        tokens = [rng.choice(WORDS) for _ in range(rng.randint(1, 15))]
        phrases = []
        for _ in range(rng.randint(1, 4)):
            size = rng.randint(1, 3)
            phrases.append(
                Phrase(tuple(rng.choice(WORDS) for _ in range(size)), rng.random() < 0.4)
            )
        idfs = [rng.uniform(1e-6, 5.0) for _ in phrases]
        average = rng.uniform(1.0, 20.0)
        expected = _bm25_by_positions(tokens, phrases, idfs, average)
        assert score_chunk(tokens, phrases, idfs, average) == pytest.approx(expected, rel=1e-12)
        # the same with each prefix's words given (looked up instead of searched for)
        known = {p.tokens[-1]: [w for w in WORDS if w.startswith(p.tokens[-1])] for p in phrases}
        [(_, given)] = score_chunks([(1, tokens)], phrases, idfs, average, known)
        assert given == pytest.approx(expected, rel=1e-12)


def test_prefix_frequency_counts_every_word_with_the_prefix() -> None:
    tokens = ["deploy", "deployed", "ops", "deploying", "de"]
    assert _frequency(Phrase(("deploy",), True), tokens) == 3
    assert _frequency(Phrase(("deploy",), False), tokens) == 1
    assert _frequency(Phrase(("ops", "deploy"), True), tokens) == 1
    assert _frequency(Phrase(("ops", "x"), False), tokens) == 0
    assert _frequency(Phrase(("部", "署"), False), ["部", "署", "x", "部", "署"]) == 2


def test_deltas_net_out_and_come_in_lock_order() -> None:
    changes = [
        ("t:b", ["x", "部", "署"], 1),
        ("t:a", ["y", "x", "x"], 1),
        ("t:a", ["x"], -1),
        ("t:b", ["x"], 1),
    ]
    assert term_deltas(changes) == [
        ("t:a", "y", 1),  # t:a's x: +1 -1
        ("t:b", "x", 2),
        ("t:b", "署", 1),  # code point order, as the "C" collation sorts
        ("t:b", "部", 1),
        ("t:b", "部署", 1),
    ]
    assert partition_deltas(changes) == [("t:a", 0, 2), ("t:b", 2, 4)]
    assert term_deltas([("t:a", ["x"], 1), ("t:a", ["x"], -1)]) == []
    assert partition_deltas([("t:a", ["x"], 1), ("t:a", ["x"], -1)]) == []


def test_adding_then_removing_every_subset_leaves_nothing() -> None:
    chunks = [("t:a", ["x", "部", "署"]), ("t:a", ["x"]), ("t:b", ["y", "y"])]
    for size in range(len(chunks) + 1):
        for subset in itertools.combinations(chunks, size):
            added = [(p, t, 1) for p, t in subset]
            removed = [(p, t, -1) for p, t in subset]
            assert term_deltas(added + removed) == []
            assert partition_deltas(added + removed) == []
            assert sum(d for _, _, d in term_deltas(added)) == sum(
                len(chunk_terms(t)) for _, t in subset
            )
    assert math.isclose(impact(1, 1, 1.0), 1.0)


# Hiragana and katakana, CJK extension A, unified ideographs, Hangul syllables, compatibility ideographs.
CJK_BLOCKS = [
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
]


def test_cjk_tokens_are_single_characters_of_the_cjk_blocks() -> None:
    for point in range(0x110000):
        if 0xD800 <= point <= 0xDFFF:
            continue  # surrogates are no text
        expected = any(low <= point <= high for low, high in CJK_BLOCKS)
        assert is_cjk(chr(point)) is expected, hex(point)
    assert not is_cjk("") and not is_cjk("支付") and not is_cjk("a")


def test_added_chunks_deltas_from_their_postings_are_their_term_deltas() -> None:
    rng = random.Random(5)
    for _ in range(300):
        chunks = [
            (rng.choice(["t:a", "t:b"]), i, rng.choices(WORDS, k=rng.randrange(0, 12)))
            for i in range(rng.randrange(0, 6))
        ]
        posted = [x for p, i, t in chunks for x in postings(p, i, t, 4.0)]
        assert added_term_deltas(posted) == term_deltas((p, t, 1) for p, _, t in chunks)
