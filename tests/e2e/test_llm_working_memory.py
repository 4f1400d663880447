"""End to end with a real HTTP model stub: after-turn → auto-commit → Phase 2 (LLM) → assemble."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.conftest import app_client
from tests.e2e.stub_llm import StubLLM, chat_answer, error_answer
from tests.helpers.messages import assistant, user

FIRST_WM = """# Working Memory

## Session Title
Billing Migration To Stripe Meters

## Current State
Migrating the billing service.

## Task & Goals
- Move billing to Stripe Billing Meters

## Key Facts & Decisions
- Cutover on 2026-12-04 because of the release freeze
- Budget is $2000 for the migration

## Files & Context
- services/billing/config.yaml — billing configuration

## Errors & Corrections
- alembic upgrade failed: relation billing_events missing

## Open Issues
- Confirm the staging schema exists
"""

HOSTILE_UPDATE = {
    "sections": {
        "Session Title": {"op": "UPDATE", "content": "Completely Unrelated Topic"},
        "Current State": {"op": "UPDATE", "content": "Now reviewing invoices."},
        "Task & Goals": {"op": "KEEP"},
        "Key Facts & Decisions": {"op": "UPDATE", "content": "- Things happened"},
        "Files & Context": {"op": "UPDATE", "content": "- other/file.py — new helper"},
        "Errors & Corrections": {"op": "UPDATE", "content": "- all good now"},
        "Open Issues": {"op": "UPDATE", "content": "- [new] check invoice totals"},
    }
}


@pytest.fixture
def stub() -> AsyncIterator[StubLLM]:
    server = StubLLM()
    server.url = server.start()  # type: ignore[attr-defined]
    yield server
    server.stop()


def llm_settings(make_settings, stub: StubLLM, **extra: Any):  # type: ignore[no-untyped-def]
    return make_settings(
        llm={"base_url": stub.url, "model": "stub-model", "api_key": "sk-test", "max_attempts": 2},  # type: ignore[attr-defined]
        commit={"keep_recent_count": 2},
        memory={"extraction": False},  # these tests script the Working Memory calls only
        **extra,
    )


async def chat(client: httpx.AsyncClient, history: list, new: list, budget: int = 400) -> dict:
    pre = len(history)
    history.extend(new)
    response = await client.post(
        "/after-turn",
        json={
            "sessionId": "s1",
            "messages": history,
            "prePromptMessageCount": pre,
            "tokenBudget": budget,
        },
    )
    assert response.status_code == 200
    return response.json()


async def archive_when_done(client: httpx.AsyncClient, archive_id: str) -> dict:
    for _ in range(400):
        view = (await client.get(f"/archives/{archive_id}", params={"sessionId": "s1"})).json()
        if view["status"] in ("completed", "failed"):
            return view
        await asyncio.sleep(0.025)
    raise AssertionError(f"{archive_id} never finished")


async def metrics_once(client: httpx.AsyncClient, line: str) -> str:
    """The metrics page once it holds ``line`` (or after two seconds, for the asserts to say)."""
    for _ in range(80):
        metrics = (await client.get("/metrics")).text
        if line in metrics:
            break
        await asyncio.sleep(0.025)
    return metrics


def long_turn(i: int) -> list:
    words = " ".join(f"detail{i}_{k}" for k in range(60))
    return [user(f"Request {i} about billing: {words}"), assistant(f"Done {i}: {words}")]


async def drive_two_archives(client: httpx.AsyncClient) -> list:
    history: list = []
    first = await chat(client, history, long_turn(1) + long_turn(2))
    assert first["commit"]["triggered"] and first["commit"]["archiveId"] == "archive_001"
    await archive_when_done(client, "archive_001")
    second = await chat(client, history, long_turn(3) + long_turn(4))
    assert second["commit"]["archiveId"] == "archive_002"
    return history


async def test_update_receives_prior_and_guards_hold_against_a_hostile_model(make_settings, stub):
    stub.create.append(lambda body: chat_answer(FIRST_WM))
    stub.update.append(lambda body: chat_answer(tool_arguments=HOSTILE_UPDATE))
    async with app_client(llm_settings(make_settings, stub)) as client:
        history = await drive_two_archives(client)
        first = await archive_when_done(client, "archive_001")
        second = await archive_when_done(client, "archive_002")
        assembled = (
            await client.post(
                "/assemble", json={"sessionId": "s1", "messages": history, "prompt": "go"}
            )
        ).json()
        session = (await client.get("/sessions/s1")).json()
    assert first["workingMemoryPath"] == "create" and first["usage"]["total_tokens"] == 150
    update_request = stub.update_requests()[0]
    assert update_request["tool_choice"] == {
        "type": "function",
        "function": {"name": "update_working_memory"},
    }
    prompt = update_request["messages"][-1]["content"]
    assert "<current_wm>" in prompt and "Billing Migration To Stripe Meters" in prompt
    assert "Request 3 about billing" in prompt
    wm = second["overview"]
    assert second["workingMemoryPath"] == "update"
    assert "## Session Title\nBilling Migration To Stripe Meters" in wm  # title kept
    assert "Now reviewing invoices." in wm  # free section updated
    assert "services/billing/config.yaml" in wm and "other/file.py" in wm  # no path regression
    assert "relation billing_events missing" in wm and "all good now" in wm  # append-only
    assert "[silently dropped, restored] Confirm the staging schema exists" in wm
    assert "Cutover on 2026-12-04" in wm and "Budget is $2000" in wm  # consolidation rejected
    assert assembled["messages"][0]["content"][0]["text"].startswith(
        "[Session History Summary]\n" + wm.rstrip()[:40]
    )
    assert session["llmUsage"] == {"promptTokens": 200, "completionTokens": 100}


async def test_model_down_for_the_first_attempt_still_completes(make_settings, stub):
    stub.create.append(lambda body: error_answer(503, retry_after="0"))
    stub.create.append(lambda body: chat_answer(FIRST_WM))
    async with app_client(llm_settings(make_settings, stub)) as client:
        history: list = []
        await chat(client, history, long_turn(1) + long_turn(2))
        view = await archive_when_done(client, "archive_001")
        # The worker counts a job once its results are committed, so just after the archive reads
        # completed: wait for the count rather than race it.
        metrics = await metrics_once(client, 'ce_phase2_jobs_total{outcome="succeeded"} 1.0')
    assert view["status"] == "completed" and view["workingMemoryPath"] == "create"
    assert len(stub.requests) == 2
    assert 'ce_llm_calls_total{outcome="transient_error"} 1.0' in metrics
    assert 'ce_llm_calls_total{outcome="ok"} 1.0' in metrics
    assert 'ce_llm_tokens_total{kind="prompt_tokens"} 100.0' in metrics
    assert "ce_llm_call_duration_seconds_count 2.0" in metrics
    assert 'ce_phase2_jobs_total{outcome="succeeded"} 1.0' in metrics


async def test_model_down_for_good_falls_back_to_the_extractive_builder(make_settings, stub):
    stub.default_create = lambda body: error_answer(503)
    stub.default_update = lambda body: error_answer(503)
    async with app_client(llm_settings(make_settings, stub)) as client:
        history: list = []
        await chat(client, history, long_turn(1) + long_turn(2))
        view = await archive_when_done(client, "archive_001")
    assert view["status"] == "completed"
    assert view["workingMemoryPath"] == "extractive"
    assert (
        view["overview"].startswith("# Working Memory")
        and "Request 1 about billing" in view["overview"]
    )


async def test_truncated_tool_call_is_salvaged(make_settings, stub):
    stub.create.append(lambda body: chat_answer(FIRST_WM))
    truncated = json.dumps(HOSTILE_UPDATE)[:-25]  # cut inside a string: brace repair cannot fix it
    stub.update.append(lambda body: chat_answer(tool_arguments=truncated))
    async with app_client(llm_settings(make_settings, stub)) as client:
        await drive_two_archives(client)
        view = await archive_when_done(client, "archive_002")
    assert view["workingMemoryPath"] == "salvaged"
    assert "Now reviewing invoices." in view["overview"]
    assert "services/billing/config.yaml" in view["overview"]


async def test_unusable_update_falls_back_to_create_through_the_guards(make_settings, stub):
    stub.create.append(lambda body: chat_answer(FIRST_WM))
    stub.update.append(lambda body: chat_answer("I cannot call tools, sorry."))
    rewritten = FIRST_WM.replace("- services/billing/config.yaml — billing configuration\n", "")
    stub.create.append(
        lambda body: chat_answer(
            rewritten.replace("Migrating the billing service.", "Rewritten state.")
        )
    )
    async with app_client(llm_settings(make_settings, stub)) as client:
        await drive_two_archives(client)
        view = await archive_when_done(client, "archive_002")
    assert view["workingMemoryPath"] == "fallback_create"
    assert "Rewritten state." in view["overview"]
    assert "services/billing/config.yaml" in view["overview"]  # the guards still hold
    create_prompt = stub.requests[-1]["messages"][-1]["content"]
    assert "<previous_working_memory>" in create_prompt


async def test_tool_call_written_as_json_content_is_accepted(make_settings, stub):
    stub.create.append(lambda body: chat_answer(FIRST_WM))
    stub.update.append(lambda body: chat_answer("```json\n" + json.dumps(HOSTILE_UPDATE) + "\n```"))
    async with app_client(llm_settings(make_settings, stub)) as client:
        await drive_two_archives(client)
        view = await archive_when_done(client, "archive_002")
    assert view["workingMemoryPath"] == "update"
    assert "Now reviewing invoices." in view["overview"]


async def test_forced_tool_choice_rejected_then_required(make_settings, stub):
    stub.create.append(lambda body: chat_answer(FIRST_WM))
    stub.update.append(lambda body: error_answer(400))
    stub.update.append(lambda body: chat_answer(tool_arguments=HOSTILE_UPDATE))
    async with app_client(llm_settings(make_settings, stub)) as client:
        await drive_two_archives(client)
        view = await archive_when_done(client, "archive_002")
    choices = [r["tool_choice"] for r in stub.update_requests()]
    assert choices[1] == "required"
    assert view["workingMemoryPath"] == "update"


async def test_no_model_call_inside_hook_requests(make_settings, stub):
    stub.default_create = lambda body: chat_answer(FIRST_WM)
    settings = llm_settings(make_settings, stub, worker={"enabled": False})
    async with app_client(settings) as client:
        history: list = []
        body = await chat(client, history, long_turn(1) + long_turn(2))
        assert body["commit"]["triggered"]
        await client.post(
            "/assemble", json={"sessionId": "s1", "messages": history, "prompt": "go"}
        )
        await client.post(
            "/assemble", json={"sessionId": "s1", "messages": [*history, user("what next then?")]}
        )
        compact = await client.post("/compact", json={"sessionId": "s1", "wait": False})
        assert compact.json()["reason"] == "commit_scheduled"
    assert stub.requests == []
