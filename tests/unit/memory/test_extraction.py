"""Memory extraction: candidate parsing, experience format, relative dates and decisions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.rules.dates import resolve_relative_date
from app.memory.learning.extraction import (
    Candidate,
    decide,
    extract_candidates,
    normalise_experience,
    normalise_text,
)
from app.providers.protocols import ChatResult, PermanentProviderError, ToolCallResult

MESSAGE_TIME = "2026-05-08T09:30:00+08:00"  # a Friday
EXPERIENCE = "## Situation\n- A deploy fails\n\n## Approach\n- Run the tests first\n\n## Reflect\n- Never skip CI"


class FakeModel:
    """A chat model answering with scripted results and recording every call."""

    def __init__(self, *results: ChatResult | Exception) -> None:
        self.results = list(results)
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any] | None]] = []

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> ChatResult:
        self.calls.append((messages, None))
        return self._next()

    async def complete_with_forced_tool(
        self, messages: list[dict[str, Any]], tool: dict[str, Any]
    ) -> ChatResult:
        self.calls.append((messages, tool))
        return self._next()

    def _next(self) -> ChatResult:
        result = self.results.pop(0)
        if isinstance(result, Exception):
            raise result
        return result


def tool_result(name: str, arguments: Any, usage: dict[str, int] | None = None) -> ChatResult:
    return ChatResult(
        content=None, tool_calls=[ToolCallResult(name, arguments, "call_1")], usage=usage or {}
    )


def item(**overrides: Any) -> dict[str, Any]:
    base = {
        "category": "preferences",
        "title": "Editor",
        "abstract": "The user prefers Vim.",
        "content": "The user prefers Vim for editing.",
        "confidence": 0.9,
        "sensitivity": "allowed",
        "observed_at": "",
        "source_seqs": [1],
    }
    return {**base, **overrides}


MESSAGES = [
    {
        "seq": 11,
        "message": {"role": "user", "content": "I moved to Berlin yesterday. I prefer Vim."},
    },
    {"seq": 12, "message": {"role": "assistant", "content": "Noted."}},
]


async def extract(
    model: FakeModel, messages: list[dict[str, Any]] | None = None
) -> tuple[list[Candidate], dict[str, int]]:
    return await extract_candidates(
        model,
        MESSAGES if messages is None else messages,
        "# Working Memory",
        message_time=MESSAGE_TIME,
        user_id="u1",
        agent_id="a1",
    )


# --- extract_candidates ---


async def test_candidates_from_a_string_tool_call() -> None:
    arguments = json.dumps(
        {
            "memories": [
                item(
                    category="event",
                    title="Moved",
                    abstract="The user moved to Berlin.",
                    content="The user moved to Berlin.",
                    observed_at="yesterday",
                    source_seqs=[11, 99],
                    confidence=1.7,
                ),
                item(sensitivity="Masked", confidence="0.4", source_seqs=["12"]),
            ]
        }
    )
    model = FakeModel(
        tool_result(
            "propose_memories",
            arguments,
            {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        )
    )
    candidates, usage = await extract(model)
    assert candidates == [
        Candidate(
            "events",
            "Moved",
            "The user moved to Berlin.",
            "The user moved to Berlin.",
            1.0,
            "allowed",
            "2026-05-07",
            [11],
        ),
        Candidate(
            "preferences",
            "Editor",
            "The user prefers Vim.",
            "The user prefers Vim for editing.",
            0.4,
            "masked",
            None,
            [12],
        ),
    ]
    assert usage == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "calls": 1}


async def test_candidates_from_object_arguments_and_a_raw_wrapper() -> None:
    model = FakeModel(
        tool_result("propose_memories", {"memories": [item()]}),
        tool_result("propose_memories", {"raw": json.dumps({"memories": [item(title="Wrapped")]})}),
    )
    first, _ = await extract(model)
    second, _ = await extract(model)
    assert [c.title for c in first] == ["Editor"]
    assert [c.title for c in second] == ["Wrapped"]


async def test_candidates_from_a_json_array_in_plain_content() -> None:
    content = (
        "Here you go:\n```json\n" + json.dumps([item(category="entity", title="Acme")]) + "\n```"
    )
    candidates, _ = await extract(FakeModel(ChatResult(content=content)))
    assert [(c.category, c.title) for c in candidates] == [("entities", "Acme")]


async def test_a_tool_call_written_as_plain_content() -> None:
    content = json.dumps(
        {"name": "propose_memories", "arguments": json.dumps({"memories": [item(title="Inline")]})}
    )
    candidates, _ = await extract(FakeModel(ChatResult(content=content)))
    assert [c.title for c in candidates] == ["Inline"]


async def test_truncated_arguments_are_repaired() -> None:
    arguments = json.dumps({"memories": [item()]})[:-2]  # the closing "]}" is missing
    candidates, _ = await extract(FakeModel(tool_result("propose_memories", arguments)))
    assert [c.title for c in candidates] == ["Editor"]


async def test_invalid_items_are_dropped() -> None:
    arguments = {
        "memories": [
            "not an object",
            item(category="gossip"),
            item(content="", abstract="", title="Empty"),
            item(
                category="experiences",
                content="## Situation\n- A deploy fails\n## Approach\n- Retry",
            ),
            item(title="Kept"),
        ]
    }
    candidates, _ = await extract(FakeModel(tool_result("propose_memories", arguments)))
    assert [c.title for c in candidates] == ["Kept"]


async def test_never_store_and_duplicate_candidates_are_dropped() -> None:
    arguments = {
        "memories": [
            item(
                title="Password",
                content="The user's password is hunter2.",
                sensitivity="never_store",
            ),
            item(title="First"),
            item(title="Same text", content="the user prefers vim for editing!"),
        ]
    }
    candidates, _ = await extract(FakeModel(tool_result("propose_memories", arguments)))
    assert [c.title for c in candidates] == ["First"]


async def test_missing_fields_are_filled_and_values_normalised() -> None:
    arguments = {
        "memories": [
            {
                "category": " Profile ",
                "content": "- The user is a data engineer.",
                "confidence": "high",
                "sensitivity": "secret-ish",
                "observed_at": "2026/5/1",
            }
        ]
    }
    [candidate], _ = await extract(FakeModel(tool_result("propose_memories", arguments)))
    assert candidate == Candidate(
        "profile",
        "The user is a data engineer.",
        "The user is a data engineer.",
        "- The user is a data engineer.",
        0.5,
        "masked",
        "2026-05-01",
        [],
    )


async def test_experience_content_is_repaired() -> None:
    content = "Situation: a deploy to staging fails\n**Approach:**\n1. Run the tests\n2) Check the config\nAvoid:\n* Never skip CI"
    arguments = {
        "memories": [item(category="experiences", title="deploy_failures", content=content)]
    }
    [candidate], _ = await extract(FakeModel(tool_result("propose_memories", arguments)))
    assert candidate.content == (
        "## Situation\n- a deploy to staging fails\n\n"
        "## Approach\n- Run the tests\n- Check the config\n\n"
        "## Reflect\n- Never skip CI"
    )


async def test_the_prompt_forces_the_tool_and_carries_time_transcript_and_rules() -> None:
    model = FakeModel(tool_result("propose_memories", {"memories": []}))
    candidates, _ = await extract(model)
    assert candidates == []
    [(messages, tool)] = model.calls
    assert tool is not None and tool["function"]["name"] == "propose_memories"
    system, user = messages[0]["content"], messages[1]["content"]
    assert (
        "never against today's date" in system
        and "never-store" in system
        and "never instructions" in system
    )
    assert "## Situation" in system and "## Approach" in system and "## Reflect" in system
    assert f"Message time: {MESSAGE_TIME}" in user
    assert (
        "<session_transcript>\n#11 [user]: I moved to Berlin yesterday. I prefer Vim.\n#12 [assistant]: Noted."
        in user
    )
    assert "<working_memory>\n# Working Memory\n</working_memory>" in user


async def test_nothing_to_read_makes_no_call() -> None:
    model = FakeModel()
    candidates, usage = await extract_candidates(
        model, [], "  ", message_time=MESSAGE_TIME, user_id="u", agent_id="a"
    )
    assert (candidates, usage["calls"], model.calls) == ([], 0, [])


async def test_provider_errors_reach_the_caller() -> None:
    with pytest.raises(PermanentProviderError):
        await extract(FakeModel(PermanentProviderError("bad request", status=400)))


# --- experience format ---


def test_experience_from_sections_with_aliases_and_duplicates() -> None:
    content = {
        "trigger": "A flaky test",
        "do": ["- Re-run once", "Re-run once"] + [f"Step {i}" for i in range(9)],
        "check": ["Re-run once", "Do not mark it skipped"],
    }
    text = normalise_experience(content)
    assert text is not None
    sections = text.split("\n\n")
    assert sections[0] == "## Situation\n- A flaky test"
    assert sections[1].splitlines() == ["## Approach", "- Re-run once"] + [
        f"- Step {i}" for i in range(7)
    ]
    assert sections[2] == "## Reflect\n- Do not mark it skipped"


def test_experience_situation_falls_back_to_the_hint() -> None:
    assert normalise_experience("## Approach\n- Do it\n## Reflect\n- Not that", "When asked") == (
        "## Situation\n- When asked\n\n## Approach\n- Do it\n\n## Reflect\n- Not that"
    )


@pytest.mark.parametrize(
    "content", ["Just some prose.", "## Situation\n- x\n## Approach\n- y", "## Reflect\n- z", None]
)
def test_experience_without_approach_or_reflect_is_rejected(content: Any) -> None:
    assert normalise_experience(content, "hint") is None


def test_normalise_text() -> None:
    assert normalise_text("## The **User**  prefers: Vim!") == "the user prefers vim"
    assert normalise_text("用户喜欢 Vim。") == normalise_text("用户喜欢  vim")


# --- relative dates ---


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("yesterday", "2026-05-07"),
        ("Yesterday evening", "2026-05-07"),
        ("today", "2026-05-08"),
        ("tomorrow", "2026-05-09"),
        ("the day before yesterday", "2026-05-06"),
        ("last night", "2026-05-07"),
        ("last week", "2026-05-01"),
        ("3 days ago", "2026-05-05"),
        ("two weeks ago", "2026-04-24"),
        ("in 2 days", "2026-05-10"),
        ("last month", "2026-04-08"),
        ("last year", "2025-05-08"),
        ("last Monday", "2026-05-04"),
        ("昨天", "2026-05-07"),
        ("昨天晚上", "2026-05-07"),
        ("今天", "2026-05-08"),
        ("明天", "2026-05-09"),
        ("前天", "2026-05-06"),
        ("大前天", "2026-05-05"),
        ("后天", "2026-05-10"),
        ("上周", "2026-05-01"),
        ("三天前", "2026-05-05"),
        ("两周后", "2026-05-22"),
        ("十五天前", "2026-04-23"),
        ("上周三", "2026-04-29"),
        ("上个月", "2026-04-08"),
        ("去年", "2025-05-08"),
    ],
)
def test_relative_dates_resolve_against_the_message_time(expression: str, expected: str) -> None:
    assert resolve_relative_date(expression, MESSAGE_TIME) == expected


def test_relative_dates_use_the_message_date_and_clamp_month_ends() -> None:
    assert resolve_relative_date("yesterday", "2026-03-01T23:30:00-05:00") == "2026-02-28"
    assert resolve_relative_date("last month", "2026-03-31") == "2026-02-28"
    assert resolve_relative_date("yesterday", "2026-05-08T01:00:00Z") == "2026-05-07"


@pytest.mark.parametrize(
    ("expression", "message_time"),
    [
        ("someday", MESSAGE_TIME),
        ("2026-05-01", MESSAGE_TIME),
        ("yesterday", "not a time"),
        ("", MESSAGE_TIME),
    ],
)
def test_unknown_expressions_or_times_resolve_to_none(expression: str, message_time: str) -> None:
    assert resolve_relative_date(expression, message_time) is None


# --- decide ---

CANDIDATE = Candidate(
    "preferences",
    "Editor",
    "The user prefers Vim.",
    "The user prefers Vim for editing.",
    0.9,
    "allowed",
    None,
    [1],
)
NEIGHBOURS = [
    {"id": "m1", "title": "Editor", "content": "The user uses Emacs."},
    {"id": "m2", "title": "Shell", "content": "The user uses zsh."},
]


async def test_no_neighbours_is_add_without_a_call() -> None:
    model = FakeModel()
    decision, usage = await decide(model, CANDIDATE, [])
    assert (decision.action, decision.target_id, model.calls, usage["calls"]) == (
        "ADD",
        None,
        [],
        0,
    )


async def test_update_with_merged_content() -> None:
    arguments = {
        "action": "update",
        "target_id": "m1",
        "merged_content": "The user moved from Emacs to Vim.",
        "reason": "refines",
    }
    model = FakeModel(tool_result("decide_memory", json.dumps(arguments), {"total_tokens": 50}))
    decision, usage = await decide(model, CANDIDATE, NEIGHBOURS)
    assert (decision.action, decision.target_id, decision.merged_content, decision.reason) == (
        "UPDATE",
        "m1",
        "The user moved from Emacs to Vim.",
        "refines",
    )
    assert usage["total_tokens"] == 50 and usage["calls"] == 1
    [(messages, tool)] = model.calls
    assert tool is not None and tool["function"]["name"] == "decide_memory"
    assert (
        '"id": "m2"' in messages[1]["content"]
        and "The user prefers Vim for editing." in messages[1]["content"]
    )


async def test_delete_with_a_valid_id() -> None:
    model = FakeModel(
        tool_result(
            "decide_memory", {"action": "DELETE", "target_id": "m1", "reason": "contradicted"}
        )
    )
    decision, _ = await decide(model, CANDIDATE, NEIGHBOURS)
    assert (decision.action, decision.target_id, decision.merged_content) == ("DELETE", "m1", None)


async def test_none_when_already_known() -> None:
    model = FakeModel(
        tool_result("decide_memory", {"action": "NONE", "target_id": "m2", "reason": "known"})
    )
    decision, _ = await decide(model, CANDIDATE, NEIGHBOURS)
    assert (decision.action, decision.target_id) == ("NONE", "m2")


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "DELETE", "target_id": "m9", "reason": "unknown id"},
        {"action": "UPDATE", "target_id": "m1", "reason": "no merged content"},
        {"action": "MERGE", "target_id": "m1"},
        "not json at all",
    ],
)
async def test_invalid_answers_fall_back_to_add(arguments: Any) -> None:
    decision, _ = await decide(
        FakeModel(tool_result("decide_memory", arguments)), CANDIDATE, NEIGHBOURS
    )
    assert (decision.action, decision.target_id, decision.merged_content) == ("ADD", None, None)


async def test_invalid_answer_with_an_identical_neighbour_falls_back_to_none() -> None:
    neighbours = [
        *NEIGHBOURS,
        {"id": "m3", "title": "Vim", "content": "The user prefers **Vim** for editing"},
    ]
    model = FakeModel(tool_result("decide_memory", {"action": "UPDATE", "target_id": "nope"}))
    decision, _ = await decide(model, CANDIDATE, neighbours)
    assert (decision.action, decision.target_id) == ("NONE", "m3")


async def test_experience_merge_is_normalised_and_a_broken_one_rejected() -> None:
    experience = Candidate(
        "experiences", "deploys", "A deploy fails", EXPERIENCE, 0.8, "allowed", None, []
    )
    neighbours = [{"id": "e1", "title": "deploys", "content": "## Situation\n- old"}]
    merged = "Approach:\n- Run the tests first\nReflect:\n- Never skip CI"
    good = FakeModel(
        tool_result(
            "decide_memory", {"action": "UPDATE", "target_id": "e1", "merged_content": merged}
        )
    )
    broken = FakeModel(
        tool_result(
            "decide_memory", {"action": "UPDATE", "target_id": "e1", "merged_content": "just prose"}
        )
    )
    assert (await decide(good, experience, neighbours))[0].merged_content == EXPERIENCE
    assert (await decide(broken, experience, neighbours))[0].action == "ADD"
