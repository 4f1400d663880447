"""Words that name a session's speakers: found from the statistics (stored or counted), never
counted as lexical evidence unless the query holds nothing else."""

from __future__ import annotations

from app.archives.index.search_index import message_terms
from app.search.ranking import (
    SPEAKER_KEY,
    Doc,
    SessionStats,
    bm25,
    counted_frequencies,
    ideal_score,
    speaker_words,
)
from app.search.text.query import parse_query


def test_a_word_carried_more_often_as_a_label_than_in_text_names_a_speaker() -> None:
    frequencies = {
        "melanie": 3,
        SPEAKER_KEY + "melanie": 40,
        "pottery": 5,
        "error": 30,
        SPEAKER_KEY + "error": 2,
        "yoga": 0,
        SPEAKER_KEY + "yoga": 0,
        "kim": 4,
        SPEAKER_KEY + "kim": 4,
    }
    words = ["melanie", "pottery", "error", "yoga", "kim", "absent"]
    assert speaker_words(words, frequencies) == {"melanie", "kim"}
    assert speaker_words(words, {}) == frozenset()


def test_the_index_stores_each_labels_words_under_the_speaker_key() -> None:
    terms = message_terms("Melanie Rose: Caroline, the pottery class", "2023-05-08")
    assert {SPEAKER_KEY + "melanie", SPEAKER_KEY + "rose"} <= terms
    assert {"caroline", "pottery", "class", "2023-05-08"} <= terms
    assert "melanie" not in terms and SPEAKER_KEY + "caroline" not in terms
    assert not any(t.startswith(SPEAKER_KEY) for t in message_terms("no label here", ""))
    assert SPEAKER_KEY + "李娜" in message_terms("李娜: 我跑完了马拉松", "")


def test_candidates_count_labels_and_texts_apart() -> None:
    docs = [
        Doc(1, "Melanie: I took up pottery"),
        Doc(2, "Caroline: Melanie, the pottery studio closed"),
        Doc(3, "Melanie: Melanie's sister called"),
        Doc(4, "李娜: 王伟，比赛怎么样"),
    ]
    counts = counted_frequencies(docs, ["melanie", "pottery", "王伟", "李娜"])
    # Texts are searched only for the literals some label carries.
    assert counts == {
        SPEAKER_KEY + "melanie": 2,
        SPEAKER_KEY + "caroline": 1,
        SPEAKER_KEY + "李娜": 1,
        "melanie": 2,
    }
    assert speaker_words(["melanie", "pottery", "王伟", "李娜"], counts) == {"melanie", "李娜"}
    mentioned = [*docs, Doc(5, "李娜: 好"), Doc(6, "王伟: 李娜，李娜"), Doc(7, "王伟: 李娜来了")]
    assert counted_frequencies(mentioned, ["李娜"])["李娜"] == 2


def test_a_speakers_name_scores_nothing_beside_other_words() -> None:
    docs = [
        Doc(1, "Melanie: I took up pottery"),
        Doc(2, "Caroline: Melanie, the pottery studio closed"),
        Doc(3, "Caroline: Melanie, how are you"),
    ]
    speakers = SessionStats(10, 30.0, {}, frozenset({"melanie"}))
    plain = SessionStats(10, 30.0, {})
    named, alone = parse_query("Melanie pottery"), parse_query("pottery")
    assert bm25(named, docs, speakers) == bm25(alone, docs, plain)
    assert ideal_score(named, speakers) == ideal_score(alone, plain)
    # Not a speaker: the mention counts, and so does the label beside other evidence.
    counted, skipped = bm25(named, docs, plain), bm25(named, docs, speakers)
    assert 3 in counted and 3 not in skipped
    assert counted[1] > skipped[1] and counted[2] > skipped[2]
    # A query of speakers' names only keeps them: there is nothing else to look for.
    assert bm25(parse_query("Melanie"), docs, speakers) == bm25(parse_query("Melanie"), docs, plain)
    # A day is something else to look for.
    dated = parse_query("Melanie 2023-05-08")
    assert ideal_score(dated, speakers) < ideal_score(dated, plain)
