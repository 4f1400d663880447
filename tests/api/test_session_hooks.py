"""Hook health: the service notes each hook call per session with the host and plugin versions the
plugin sent, and flags a session whose hooks stop pairing up, in GET /sessions/{id}, the console,
/metrics and the service log, within one turn."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.sessions.hook_notes import HookNotes
from app.settings import Settings
from tests.conftest import app_client
from tests.helpers.messages import turn

SESSION = "hooks-1"
HOST = "openclaw/2026.9.6"
PLUGIN = "0.1.0"
VERSIONS = {"x-host-version": HOST, "x-plugin-version": PLUGIN}


async def pre_prompt(client: httpx.AsyncClient, history: list[Any], prompt: str) -> None:
    body = {"sessionId": SESSION, "phase": "pre_prompt", "messages": history, "prompt": prompt}
    assert (await client.post("/assemble", json=body, headers=VERSIONS)).status_code == 200


def logged(record: logging.LogRecord) -> dict[str, Any]:
    return record.msg if isinstance(record.msg, dict) else {}


async def tool_loop(client: httpx.AsyncClient, history: list[Any]) -> None:
    body = {"sessionId": SESSION, "phase": "tool_loop", "messages": history}
    assert (await client.post("/assemble", json=body, headers=VERSIONS)).status_code == 200


async def commit(client: httpx.AsyncClient, messages: list[Any], key: str) -> None:
    body = {"sessionId": SESSION, "advancementKey": key, "messages": messages}
    response = await client.post("/commit-turn", json=body, headers=VERSIONS)
    assert response.status_code == 200, response.text


async def host_turn(client: httpx.AsyncClient, history: list[Any], i: int, commits: bool) -> list:
    """One turn as the host runs it: pre-prompt and tool-loop assembles, then (or not) commitTurn."""
    new = turn(i)
    await pre_prompt(client, history, f"prompt {i}")
    await tool_loop(client, history)
    if commits:
        await commit(client, new, f"turn-{i}")
    return history + new


async def hooks_of(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get(f"/sessions/{SESSION}")
    assert response.status_code == 200, response.text
    return response.json()["hooks"]  # type: ignore[no-any-return]


async def metric(client: httpx.AsyncClient, name: str, **labels: str) -> float | None:
    text = (await client.get("/metrics")).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return None


async def test_a_host_whose_turn_hook_stopped_is_flagged_everywhere_within_one_turn(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    history = await host_turn(client, [], 1, commits=True)
    history = await host_turn(client, history, 2, commits=True)
    healthy = await hooks_of(client)
    assert healthy["flags"] == []
    assert healthy["hostVersion"] == HOST and healthy["pluginVersion"] == PLUGIN
    assert healthy["hooks"]["commitTurn"]["calls"] == 2
    assert healthy["hooks"]["assemble.pre_prompt"]["calls"] == 1  # turn 1's: no session yet
    # The host upgrades: it still assembles, its turn hook never reaches the plugin again.
    history = await host_turn(client, history, 3, commits=False)
    assert (await hooks_of(client))["flags"] == []  # turn 3 may still commit
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="app.api.hooks"):
        await pre_prompt(client, history, "prompt 4")  # turn 4 starts: turn 3 was never committed
    hooks = await hooks_of(client)
    assert hooks["flags"] == ["assembles_without_turns"]
    assert hooks["hooks"]["assemble.pre_prompt"]["calls"] == 3
    assert hooks["hooks"]["commitTurn"]["calls"] == 2
    # The service's log records as the root logger's handler receives them (structlog hands its
    # event dicts to the standard library), so the test sees what the operator's log would.
    warnings = [
        logged(r) for r in caplog.records if logged(r).get("event") == "session_hooks_flagged"
    ]
    assert len(warnings) == 1 and warnings[0]["level"] == "warning"
    assert warnings[0]["flag"] == "assembles_without_turns"
    assert (warnings[0]["session_id"], warnings[0]["host_version"]) == (SESSION, HOST)
    labels = {"tenant": "default", "host_version": HOST}
    assert (
        await metric(
            client, "ce_session_hook_flags_total", flag="assembles_without_turns", **labels
        )
        == 1
    )
    assert await metric(client, "ce_hook_calls_total", hook="commitTurn", **labels) == 2
    assert await metric(client, "ce_hook_calls_total", hook="assemble.pre_prompt", **labels) == 4
    page = await client.get(f"/console/sessions/{SESSION}")
    assert page.status_code == 200
    assert 'class="badge hook-flag assembles_without_turns"' in page.text
    assert HOST in page.text
    # The turn the host never committed was stored from turn 4's assembled history.
    stored = (await client.get(f"/sessions/{SESSION}")).json()
    assert stored["totalMessageCount"] == len(history)
    # A turn hook again: the flag clears, and it is raised (and logged) once per episode.
    await commit(client, turn(4), "turn-4")
    assert (await hooks_of(client))["flags"] == []


async def test_turns_without_assembles_are_flagged_after_three(client: httpx.AsyncClient) -> None:
    history = await host_turn(client, [], 1, commits=True)
    history = await host_turn(client, history, 2, commits=True)  # its assembles are recorded
    # An outbox retry: turn 2's commit, then the retried turn 3, with no assemble between.
    await commit(client, turn(3), "turn-3")
    assert (await hooks_of(client))["flags"] == []
    await commit(client, turn(4), "turn-4")
    assert (await hooks_of(client))["flags"] == ["turns_without_assembles"]
    await tool_loop(client, history)
    assert (await hooks_of(client))["flags"] == []


@pytest.mark.parametrize("header", ["", "x" * 65, "openclaw/2026.9.6\u00e9", "a b"])
async def test_a_version_header_that_is_not_a_version_is_recorded_as_not_sent(
    client: httpx.AsyncClient, header: str
) -> None:
    messages = turn(1)
    body = {"sessionId": SESSION, "advancementKey": "k", "messages": messages}
    response = await client.post(
        "/commit-turn",
        json=body,
        headers={"x-host-version": header.encode()},
    )
    assert response.status_code == 200
    hooks = await hooks_of(client)
    assert hooks["hooks"]["commitTurn"]["hostVersion"] is None
    assert await metric(client, "ce_hook_calls_total", hook="commitTurn") == 1


async def test_deleting_a_session_removes_its_hook_records(client: httpx.AsyncClient) -> None:
    await host_turn(client, [], 1, commits=True)
    await pre_prompt(client, turn(1), "two")
    assert (await client.delete(f"/sessions/{SESSION}")).status_code == 200
    await commit(client, turn(6), "again")
    hooks = await hooks_of(client)
    assert (
        hooks["hooks"]["commitTurn"]["calls"] == 1 and "assemble.pre_prompt" not in hooks["hooks"]
    )


async def test_tool_loop_calls_are_held_in_process_and_written_in_order(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    """The host makes a tool-loop assemble before every model call: those calls are written
    together, before the session's next other hook (so the streaks see them in order), before the
    session is read, or within a moment; another process reading the database sees them then."""
    history = await host_turn(client, [], 1, commits=True)
    history = await host_turn(client, history, 2, commits=True)
    await commit(client, turn(3), "turn-3")  # an outbox retry: a second turn without assembles
    async with app_client(settings) as other:  # another replica over the same database
        before = (await other.get(f"/sessions/{SESSION}")).json()["hooks"]["hooks"]
        for _ in range(3):
            await tool_loop(client, history)
        held = (await other.get(f"/sessions/{SESSION}")).json()["hooks"]["hooks"]
        assert held["assemble.tool_loop"]["calls"] == before["assemble.tool_loop"]["calls"]
        # Written before this turn hook, in its write: it is the first turn hook after an
        # assemble, so the third one without is the one two turns later.
        await commit(client, turn(4), "turn-4")
        written = (await other.get(f"/sessions/{SESSION}")).json()["hooks"]
        tool_loops = written["hooks"]["assemble.tool_loop"]["calls"]
        assert tool_loops == held["assemble.tool_loop"]["calls"] + 3
        assert written["flags"] == []
        await commit(client, turn(5), "turn-5")
        assert (await other.get(f"/sessions/{SESSION}")).json()["hooks"]["flags"] == []
        await commit(client, turn(6), "turn-6")
        flags = (await other.get(f"/sessions/{SESSION}")).json()["hooks"]["flags"]
    assert flags == ["turns_without_assembles"]


async def test_held_tool_loop_calls_are_written_without_another_hook_or_a_read(
    settings: Settings,
) -> None:
    app = app_client(settings)
    async with app as client:
        services = app.app.state.services
        services.hook_notes = HookNotes(services.uow, delay_s=0.05)
        history = await host_turn(client, [], 1, commits=True)
        await tool_loop(client, history)
        await tool_loop(client, history)
        async with app_client(settings) as other:
            for _ in range(100):
                hooks = (await other.get(f"/sessions/{SESSION}")).json()["hooks"]["hooks"]
                if hooks["assemble.tool_loop"]["calls"] >= 3:
                    break
                await asyncio.sleep(0.02)
        assert hooks["assemble.tool_loop"]["calls"] == 3  # turn 1's and the two since


async def test_held_tool_loop_calls_are_written_at_shutdown(settings: Settings) -> None:
    async with app_client(settings) as client:
        history = await host_turn(client, [], 1, commits=True)
        calls = (await hooks_of(client))["hooks"]["assemble.tool_loop"]["calls"]
        await tool_loop(client, history)
    async with app_client(settings) as after:
        hooks = (await hooks_of(after))["hooks"]
    assert hooks["assemble.tool_loop"]["calls"] == calls + 1
