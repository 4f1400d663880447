"""The shared query-understanding module and date terms."""

from __future__ import annotations

import random
import re
from datetime import date

from app.search.ranking import (
    DATE_DENSE_WEIGHT,
    MAX_DENSE_WEIGHT,
    MIN_DENSE_WEIGHT,
    Doc,
    SessionStats,
    bm25,
    calibrated_fusion,
    coverage,
    dense_weight,
    ideal_score,
    merge_clauses,
    reciprocal_rank_fusion,
)
from app.search.text.date_terms import absolute_dates, mentioned_dates
from app.search.text.query import (
    _COMPOUND_RE,
    clauses,
    document_tokens,
    parse_query,
    speaker_label,
    stem,
    strip_speaker,
)


def tokens(query: str) -> list[str]:
    return [t.token for t in parse_query(query).terms]


def test_punctuation_and_stop_words_are_dropped() -> None:
    assert tokens("What museum did Caroline visit?") == ["museum", "caroline", "visit"]
    assert tokens("the and of") == []


def test_word_forms_meet() -> None:
    assert stem("visited") == stem("visiting") == stem("visits") == "visit"
    assert stem("studies") == "study" and stem("stress") == "stress"
    assert stem("breed") == "breed" and stem("family") == "family"  # no tense or adverb to strip
    assert "visit" in document_tokens("She visited the museum")


def test_chinese_is_cut_at_function_words_and_paired() -> None:
    assert tokens("部署失败了吗？") == ["部署", "署失", "失败"]
    assert tokens("绿茶") == ["绿茶"]


def test_terms_are_bounded_and_weighted() -> None:
    query = parse_query(" ".join(f"word{i}" for i in range(40)), max_terms=5)
    assert len(query.terms) == 5
    assert all(t.weight > 0 for t in query.terms)


def test_quotes_are_phrases_and_compounds_stay_whole() -> None:
    query = parse_query('is "green tea" on db-prod-7?')
    assert query.phrases == ("green tea",)
    assert "db-prod-7" in tokens('is "green tea" on db-prod-7?')


def test_compounds_are_found_from_word_starts_exactly_as_anywhere() -> None:
    """The compound pattern is tried only where a word starts (linear on a 4,000-character word);
    on 100,000 random strings it finds what the same pattern tried at every position finds."""
    anywhere = re.compile(r"\w+(?:[-./:_]\w+)+")
    rng = random.Random(11)
    for _ in range(100_000):
        text = "".join(rng.choice("ab_-./: 中1") for _ in range(rng.randint(0, 16)))
        assert _COMPOUND_RE.findall(text) == anywhere.findall(text), text
    word = "x" * 3999
    assert [t.token for t in parse_query(word).terms] == [word]
    assert [t.token for t in parse_query(f"{word}.y").terms if t.kind == "compound"] == [
        f"{word}.y"
    ]


def test_dates_become_iso_days() -> None:
    query = parse_query("What did she do on 7 May 2023?")
    assert [(t.token, t.kind) for t in query.terms] == [("2023-05-07", "date")]
    assert absolute_dates("2023年5月7日 and 2023-05-09") == ["2023-05-09", "2023-05-07"]
    said = date(2023, 5, 8)
    assert mentioned_dates("yesterday we went camping", said) == ["2023-05-07"]
    assert mentioned_dates("我上周二去了医院", said) == ["2023-05-02"]
    assert mentioned_dates("no dates here", said) == []


def test_speaker_labels_are_stripped() -> None:
    assert strip_speaker("Caroline: I went out") == "I went out"
    assert strip_speaker("[assistant]: done") == "done"
    assert strip_speaker("note: lowercase labels stay") == "note: lowercase labels stay"
    assert speaker_label("Caroline: I went out") == "Caroline: "
    assert speaker_label("李娜: 你好") == "李娜: "
    assert speaker_label("note: lowercase labels stay") == ""


def test_bm25_uses_only_the_given_statistics() -> None:
    query = parse_query("cache eviction")
    docs = [Doc(1, "cache eviction policy"), Doc(2, "cache warmup"), Doc(3, "eviction notice")]
    scores = bm25(query, docs, SessionStats(10, 20.0))
    assert max(scores, key=scores.get) == 1
    assert bm25(query, docs, SessionStats(10, 20.0)) == scores  # deterministic
    assert scores != bm25(query, docs, SessionStats(1000, 20.0))  # the statistics matter


def test_fusions() -> None:
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 1]])
    assert max(fused, key=fused.get) == 1
    calibrated = calibrated_fusion({1: 2.0}, {2: 0.9, 3: 0.8}, ideal=4.0, weight=0.5)
    assert calibrated[1] == 0.25  # half the ideal BM25, weighted by one half
    assert calibrated[2] == 0.5 and calibrated[3] == 0.0
    assert calibrated_fusion({1: 2.0}, {2: 0.9, 3: 0.8}, ideal=4.0, weight=0.2)[1] == 0.4
    assert ideal_score(parse_query("cache"), SessionStats(10, 5.0)) > 0


def test_the_vector_side_weighs_by_how_well_the_words_match() -> None:
    assert coverage({1: 1.0, 2: 3.0}, ideal=4.0) == 0.75 and coverage({}, ideal=4.0) == 0.0
    # A paraphrase, whose words match nothing much, is left to the vectors...
    assert dense_weight(0.05, date_led=False) == MAX_DENSE_WEIGHT
    # ...a question whose words a message answers well is led by them...
    assert dense_weight(0.6, date_led=False) == MIN_DENSE_WEIGHT
    assert MIN_DENSE_WEIGHT < dense_weight(0.3, date_led=False) < MAX_DENSE_WEIGHT
    # ...and one whose date a message mentions, by the date: the model knows no calendar.
    assert dense_weight(0.05, date_led=True) == DATE_DENSE_WEIGHT < MIN_DENSE_WEIGHT


def test_each_clause_gets_its_best_answer_near_the_top() -> None:
    assert clauses("What breed did Mel adopt? And where did Mel go hiking?") == [
        "What breed did Mel adopt?",
        "And where did Mel go hiking?",
    ]
    assert clauses("李娜领养了什么狗？另外，李娜去哪里爬山了？") == [
        "李娜领养了什么狗？",
        "另外，李娜去哪里爬山了？",
    ]
    assert clauses("Is it on? The cache eviction policy.") == [
        "Is it on? The cache eviction policy."
    ]
    assert clauses("deploy db-prod-7.example.com failed") == ["deploy db-prod-7.example.com failed"]
    # The second clause's best (id 3) scores far below the first clause's, but not once merged.
    merged = merge_clauses([{1: 8.0, 2: 6.0, 3: 1.0}, {3: 0.5, 2: 0.1}])
    assert sorted(merged, key=merged.get, reverse=True)[:2] in ([1, 3], [3, 1])


def test_a_speaker_label_counts_only_beside_other_evidence() -> None:
    query = parse_query("what did Caroline adopt")
    docs = [
        Doc(1, "Caroline: small talk"),
        Doc(2, "Melanie: Caroline, did you adopt?"),
        Doc(3, "Caroline: we adopted a corgi"),
        Doc(4, "Melanie: we adopted a cat"),
    ]
    scores = bm25(query, docs, SessionStats(4, 25.0))
    assert 1 not in scores  # the label alone is no evidence
    assert scores[3] > scores[4]  # her own turn about adopting beats another's


def test_stored_frequencies_replace_counting() -> None:
    query = parse_query("cache eviction")
    docs = [Doc(1, "cache eviction policy"), Doc(2, "cache warmup")]
    counted = bm25(query, docs, SessionStats(100, 20.0))
    # The session holds "cache" in 90 messages, of which only two were fetched as candidates.
    stored = bm25(query, docs, SessionStats(100, 20.0, {"cache": 90, "eviction": 1}))
    assert stored[2] < counted[2] and stored[1] < counted[1]
