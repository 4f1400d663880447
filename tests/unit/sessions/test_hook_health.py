"""The hook-health rules: every hook sequence of up to five calls, against a model of the rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import product

import pytest

from app.sessions.hook_health import (
    ASSEMBLES_WITHOUT_TURNS,
    HOOKS,
    HOST_SILENT,
    PRE_PROMPT,
    TURN_HOOKS,
    TURNS_WITHOUT_ASSEMBLES,
    HookRecord,
    hook_flags,
    streaks_after,
)

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def model_flags(calls: tuple[str, ...]) -> set[str]:
    """The flags, counted straight from the sequence: pre-prompt assembles since the last turn
    hook or compaction; each turn hook's calls since the last assemble."""
    flags: set[str] = set()
    since_turn = 0
    turns: dict[str, int] = {}
    for hook in calls:
        if hook == PRE_PROMPT:
            since_turn += 1
        if hook in TURN_HOOKS or hook == "compact":
            since_turn = 0
        if hook.startswith("assemble."):
            turns = {}
        if hook in TURN_HOOKS:
            turns[hook] = turns.get(hook, 0) + 1
    if since_turn >= 2:
        flags.add(ASSEMBLES_WITHOUT_TURNS)
    if any(n >= 3 for n in turns.values()):
        flags.add(TURNS_WITHOUT_ASSEMBLES)
    return flags


def records_after(calls: tuple[str, ...]) -> list[HookRecord]:
    streaks: dict[str, int] = {}
    counts: dict[str, int] = {}
    for hook in calls:
        streaks = streaks_after(hook, streaks)
        counts[hook] = counts.get(hook, 0) + 1
    return [HookRecord(h, counts[h], streaks[h], NOW, NOW, None, None) for h in streaks]


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5])
def test_flags_follow_the_rules_for_every_sequence(length: int) -> None:
    for calls in product(HOOKS, repeat=length):
        flags = hook_flags(records_after(calls), NOW, 0)
        assert set(flags) == model_flags(calls), calls
        assert flags == sorted(flags, key=[ASSEMBLES_WITHOUT_TURNS, TURNS_WITHOUT_ASSEMBLES].index)


def test_streaks_after_keeps_every_known_hook_and_adds_the_called_one() -> None:
    assert streaks_after("compact", {"commitTurn": 2}) == {"commitTurn": 2, "compact": 0}
    assert streaks_after(PRE_PROMPT, {"commitTurn": 2}) == {"commitTurn": 0, PRE_PROMPT: 1}


def test_a_session_is_silent_only_past_the_limit_and_never_with_0() -> None:
    quiet = [HookRecord("commitTurn", 1, 1, NOW, NOW - timedelta(seconds=61), None, None)]
    assert hook_flags(quiet, NOW, 60) == [HOST_SILENT]
    assert hook_flags(quiet, NOW, 61.5) == []
    assert hook_flags(quiet, NOW, 0) == []
    assert hook_flags([], NOW, 60) == []
