"""Archive recall through the HTTP API (docs/recall.md, Archive recall): the archived turns a prompt
asks about reach the model without a search, with their time, archive and seq, relative dates
resolved; nothing is added when there is no archive, no relevant turn or recall is off."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.conftest import app_client

T0 = 1_683_540_000_000  # 2023-05-08 10:00 UTC
FACT = "Caroline: yesterday we adopted a beagle puppy from the shelter, the kids named him Biscuit"
SMALL_TALK = [
    ("Caroline: the weather was lovely this morning", "Melanie: it really was, so sunny"),
    ("Caroline: I baked bread again, it came out fine", "Melanie: nice, share the recipe"),
]


def _turn(key: str, user: str, assistant: str, at: int) -> dict[str, Any]:
    return {
        "sessionId": "s",
        "sessionKey": "agent:main:cli:1",
        "advancementKey": key,
        "messages": [
            {"role": "user", "content": user, "timestamp": at},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": assistant}],
                "timestamp": at + 1000,
            },
        ],
    }


async def _archived_conversation(client: httpx.AsyncClient) -> None:
    """Three turns archived (Phase 2 completed), then two live turns."""
    turns = [(FACT, "Melanie: what a lovely name"), *SMALL_TALK]
    for i, (said, answer) in enumerate(turns):
        response = await client.post(
            "/commit-turn", json=_turn(f"a{i}", said, answer, T0 + i * 60_000)
        )
        assert response.status_code == 200, response.text
    response = await client.post("/sessions/s/commit", json={"keepRecentCount": 0, "wait": True})
    assert response.json()["archive"]["status"] == "completed", response.text
    for i in range(2):
        at = T0 + 86_400_000 + i * 60_000
        live = _turn(f"l{i}", f"Caroline: live chat number {i}", "Melanie: sure", at)
        assert (await client.post("/commit-turn", json=live)).status_code == 200


async def _ask(client: httpx.AsyncClient, prompt: str, **extra: Any) -> tuple[Any, Any]:
    """The 2026.9 host's two assembles: pre_prompt, then tool_loop on what it returned."""
    pre = await client.post(
        "/assemble",
        json={
            "sessionId": "s",
            "phase": "pre_prompt",
            "prompt": prompt,
            "tokenBudget": 8000,
            "messages": [],
            **extra,
        },
    )
    assert pre.status_code == 200, pre.text
    body = {
        "sessionId": "s",
        "phase": "tool_loop",
        "prompt": prompt,
        "tokenBudget": 8000,
        "availableTools": ["exec"],
        "messages": pre.json()["messages"],
        **extra,
    }
    loop = await client.post("/assemble", json=body)
    assert loop.status_code == 200, loop.text
    return pre.json(), loop.json()


def _text(answer: Any) -> str:
    parts = []
    for message in answer["messages"]:
        content = message["content"]
        blocks = [{"text": content}] if isinstance(content, str) else content
        parts += [b.get("text", "") for b in blocks if isinstance(b, dict)]
    return "\n".join(parts)


def _archive_diagnostics(answer: Any) -> dict[str, Any]:
    return dict(answer["diagnostics"].get("recall", {}).get("archive", {}))


async def test_an_archived_fact_the_prompt_asks_about_reaches_the_model(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, loop = await _ask(client, "What breed of puppy did Caroline adopt?")
    assert all(m["content"] != FACT for m in pre["messages"])  # archived: not in the history
    envelope = loop["messages"][-1]["content"][0]["text"]
    assert (
        envelope.startswith("<openviking-context>")
        and "## From Earlier in This Session" in envelope
    )
    line = next(ln for ln in envelope.splitlines() if "beagle" in ln)
    assert "8 May 2023 10:00 UTC" in line and "archive_001 #1" in line and "· user]" in line
    assert "yesterday (7 May 2023)" in line
    diagnostics = _archive_diagnostics(loop)
    assert diagnostics["reason"] == "ok" and diagnostics["injected"] >= 1
    # The history before the envelope is the pre_prompt's, unchanged (the prompt stays cacheable).
    assert loop["messages"][:-1] == pre["messages"]


async def test_an_unrelated_prompt_recalls_nothing(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, loop = await _ask(client, "Which compiler flags speed up numpy builds?")
    assert loop["diagnostics"]["reason"] == "no_recall_hits"
    assert loop["messages"] == pre["messages"]
    assert _archive_diagnostics(loop)["reason"] == "no_relevant_turns"


async def test_a_session_without_archives_is_answered_as_before(settings: Settings) -> None:
    async with app_client(settings) as client:
        response = await client.post("/commit-turn", json=_turn("a0", FACT, "Melanie: lovely", T0))
        assert response.status_code == 200
        pre, loop = await _ask(client, "What breed of puppy did Caroline adopt?")
    assert loop["diagnostics"]["reason"] == "no_recall_hits"
    assert loop["messages"] == pre["messages"]
    assert _archive_diagnostics(loop)["reason"] == "no_archives"


@pytest.mark.parametrize("how", ["settings", "options"])
async def test_archive_recall_turned_off_adds_nothing(make_settings: Any, how: str) -> None:
    settings = (
        make_settings(recall={"archive_enabled": False}) if how == "settings" else make_settings()
    )
    extra = {"options": {"archiveRecall": {"enabled": False}}} if how == "options" else {}
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, loop = await _ask(client, "What breed of puppy did Caroline adopt?", **extra)
    assert loop["diagnostics"]["reason"] == "no_recall_hits"
    assert loop["messages"] == pre["messages"]
    assert "archive" not in loop["diagnostics"]["recall"]


async def test_a_turn_the_history_shows_is_not_recalled_again(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, _ = await _ask(client, "What breed of puppy did Caroline adopt?")
        shown = [*pre["messages"], {"role": "user", "content": FACT, "timestamp": T0}]
        body = {
            "sessionId": "s",
            "phase": "tool_loop",
            "prompt": "What breed of puppy did Caroline adopt?",
            "tokenBudget": 8000,
            "messages": shown,
        }
        loop = (await client.post("/assemble", json=body)).json()
    added = _text({"messages": loop["messages"][len(shown) :]})
    assert "beagle" not in added
    assert _archive_diagnostics(loop)["alreadyShown"] >= 1


async def test_a_prompt_that_says_little_is_read_with_the_turns_before_it(
    settings: Settings,
) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, _ = await _ask(client, "noop")
        history = [
            *pre["messages"],
            {"role": "user", "content": "Tell me about the beagle puppy", "timestamp": T0 + 9e7},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Which?"}],
                "timestamp": T0 + 9e7,
            },
        ]
        body = {
            "sessionId": "s",
            "phase": "tool_loop",
            "prompt": "what about that one?",
            "tokenBudget": 8000,
            "messages": history,
        }
        loop = (await client.post("/assemble", json=body)).json()
    assert "Biscuit" in loop["messages"][-1]["content"][0]["text"]
    assert "beagle" in loop["diagnostics"]["recall"]["query"]


async def test_no_budget_left_means_no_archive_section(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, loop = await _ask(
            client, "What breed of puppy did Caroline adopt?", options={"fillShare": 0.01}
        )
    assert loop["messages"] == pre["messages"]
    diagnostics = _archive_diagnostics(loop)
    assert (
        diagnostics["hits"] >= 1
        and diagnostics["injected"] == 0
        and diagnostics["budgetTokens"] == 0
    )


async def test_past_its_time_budget_the_turn_goes_without_archive_recall(
    settings: Settings,
) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        extra = {"options": {"archiveRecall": {"timeoutMs": 0}}}
        pre, loop = await _ask(client, "What breed of puppy did Caroline adopt?", **extra)
    assert loop["messages"] == pre["messages"]
    assert _archive_diagnostics(loop)["reason"] == "timeout"


async def test_an_older_host_gets_the_turns_in_its_latest_user_message(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        ask = {
            "role": "user",
            "content": "What breed of puppy did Caroline adopt?",
            "timestamp": T0 + 9e7,
        }
        body = {"sessionId": "s", "phase": "tool_loop", "tokenBudget": 8000, "messages": [ask]}
        loop = (await client.post("/assemble", json=body)).json()
        pre_body = {
            "sessionId": "s",
            "phase": "pre_prompt",
            "prompt": ask["content"],
            "tokenBudget": 8000,
            "messages": [ask],
        }
        plain = (await client.post("/assemble", json=pre_body)).json()
        options = {"archiveRecall": {"prePrompt": True}}
        pre = await client.post("/assemble", json={**pre_body, "options": options})
    content = loop["messages"][-1]["content"]
    assert content.startswith("<openviking-context>") and content.endswith(ask["content"])
    assert "beagle" in content
    assert "beagle" in pre.json()["prependContext"]
    # Unasked, pre_prompt leaves the archives to the tool_loop call (the 2026.9 host's reading).
    assert "prependContext" not in plain


async def test_a_relative_date_of_the_history_is_resolved_beside_it(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        said = T0 + 2 * 86_400_000  # 10 May 2023
        live = _turn(
            "l9", "Caroline: yesterday I ran the Lakeshore half marathon", "Melanie: wow", said
        )
        assert (await client.post("/commit-turn", json=live)).status_code == 200
        _, loop = await _ask(client, "When did Caroline run the half marathon?")
    envelope = loop["messages"][-1]["content"][0]["text"]
    assert "## Dates in the Recent Turns" in envelope
    assert "- [said 10 May 2023] Caroline: yesterday (9 May 2023) I ran the Lakeshore" in envelope
    assert loop["diagnostics"]["recall"]["archive"]["historyDates"] == 1


async def test_the_model_calls_of_one_turn_get_the_same_archive_section(settings: Settings) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        pre, first = await _ask(client, "What breed of puppy did Caroline adopt?")
        body = {
            "sessionId": "s",
            "phase": "tool_loop",
            "prompt": "What breed of puppy did Caroline adopt?",
            "tokenBudget": 8000,
            "messages": pre["messages"],
        }
        again = (await client.post("/assemble", json=body)).json()
        tight_body = {**body, "options": {"fillShare": 0.01}}
        tight = (await client.post("/assemble", json=tight_body)).json()
    assert again["messages"] == first["messages"]
    assert _archive_diagnostics(again)["cached"] is True
    assert "cached" not in _archive_diagnostics(first)
    # A budget the kept section no longer fits is answered anew.
    assert "cached" not in _archive_diagnostics(tight)
    assert tight["messages"] == pre["messages"]


async def test_after_a_history_that_is_all_summary_the_prompt_is_the_query(
    settings: Settings,
) -> None:
    async with app_client(settings) as client:
        await _archived_conversation(client)
        await client.post("/sessions/s/commit", json={"keepRecentCount": 0, "wait": True})
        pre, loop = await _ask(client, "What breed of puppy did Caroline adopt?")
    assert [m["role"] for m in pre["messages"]] == ["user"]  # the summary alone
    assert loop["diagnostics"]["recall"]["query"] == "What breed of puppy did Caroline adopt?"
    assert loop["messages"][0] == pre["messages"][0]
    assert "beagle" in loop["messages"][-1]["content"][0]["text"]


@pytest.fixture
def local_settings(make_settings: Any) -> Settings:
    return make_settings(embedding={"provider": "local"})


async def test_with_the_local_model_a_question_about_nothing_said_recalls_nothing(
    local_settings: Settings,
) -> None:
    async with app_client(local_settings) as client:
        await _archived_conversation(client)
        _, unrelated = await _ask(client, "What is the capital of Australia?")
        _, related = await _ask(client, "Which dog did Caroline's family take home?")
    assert _archive_diagnostics(unrelated)["reason"] == "no_relevant_turns"
    assert "beagle" in related["messages"][-1]["content"][0]["text"]


class _CountedQueries:
    """Records the texts the embedding model is asked to embed as queries."""

    def __init__(self, app: app_client) -> None:
        self.engine = app.app.state.services.memory.embedder.embedder
        self.asked: list[list[str]] = []
        self._embed = self.engine.embed_queries
        self.engine.embed_queries = self._counted

    async def _counted(self, texts: list[str]) -> list[list[float]]:
        self.asked.append(list(texts))
        return await self._embed(texts)  # type: ignore[no-any-return]

    async def wait_for_one(self) -> None:
        for _ in range(200):
            if self.asked:
                return
            await asyncio.sleep(0.01)


async def _pre_prompt(client: httpx.AsyncClient, prompt: str) -> Any:
    body = {"sessionId": "s", "phase": "pre_prompt", "prompt": prompt, "messages": []}
    response = await client.post("/assemble", json={**body, "tokenBudget": 8000})
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_pre_prompt_call_starts_the_embedding_its_tool_loop_call_needs(
    local_settings: Settings,
) -> None:
    """The 2026.9 host follows each pre_prompt assemble with a tool_loop one for the same prompt:
    once it has made one in the session, the pre_prompt call starts embedding the archive
    query, and the tool_loop call's recall uses that vector instead of embedding again."""
    app = app_client(local_settings)
    async with app as client:
        await _archived_conversation(client)
        await _ask(client, "What breed of puppy did Caroline adopt?")  # a first turn
        counted = _CountedQueries(app)
        prompt = "Which dog did Caroline's family take home?"
        pre = await _pre_prompt(client, prompt)
        await counted.wait_for_one()
        assert counted.asked == [[prompt]]  # before the tool_loop call was sent
        body = {"sessionId": "s", "phase": "tool_loop", "prompt": prompt, "tokenBudget": 8000}
        loop = (await client.post("/assemble", json={**body, "messages": pre["messages"]})).json()
    assert counted.asked == [[prompt]]
    assert "beagle" in loop["messages"][-1]["content"][0]["text"]


async def test_a_host_that_makes_no_tool_loop_call_gets_no_embedding_before_it(
    local_settings: Settings,
) -> None:
    app = app_client(local_settings)
    async with app as client:
        await _archived_conversation(client)
        counted = _CountedQueries(app)
        await _pre_prompt(client, "What breed of puppy did Caroline adopt?")
        await _pre_prompt(client, "Which dog did Caroline's family take home?")
        await asyncio.sleep(0.2)
    assert counted.asked == []
