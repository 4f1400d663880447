"""The decoded stored history kept between pre-prompt assembles: every change of the session
shows in the next assemble, on the replica that kept it and on any other."""

from __future__ import annotations

from typing import Any

from tests.api.test_assemble import SUMMARY, _set_archive, after_turn, commit, pre_prompt
from tests.conftest import app_client
from tests.helpers.messages import turn


def _history(first: int, last: int) -> list[dict[str, Any]]:
    return [m for i in range(first, last + 1) for m in turn(i)]


async def test_each_change_made_on_another_replica_shows_at_once(make_settings):
    """Replica A keeps the history; replica B (no cache) writes; A's answers equal B's."""
    keeping = app_client(make_settings())
    plain = app_client(make_settings(assemble={"history_cache_mb": 0}))
    async with keeping as a, plain as b:
        cache = keeping.app.state.services.history_cache
        assert plain.app.state.services.history_cache is None
        history = _history(1, 10)  # two messages a turn
        steps = [history[:12], history[:16], history]  # stored, a turn more, two turns more
        for host in steps:
            await after_turn(b, host)
            first = await pre_prompt(a, host)
            again = await pre_prompt(a, host)  # answered from what A kept
            expected = await pre_prompt(b, host)
            assert first["messages"] == again["messages"] == expected["messages"] == host
            assert first["estimatedTokens"] == again["estimatedTokens"]
            assert again["estimatedTokens"] == expected["estimatedTokens"]
        assert cache.hits >= len(steps)
        # A commit on B archives all but 2 messages; its Working Memory then leads A's answer.
        await commit(b, keep=2)
        archived = await pre_prompt(a, history)
        assert archived["messages"][0]["content"][0]["text"].startswith(SUMMARY)
        assert archived["messages"] == (await pre_prompt(b, history))["messages"]
        assert archived["diagnostics"]["archives"]["completed"] == 1


async def test_a_session_deleted_and_made_again_is_read_again(client):
    first, second = _history(1, 3), _history(11, 13)
    await after_turn(client, first)
    assert (await pre_prompt(client, first))["messages"] == first
    assert (await client.delete("/sessions/s1")).status_code == 200
    await after_turn(client, second)
    # Same session id, as many messages: a new session all the same.
    assert (await pre_prompt(client, second))["messages"] == second


async def test_each_budget_gets_its_own_fit(client):
    history = _history(1, 40)
    await after_turn(client, history)
    wide = await pre_prompt(client, history, budget=128000)
    narrow = await pre_prompt(client, history, budget=800)
    assert wide["messages"] == history
    assert 0 < len(narrow["messages"]) < len(history)
    assert narrow["messages"] == history[-len(narrow["messages"]) :]
    assert (await pre_prompt(client, history, budget=128000))["messages"] == history
    assert (await pre_prompt(client, history, budget=800))["messages"] == narrow["messages"]


async def test_an_archive_completed_after_it_was_assembled_is_summarised_at_once(make_settings):
    harness = app_client(make_settings(worker={"enabled": False}))
    async with harness as client:
        history = _history(1, 4)
        await after_turn(client, history)
        await commit(client, keep=2, wait=False)  # pending: its messages are still shown
        assert (await pre_prompt(client, history))["messages"] == history
        _set_archive(harness.app.state.services.uow, 1, "completed", overview="# Working Memory\n")
        body = await pre_prompt(client, history)
        # The summary, merged with the first live message (a user's), then the live answer.
        summary, *rest = body["messages"]
        assert summary["content"][0]["text"].startswith(SUMMARY)
        assert summary["content"][1]["text"] == history[-2]["content"]
        assert rest == history[-1:]
