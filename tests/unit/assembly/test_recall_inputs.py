"""What /assemble gives recall beside the query: shown turns, the widened query, the budget left,
the resolved dates of the history."""

from __future__ import annotations

from app.assembly.history_dates import history_date_notes
from app.assembly.recall_inputs import recall_budget_tokens, shown_keys, widened_query
from app.assembly.result import AssembleInput
from app.assembly.tool_loop import recall_request
from app.core.recall import RecallRequest
from app.sessions.identity import SessionIdentity
from app.settings import Settings

MAY_8 = 1_683_540_000_000


def _user(text: str, at: int = MAY_8) -> dict[str, object]:
    return {"role": "user", "content": text, "timestamp": at}


def _assistant(text: str, at: int = MAY_8) -> dict[str, object]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": at}


def test_a_question_with_enough_words_is_not_widened() -> None:
    history = [_user("the beagle puppy"), _assistant("ok")]
    assert (
        widened_query("Which breed did Caroline adopt?", history)
        == "Which breed did Caroline adopt?"
    )


def test_a_vague_question_is_followed_by_the_latest_user_turns_as_sentences() -> None:
    history = [
        _user("first ask"),
        _user("the beagle puppy."),
        _assistant("which?"),
        _user("the deploy"),
    ]
    assert widened_query("and that one?", history) == "and that one? the beagle puppy. the deploy."


def test_shown_keys_are_the_sanitized_texts_of_the_messages() -> None:
    keys = shown_keys([_user("[Mon 2023-05-08 10:00 UTC] Hello   there"), _assistant("Fine")])
    assert keys == ("hello there", "fine")


def test_the_budget_left_is_the_fill_share_less_the_reserve_and_the_history() -> None:
    assert recall_budget_tokens(8000, 1000, 1.0) == 8000 - 1200 - 1000
    assert recall_budget_tokens(8000, 1000, 0.5) == 3400 - 1000
    assert recall_budget_tokens(8000, 9000, 1.0) == 0
    assert recall_budget_tokens(None, 0, 1.0) == 128_000 - 20_000


def test_history_dates_are_resolved_for_sentences_the_question_touches() -> None:
    history = [
        _user("Caroline: yesterday was long. Last Saturday I ran the half marathon!"),
        _assistant("Melanie: yesterday I baked bread"),
    ]
    notes = history_date_notes(history, "When did Caroline run the marathon?")
    assert notes.splitlines()[-1] == (
        "- [said 8 May 2023] Caroline: Last Saturday (6 May 2023) I ran the half marathon!"
    )
    assert "baked" not in notes and "was long" not in notes


def test_no_shared_word_or_no_relative_date_means_no_notes() -> None:
    history = [_user("Caroline: yesterday I ran"), _user("Caroline: I bought a bike")]
    assert history_date_notes(history, "Which bike did Caroline buy?") == ""
    assert history_date_notes(history, "Caroline?") == ""


def test_messages_left_out_are_counted_as_long_as_those_sent() -> None:
    from app.assembly.recall_inputs import history_tokens

    sent = [_user("a"), _user("b")]
    assert history_tokens(sent, 100, 0) == 100
    assert history_tokens(sent, 100, 6) == 400
    assert history_tokens([], 0, 6) == 0


def _ask(history: list[dict[str, object]], archives: bool) -> RecallRequest:
    ident = SessionIdentity(tenant_id="t", session_id="s", session_key=None, agent_id="a")
    req = AssembleInput(identity=ident, messages=history, phase="pre_prompt", token_budget=8000)
    return recall_request(
        Settings(), req, "When did Caroline run the marathon?", history, 0, archives
    )


def test_a_request_for_memories_alone_names_no_session_and_reads_nothing_of_the_history() -> None:
    history = [_user("Caroline: Last Saturday I ran the half marathon!")]
    with_archives, memories_only = _ask(history, True), _ask(history, False)
    assert with_archives.session_id == "s" and with_archives.shown and with_archives.history_dates
    assert with_archives.budget_tokens is not None
    assert memories_only.session_id is None
    assert (memories_only.shown, memories_only.history_dates, memories_only.budget_tokens) == (
        (),
        "",
        None,
    )
    assert memories_only.query == with_archives.query
