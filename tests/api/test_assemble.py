"""POST /assemble: the pre_prompt history rebuild and the tool_loop passthrough rules."""

from __future__ import annotations

import pytest

from app.assembly.guide import SESSION_CONTEXT_GUIDE
from app.core.rules.messages import message_tokens
from app.db.uow import UnitOfWork
from tests.conftest import app_client
from tests.helpers.messages import assistant, tool_call, tool_result, turn, user

SUMMARY = "[Session History Summary]\n"
AWS_KEY = "AKIA4HX7Q2LMZP9RT3VW"  # an access key id of the shape redaction recognises


async def after_turn(client, messages, session_id="s1", **extra):  # type: ignore[no-untyped-def]
    response = await client.post(
        "/after-turn", json={"sessionId": session_id, "messages": messages, **extra}
    )
    assert response.status_code == 200, response.text
    return response.json()


async def commit(client, keep=0, session_id="s1", wait=True):  # type: ignore[no-untyped-def]
    response = await client.post(
        f"/sessions/{session_id}/commit", json={"keepRecentCount": keep, "wait": wait}
    )
    assert response.status_code == 200, response.text
    return response.json()


async def pre_prompt(client, messages, session_id="s1", budget=128000, **extra):  # type: ignore[no-untyped-def]
    body = {
        "sessionId": session_id,
        "messages": messages,
        "tokenBudget": budget,
        "prompt": "next question",
        **extra,
    }
    response = await client.post("/assemble", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def texts(messages: list[dict]) -> list[str]:
    out = []
    for m in messages:
        content = m["content"]
        out.append(
            content
            if isinstance(content, str)
            else " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        )
    return out


class TestPrePrompt:
    async def test_unknown_session_passes_through(self, client):
        messages = turn(1)
        body = await pre_prompt(client, messages, session_id="nobody")
        assert body["messages"] == messages
        assert body["diagnostics"]["mode"] == "passthrough"
        assert body["diagnostics"]["reason"] == "no_stored_context"
        # the guide is there from the first answer: the system prompt never changes mid-session
        assert body["systemPromptAddition"] == SESSION_CONTEXT_GUIDE

    async def test_nothing_archived_returns_every_host_message(self, client):
        stored = turn(1) + turn(2)
        await after_turn(client, stored)
        unsent = turn(3)  # the store is behind the host
        body = await pre_prompt(client, stored + unsent)
        assert body["messages"] == stored + unsent
        assert body["diagnostics"]["mode"] == "assembled"
        assert body["systemPromptAddition"] == SESSION_CONTEXT_GUIDE  # no summary yet

    async def test_summary_first_then_live_messages_and_guide(self, client):
        history, live = turn(1) + turn(2), turn(3)
        await after_turn(client, history)
        await commit(client, keep=0)
        await after_turn(client, history + live)
        body = await pre_prompt(client, history + live)
        first = body["messages"][0]
        # The summary is a user message; the live turn starts with a user message, so the two are
        # merged for providers (consecutive users): summary block first, then the user's text.
        assert first["role"] == "user"
        assert first["content"][0]["text"].startswith(SUMMARY + "# Working Memory")
        assert first["content"][1] == {"type": "text", "text": live[0]["content"]}
        assert body["messages"][1:] == live[1:]
        assert body["systemPromptAddition"].startswith("## Session Context Guide")
        assert body["diagnostics"]["archives"]["overviewIncluded"] is True

    async def test_messages_of_pending_and_failed_archives_follow_the_overview(
        self, make_settings, db_path
    ):
        settings = make_settings(worker={"enabled": False})
        first, second, third, live = turn(1), turn(2), turn(3), turn(4)
        harness = app_client(settings)
        async with harness as client:
            await after_turn(client, first)
            await commit(client, wait=False)
            await after_turn(client, first + second)
            await commit(client, wait=False)
            await after_turn(client, first + second + third)
            await commit(client, wait=False)
            await after_turn(client, first + second + third + live)
            uow: UnitOfWork = harness.app.state.services.uow
            _set_archive(
                uow, 1, "completed", overview="# Working Memory\n\n## Session Title\nFirst\n"
            )
            _set_archive(uow, 2, "failed")
            body = await pre_prompt(client, first + second + third + live)
        first = body["messages"][0]
        assert first["content"][0]["text"].startswith(
            SUMMARY + "# Working Memory\n\n## Session Title\nFirst"
        )
        assert first["content"][1]["text"] == second[0]["content"]
        assert body["messages"][1:] == second[1:] + third + live
        assert body["diagnostics"]["archives"] == {
            "total": 3,
            "completed": 1,
            "pending": 1,
            "failed": 1,
            "overviewIncluded": True,
        }

    async def test_the_summary_is_the_current_overview_redacted(self, make_settings, db_path):
        # An overview stored unredacted (written by an earlier release, or imported) is redacted
        # where it is assembled, and a rewritten overview of the same archive shows at once.
        settings = make_settings(worker={"enabled": False})
        history, live = turn(1), turn(2)
        harness = app_client(settings)
        async with harness as client:
            await after_turn(client, history)
            await commit(client, wait=False)
            await after_turn(client, history + live)
            uow: UnitOfWork = harness.app.state.services.uow
            summaries = []
            for version in ("first", "second"):
                overview = f"# Working Memory\n\n{version}: the key is {AWS_KEY}\n"
                _set_archive(uow, 1, "completed", overview=overview)
                body = await pre_prompt(client, history + live)
                summaries.append(body["messages"][0]["content"][0]["text"])
        assert all(s.startswith(SUMMARY) and AWS_KEY not in s for s in summaries), summaries
        assert "first: the key is" in summaries[0] and "second: the key is" in summaries[1]

    async def test_budget_drops_whole_oldest_steps_and_keeps_tool_pairs(self, client):
        call = tool_call("c1", "exec", {"command": "x" * 400})
        result = tool_result("c1", "exec", "y" * 400)
        messages = [*turn(1, words=800), user("run it"), call, result, assistant("done")]
        await after_turn(client, messages, tokenBudget=10_000_000)
        budget = 4000  # reserve 600 -> 3400 for messages
        body = await pre_prompt(client, messages, budget=budget)
        out = body["messages"]
        assert body["diagnostics"]["messages"]["dropped"] >= 1
        assert call in out and result in out and out.index(result) == out.index(call) + 1
        assert sum(message_tokens(m) for m in out) <= budget - 600
        assert body["estimatedTokens"] <= budget

    async def test_budget_never_splits_a_tool_exchange(self, client):
        call = tool_call("c1", "exec", {"command": "a" * 2000})
        result = tool_result("c1", "exec", "b" * 2000)
        messages = [user("go"), call, result, user("q" * 40)]
        await after_turn(client, messages, tokenBudget=10_000_000)
        body = await pre_prompt(
            client, messages, budget=1000
        )  # 850 for messages: the pair (1000+) cannot fit
        out = body["messages"]
        assert (call in out) == (result in out)
        assert call not in out
        assert out[-1]["content"] == "q" * 40

    async def test_overview_that_does_not_fit_is_left_out(self, client):
        history, live = turn(1, words=400), [user("short")]
        await after_turn(client, history)
        await commit(client)
        await after_turn(client, history + live)
        body = await pre_prompt(client, live, budget=200)
        assert all(SUMMARY not in texts([m])[0] for m in body["messages"])
        assert body["diagnostics"]["archives"]["overviewIncluded"] is False
        assert body["systemPromptAddition"] == SESSION_CONTEXT_GUIDE  # the summary left, not it

    async def test_provider_validity_missing_result_and_orphan(self, client):
        call = tool_call("c7", "exec", {"cmd": "ls"})
        orphan = tool_result("zz", "exec", "orphan output")
        messages = [user("start"), call, orphan, user("next")]
        await after_turn(client, messages)
        body = await pre_prompt(client, messages)
        out = body["messages"]
        assert orphan not in out
        synthetic = out[out.index(call) + 1]
        assert (
            synthetic["role"] == "toolResult"
            and synthetic["toolCallId"] == "c7"
            and synthetic["isError"] is True
        )

    async def test_consecutive_users_merged_and_assistants_separated(self, client):
        messages = [user("one"), user("two"), assistant("a1"), assistant("a2")]
        await after_turn(client, messages)
        body = await pre_prompt(client, messages)
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["user", "assistant", "user", "assistant"]
        assert body["messages"][2]["content"] == "(no content)"


class TestToolLoop:
    async def tool_loop(self, client, messages, **extra):  # type: ignore[no-untyped-def]
        response = await client.post(
            "/assemble", json={"sessionId": "s1", "messages": messages, **extra}
        )
        assert response.status_code == 200
        body = response.json()
        assert body["diagnostics"]["phase"] == "tool_loop"
        assert body["diagnostics"]["mode"] == "passthrough"
        assert body["messages"] == messages
        return body["diagnostics"]["reason"]

    async def test_non_user_tail(self, client):
        assert (
            await self.tool_loop(client, [user("hello there"), assistant("hi")]) == "non_user_tail"
        )

    async def test_empty_messages_is_non_user_tail(self, client):
        assert await self.tool_loop(client, []) == "non_user_tail"

    async def test_recall_disabled_by_option(self, client):
        reason = await self.tool_loop(
            client, [user("deploy the billing service")], options={"autoRecall": False}
        )
        assert reason == "recall_disabled"

    async def test_recall_disabled_by_setting(self, make_settings):
        async with app_client(make_settings(assemble={"auto_recall": False})) as client:
            assert (
                await self.tool_loop(client, [user("deploy the billing service")])
                == "recall_disabled"
            )

    @pytest.mark.parametrize(
        "marker",
        ["<openviking-context>\nx\n</openviking-context>\n\nq?", "Source: openviking-auto-recall"],
    )
    async def test_already_injected(self, client, marker):
        assert await self.tool_loop(client, [user(marker + " deploy now")]) == "already_injected"

    async def test_query_too_short(self, client):
        assert await self.tool_loop(client, [user("hi")]) == "query_too_short"

    async def test_no_memories_means_no_recall_hits(self, client):
        assert (
            await self.tool_loop(client, [user("deploy the billing service please")])
            == "no_recall_hits"
        )

    async def test_experience_gate_is_reported_without_hits(self, client):
        messages = [user("deploy the billing service to production and run the migrations please")]
        for options, gate in (
            ({}, "disabled"),
            ({"agentExperience": {"enabled": True}}, "task_execution"),
        ):
            response = await client.post(
                "/assemble", json={"sessionId": "s-gate", "messages": messages, "options": options}
            )
            diagnostics = response.json()["diagnostics"]
            assert diagnostics["reason"] == "no_recall_hits"
            assert diagnostics["recall"]["experience"]["gate"] == gate, diagnostics
            assert diagnostics["recall"]["experience"]["hits"] == 0
        short = (
            await client.post("/assemble", json={"sessionId": "s-gate", "messages": [user("hi")]})
        ).json()
        assert short["diagnostics"]["recall"]["experience"]["gate"] == "query_too_short"

    async def test_bypassed_session(self, make_settings):
        async with app_client(make_settings(capture={"bypass_session_patterns": ["s*"]})) as client:
            assert (
                await self.tool_loop(client, [user("deploy the billing service")])
                == "session_bypassed"
            )


def _set_archive(uow: UnitOfWork, index: int, status: str, overview: str = "") -> None:
    """Put an archive in a given state, as Phase 2 would have left it."""
    from sqlalchemy import update

    from app.db.models import Archive

    with uow.write() as db:
        db.execute(
            update(Archive)
            .where(Archive.archive_index == index)
            .values(status=status, overview=overview, overview_tokens=10)
        )


class TestReconciliation:
    async def test_heartbeat_turn_deep_in_history_is_not_re_added(self, client):
        first, heartbeat = turn(1), [user("HEARTBEAT"), assistant("HEARTBEAT_OK")]
        later = [m for i in range(2, 12) for m in turn(i)]
        await after_turn(client, first)
        await after_turn(client, first + heartbeat, isHeartbeat=True, prePromptMessageCount=2)
        await after_turn(client, first + heartbeat + later, prePromptMessageCount=4)
        body = await pre_prompt(client, first + heartbeat + later)
        assert body["messages"] == first + later
        assert body["diagnostics"]["messages"]["reconciled"] == 0

    async def test_unstored_tail_is_appended_in_order(self, client):
        history = [m for i in range(1, 30) for m in turn(i)]
        await after_turn(client, history[:40])
        body = await pre_prompt(client, history)
        assert body["messages"] == history
        assert body["diagnostics"]["messages"]["reconciled"] == len(history) - 40

    async def test_a_long_unstored_tail_spanning_several_lookups_is_appended(self, client):
        history = [m for i in range(1, 101) for m in turn(i)]
        await after_turn(client, history[:20])
        body = await pre_prompt(client, history)
        assert body["messages"] == history
        assert body["diagnostics"]["messages"]["reconciled"] == 180


class TestNewestMessagesOnly:
    """A client may send only the host's newest messages with ``omittedMessageCount``."""

    async def test_a_tail_in_step_with_the_store_answers_as_the_whole_history(self, client):
        history = [m for i in range(1, 61) for m in turn(i)]
        await after_turn(client, history)
        whole = await pre_prompt(client, history)
        tail = await pre_prompt(client, history[-40:], omittedMessageCount=len(history) - 40)
        assert tail["diagnostics"]["mode"] == "assembled"
        assert tail["messages"] == whole["messages"] == history
        assert tail["estimatedTokens"] == whole["estimatedTokens"]
        assert tail["diagnostics"]["messages"]["omitted"] == len(history) - 40
        assert tail["diagnostics"]["messages"]["input"] == 40

    async def test_unstored_newest_messages_inside_the_tail_are_stored_from_it(self, client):
        history = [m for i in range(1, 61) for m in turn(i)]
        await after_turn(client, history[:-10])
        body = await pre_prompt(client, history[-40:], omittedMessageCount=len(history) - 40)
        assert body["diagnostics"]["messages"]["reconciled"] == 10
        assert body["messages"] == history

    async def test_a_store_behind_the_tail_asks_for_the_whole_history_and_stores_nothing(
        self, client
    ):
        history = [m for i in range(1, 61) for m in turn(i)]
        await after_turn(client, history[:30])
        tail = history[-40:]
        body = await pre_prompt(client, tail, omittedMessageCount=len(history) - 40)
        assert body["diagnostics"]["mode"] == "passthrough"
        assert body["diagnostics"]["reason"] == "host_history_needed"
        assert body["messages"] == tail
        view = (await client.get("/sessions/s1")).json()
        assert view["totalMessageCount"] == 30  # nothing captured out of order
        whole = await pre_prompt(client, history)
        assert whole["diagnostics"]["messages"]["reconciled"] == len(history) - 30
        assert whole["messages"] == history

    async def test_the_same_tail_without_the_count_is_reconciled_as_a_whole_history(self, client):
        history = [m for i in range(1, 61) for m in turn(i)]
        await after_turn(client, history[:30])
        body = await pre_prompt(client, history[-40:])
        assert body["diagnostics"]["mode"] == "assembled"
        assert body["diagnostics"]["messages"]["reconciled"] == 40

    async def test_a_negative_count_is_refused(self, client):
        response = await client.post(
            "/assemble",
            json={"sessionId": "s1", "messages": [], "prompt": "q", "omittedMessageCount": -1},
        )
        assert response.status_code in (400, 422)
        assert "omittedMessageCount" in response.text
