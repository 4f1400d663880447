"""The archive section of the recall envelope: best turns within the budget, in the order said."""

from __future__ import annotations

from datetime import UTC, datetime

from app.archives.search.recall_render import (
    ARCHIVE_HEADER,
    RecalledTurn,
    Turn,
    render_archive_section,
    render_turn,
    shown_key,
)
from app.core.rules.tokens import estimate_text_tokens

AT = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)


def _turn(
    seq: int, text: str, relevance: float = 0.5, neighbour: Turn | None = None
) -> RecalledTurn:
    return RecalledTurn("archive_001", Turn(seq, "user", text, AT), relevance, neighbour)


def test_a_turn_says_when_where_and_who_and_resolves_its_dates() -> None:
    line = render_turn(_turn(17, "Caroline: yesterday we adopted a beagle"))
    assert line == (
        "- [8 May 2023 10:00 UTC · archive_001 #17 · user] Caroline: yesterday (7 May 2023) we adopted a beagle"
    )


def test_a_chinese_turn_gets_a_chinese_day() -> None:
    assert "2023年5月8日 10:00 UTC" in render_turn(_turn(3, "李娜：昨天我们去了上海"))


def test_the_neighbour_sits_before_an_answer_and_after_a_question() -> None:
    before = render_turn(_turn(5, "yes", neighbour=Turn(4, "assistant", "Did it work?", AT)))
    after = render_turn(_turn(5, "Did it work?", neighbour=Turn(6, "assistant", "yes", AT)))
    assert before.splitlines()[0].startswith("  [#4 · assistant] Did it work?")
    assert after.splitlines()[1] == "  [#6 · assistant] yes"


def test_turns_are_chosen_best_first_and_shown_in_the_order_said() -> None:
    turns = [_turn(30, "third said, best"), _turn(10, "first said"), _turn(20, "second said")]
    section, count = render_archive_section(turns, 10_000, 10_000)
    assert count == 3 and section.startswith(ARCHIVE_HEADER)
    body = section.splitlines()[-3:]
    assert [ln.split("] ")[1] for ln in body] == ["first said", "second said", "third said, best"]


def test_a_turn_that_does_not_fit_is_skipped_and_a_shorter_one_still_fits() -> None:
    long, short = _turn(1, "x" * 400), _turn(2, "short")
    budget = estimate_text_tokens(ARCHIVE_HEADER) + estimate_text_tokens(render_turn(short)) + 1
    section, count = render_archive_section([long, short], budget, 10_000)
    assert count == 1 and "short" in section and "xxxx" not in section


def test_nothing_fits_means_no_section() -> None:
    assert render_archive_section([_turn(1, "anything")], 5, 10_000) == ("", 0)
    assert render_archive_section([_turn(1, "anything")], 10_000, 50) == ("", 0)


def test_shown_keys_ignore_whitespace_case_and_length() -> None:
    assert shown_key("  Hello\n  World ") == shown_key("hello world")
    assert shown_key("a" * 1000) == shown_key("a" * 500)
