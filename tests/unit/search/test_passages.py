"""The passages of a message that get vectors of their own (app/search/text/passages.py)."""

from __future__ import annotations

import random

from app.search.text.passages import (
    MAX_PASSAGE_CHARS,
    MAX_PASSAGE_TEXT,
    MAX_PASSAGES,
    embedding_order,
    message_passages,
    with_their_passages,
)


def test_a_message_of_one_sentence_has_no_passages() -> None:
    assert message_passages("Alice: we adopted a beagle from the shelter.") == []
    assert message_passages("") == []
    assert message_passages("   \n  ") == []


def test_each_sentence_is_a_passage_with_the_speaker_label() -> None:
    text = "Alice: We adopted a beagle. The kids named him Biscuit? He chewed a shoe already!"
    assert message_passages(text) == [
        "Alice: We adopted a beagle.",
        "Alice: The kids named him Biscuit?",
        "Alice: He chewed a shoe already!",
    ]


def test_a_short_piece_joins_its_neighbour() -> None:
    assert (
        message_passages("Bob: Morning! The deploy failed again. Thanks!")
        == ["Bob: Morning! The deploy failed again. Thanks!"][1:]
    )  # one passage once joined: none
    assert message_passages("Dr. Patel moved it to Friday. The lab results are fine.") == [
        "Dr. Patel moved it to Friday.",
        "The lab results are fine.",
    ]
    assert message_passages("shopping list:\n1. milk\n2. eggs\n3. bread and butter for Sunday") == [
        "shopping list: 1. milk",
        "2. eggs 3. bread and butter for Sunday",
    ]


def test_chinese_sentences_and_lines_are_passages() -> None:
    assert message_passages("昨天部署失败了。请帮我看一下日志！好的") == [
        "昨天部署失败了。",
        "请帮我看一下日志！ 好的",
    ]
    assert message_passages("the first line\nthe second line\n\n  the third line  ") == [
        "the first line",
        "the second line",
        "the third line",
    ]


def test_a_decimal_point_or_a_path_does_not_end_a_sentence() -> None:
    assert message_passages("Version 3.38.0 is out. See src/app.py now.") == [
        "Version 3.38.0 is out.",
        "See src/app.py now.",
    ]


def test_a_long_sentence_is_cut_into_bounded_passages() -> None:
    text = "x" * (2 * MAX_PASSAGE_CHARS + 10)
    passages = message_passages(text)
    # The 10 characters left are too short to stand alone: they join the piece before.
    assert [len(p) for p in passages] == [MAX_PASSAGE_CHARS, MAX_PASSAGE_CHARS + 11]


def test_many_pieces_are_packed_in_order_into_at_most_the_bound() -> None:
    rng = random.Random(7)
    for _ in range(50):
        lines = [
            " ".join(rng.choice(["alpha", "beta", "gamma"]) for _ in range(rng.randint(3, 12)))
            for _ in range(rng.randint(MAX_PASSAGES + 1, 300))
        ]
        passages = message_passages("\n".join(lines))
        assert len(passages) == MAX_PASSAGES
        assert " ".join(passages) == " ".join(lines)  # nothing lost, nothing reordered


def test_exactly_the_bound_of_pieces_stays_one_passage_each() -> None:
    lines = [f"line number {i}" for i in range(MAX_PASSAGES)]
    assert message_passages("\n".join(lines)) == lines


def test_only_the_opening_of_a_huge_message_is_read() -> None:
    text = ("A sentence of some length here. " * 20_000).strip()
    passages = message_passages(text)
    assert len(passages) == MAX_PASSAGES
    assert sum(len(p) for p in passages) <= MAX_PASSAGE_TEXT


def test_vectors_in_embedding_order_go_back_to_their_texts() -> None:
    texts = [("a", ["a1", "a2"]), ("b", []), ("c", ["c1"]), ("d", ["d1", "d2", "d3"])]
    order = embedding_order(texts)
    assert order == ["a", "b", "c", "d", "a1", "a2", "c1", "d1", "d2", "d3"]
    vectors = [f"v({text})" for text in order]  # stands for each text's vector
    assert with_their_passages(texts, vectors) == [
        ("v(a)", ("v(a1)", "v(a2)")),
        ("v(b)", ()),
        ("v(c)", ("v(c1)",)),
        ("v(d)", ("v(d1)", "v(d2)", "v(d3)")),
    ]
    assert embedding_order([]) == [] and with_their_passages([], []) == []
