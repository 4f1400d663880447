"""The measure of ``python -m bench context`` (``bench/context_scoring.py``) and its questions'
gold answers (``bench/context_questions.py``)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.context_questions import KEPT, context_questions, when_questions
from bench.context_report import END, START, Outcomes, write_section
from bench.context_scoring import (
    content_words,
    fit_in_order,
    held_beside,
    holds_answer,
    host_turns,
    is_chinese,
    joined,
    message_text,
    missing,
    model_text,
    newest_fitting,
    summary_text,
    words,
)
from bench.conversations import (
    RELATIVE_OFFSETS,
    Conversation,
    build_dataset,
    date_text,
    said_day,
)


@pytest.fixture(scope="module")
def dataset() -> list[Conversation]:
    return build_dataset()


def test_words_are_lowercase_and_split_on_non_word_characters() -> None:
    assert words("Eagle-Ridge, 7 May 2023!") == ["eagle", "ridge", "7", "may", "2023"]
    assert words("  ...  ") == []


def test_content_words_drop_stop_words_and_keep_months_and_numbers() -> None:
    assert content_words("portrait of my grandmother") == ["portrait", "grandmother"]
    assert content_words("sunset over the lake") == ["sunset", "lake"]
    assert content_words("7 May 2023") == ["7", "may", "2023"]


@pytest.mark.parametrize(
    ("answer", "text", "holds"),
    [
        (["beagle"], "Caroline: we adopted a Beagle puppy.", True),
        (["beagle"], "Caroline: we adopted a beagles puppy.", False),  # a word, not a substring
        (["food bank"], "I help at the bank of the food court", True),  # words, in any order
        (["food bank"], "I help at the food court", False),
        (["sunset over the lake"], "a sunset by the lake", True),  # stop words are not needed
        (["beagle", "Eagle Ridge"], "a beagle; we hiked Eagle Ridge", True),
        (["beagle", "Eagle Ridge"], "a beagle; we hiked Harlow Ridge", False),  # every part
        (["7 May 2023"], "yesterday (7 May 2023) we adopted", True),
        (["7 May 2023"], "on 17 May 2023 we adopted", False),
        (["7 May 2023"], "on 2023-05-07 we adopted", False),  # the written form is the gold
        (["柯基"], "我们从救助站领养了一只柯基，孩子们给它起名叫豆豆", True),
        (["柯基"], "我们从救助站领养了一只柴犬", False),
        (["胶片 相机"], "买了一台胶片相机", True),  # spaces removed from a Chinese answer
        (["2023年5月7日"], "昨天（2023年5月7日）我们领养了", True),
        (["2023年5月7日"], "昨天（2023年5月17日）", False),
        (["柯基", "黄山"], "领养了柯基，爬了黄山", True),
        (["柯基", "黄山"], "领养了柯基，爬了泰山", False),
    ],
)
def test_holds_answer(answer: list[str], text: str, holds: bool) -> None:
    assert holds_answer(answer, text) is holds
    assert (missing(answer, text) == []) is holds


def test_missing_names_what_the_text_lacks() -> None:
    assert missing(["Eagle Ridge", "beagle"], "eagle and poodle") == ["ridge", "beagle"]
    assert missing(["柯基"], "柴犬") == ["柯基"]


def test_an_answer_with_nothing_to_look_for_is_an_error() -> None:
    with pytest.raises(ValueError):
        missing([], "anything")
    with pytest.raises(ValueError):
        missing(["the of"], "the of")


def test_is_chinese() -> None:
    assert is_chinese("2023年5月7日")
    assert not is_chinese("7 May 2023")


def test_message_text_reads_text_blocks_only() -> None:
    assert message_text({"role": "user", "content": "hi"}) == "hi"
    blocks = [
        {"type": "text", "text": "one"},
        {"type": "toolCall", "id": "t1", "name": "exec", "arguments": {"text": "no"}},
        {"type": "image", "data": "..."},
        {"type": "text", "text": "two"},
    ]
    assert message_text({"role": "assistant", "content": blocks}) == "one\ntwo"
    assert message_text({"role": "user"}) == ""
    assert message_text("not a message") == ""


def test_model_text_has_every_message_and_each_addition_once() -> None:
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": []}, None]
    assert model_text(messages, ["guide", None, "guide", "other"]) == "a\nguide\nother"
    assert model_text([]) == ""


def test_summary_text_is_the_working_memory_message() -> None:
    summary = {"role": "user", "content": "[Session History Summary]\nfacts"}
    messages = [{"role": "user", "content": "[Session History Summaries are]"}, summary]
    assert summary_text([*messages, {"role": "user", "content": "later"}]) == (
        "[Session History Summary]\nfacts"
    )
    assert summary_text([{"role": "user", "content": "no summary"}]) == ""


@pytest.mark.parametrize(
    ("roles", "turns"),
    [
        ([], []),
        (["user", "assistant", "user", "assistant"], [[0, 1], [2, 3]]),
        (["user", "user", "assistant", "user"], [[0, 1, 2], [3]]),
        (["user", "assistant", "assistant", "user", "assistant"], [[0, 1, 2], [3, 4]]),
        (["assistant", "user", "assistant"], [[0], [1, 2]]),
        (["assistant", "assistant"], [[0, 1]]),
    ],
)
def test_host_turns(roles: list[str], turns: list[list[int]]) -> None:
    assert host_turns(roles) == turns


def test_fit_in_order_stops_at_the_first_text_that_does_not_fit() -> None:
    texts = ["aaaa", "bb", "cccccc", "d"]
    # "aaaa\nbb" is 7 characters: it fits in 7, not in 6
    assert fit_in_order(texts, [0, 1, 2, 3], 7) == [0, 1]
    assert fit_in_order(texts, [0, 1, 2, 3], 6) == [0]
    assert fit_in_order(texts, [2, 0, 3], 100) == [2, 0, 3]
    assert fit_in_order(texts, [2, 3], 5) == []  # the first is too long: nothing, not "d"
    assert len(joined(texts, fit_in_order(texts, [0, 1, 2, 3], 14))) <= 14


def test_newest_fitting_takes_the_newest_and_keeps_their_order() -> None:
    texts = ["old", "middle", "new"]
    assert newest_fitting(texts, 10) == [1, 2]  # "middle\nnew" is 10 characters
    assert newest_fitting(texts, 3) == [2]
    assert newest_fitting(texts, 2) == []
    assert newest_fitting([], 10) == []


@pytest.mark.parametrize(
    ("expression", "said", "day"),
    [
        ("yesterday", datetime(2023, 5, 8, 9, tzinfo=UTC), "7 May 2023"),
        ("today", datetime(2023, 5, 8, 9, tzinfo=UTC), "8 May 2023"),
        ("last week", datetime(2023, 5, 8, 9, tzinfo=UTC), "1 May 2023"),
        ("last Saturday", datetime(2023, 5, 8, 9, tzinfo=UTC), "6 May 2023"),  # a Monday
        ("last Saturday", datetime(2023, 5, 6, 9, tzinfo=UTC), "29 April 2023"),  # a Saturday
        ("two days ago", datetime(2023, 3, 1, 9, tzinfo=UTC), "27 February 2023"),
    ],
)
def test_the_day_a_relative_date_meant_in_english(
    expression: str, said: datetime, day: str
) -> None:
    assert date_text(said_day(said, expression), "en") == day


def test_the_day_a_relative_date_meant_in_chinese() -> None:
    said = datetime(2023, 5, 8, 9, tzinfo=UTC)
    assert date_text(said_day(said, "昨天"), "zh") == "2023年5月7日"
    assert date_text(said_day(said, "三天前"), "zh") == "2023年5月5日"


def test_each_gold_answer_is_in_its_evidence(dataset: list[Conversation]) -> None:
    for conv in dataset:
        for q in context_questions(conv):
            evidence = "\n".join(conv.turns[i].text for i in q.evidence)
            if q.category == "temporal":
                assert not holds_answer(q.answer, evidence), q.id  # the turn says "yesterday"
            else:
                assert holds_answer(q.answer, evidence), q.id
                assert len(q.answer) == (2 if q.category == "multi-hop" else 1)


def test_a_when_question_for_every_fact_said_with_a_relative_date(
    dataset: list[Conversation],
) -> None:
    for conv in dataset:
        asked = when_questions(conv)
        dated = [f for f in conv.facts if f.relative is not None]
        assert [q.evidence for q in asked] == [(f.position,) for f in dated]
        for q, fact in zip(asked, dated, strict=True):
            turn = conv.turns[fact.position]
            assert fact.relative in turn.text and fact.relative in RELATIVE_OFFSETS
            assert q.answer == (date_text(said_day(turn.at, fact.relative), conv.language),)
            assert conv.speakers[fact.speaker] in q.text
            assert fact.value not in q.text  # a when question does not give the answer away
        questions = context_questions(conv)
        assert [q for q in questions if q.category == "temporal"] == asked
        assert all(q.answer for q in questions)


def test_outcomes_count_each_question_in_its_split_and_category(
    dataset: list[Conversation],
) -> None:
    outcomes = Outcomes(budgets=(8000,))
    conv = dataset[0]
    single, multi = (next(q for q in conv.questions if q.category == c) for c in KEPT[:2])
    for q, lacking in ((single, []), (multi, ["beagle"])):
        systems = {"service": {"chars": 10, "missing": lacking}}
        outcomes.add(8000, conv, q, {"estimatedTokens": 100, "systems": systems})
    assert outcomes.share(8000, "service", conv.split, "overall") == 50.0
    assert outcomes.share(8000, "service", "all", "single-hop") == 100.0
    assert outcomes.share(8000, "service", conv.split, "multi-hop") == 0.0
    assert outcomes.share(8000, "service", conv.split, "temporal") is None
    other = "held-out" if conv.split == "tune" else "tune"
    assert outcomes.count(8000, "service", other, "overall") == 0
    assert outcomes.records[1]["systems"]["service"]["holds"] is False
    assert outcomes.budget_use(8000) == 100 * 100 / 8000


def test_the_section_replaces_its_own_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    path.write_text(
        "# Retrieval\n\ntext\n\n<!-- bench-peer:start -->\npeer\n<!-- bench-peer:end -->\n"
    )
    write_section(path, "first")
    write_section(path, "second\n")
    text = path.read_text()
    assert text.startswith("# Retrieval\n\ntext\n\n<!-- bench-peer:start -->\npeer\n")
    assert text.count(START) == 1 and "first" not in text
    assert text.endswith(f"{START}\nsecond\n{END}\n")
    write_section(tmp_path / "new.md", "only")
    assert (tmp_path / "new.md").read_text() == f"{START}\nonly\n{END}\n"


def test_held_beside_needs_the_date_and_the_value_on_one_line() -> None:
    date, value = ["7 May 2023"], ["beagle"]
    assert held_beside(date, value, "a\nyesterday (7 May 2023) we adopted a beagle\nb")
    assert not held_beside(date, value, "yesterday (7 May 2023) was long\nwe adopted a beagle")
    assert held_beside(["2023年5月7日"], ["柯基"], "昨天（2023年5月7日）领养了一只柯基")
    assert not held_beside(["2023年5月7日"], ["柯基"], "昨天（2023年5月7日）\n柯基")
