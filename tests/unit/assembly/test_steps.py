"""Steps and budget trimming (docs/lifecycle.md, Assemble step 4)."""

from __future__ import annotations

import pytest

from app.assembly.steps import fit_steps_to_budget, group_steps


def user(text: str = "u") -> dict:
    return {"role": "user", "content": text}


def assistant(*call_ids: str, text: str = "a") -> dict:
    blocks: list[dict] = [{"type": "text", "text": text}]
    blocks += [{"type": "toolCall", "id": cid, "name": "t", "arguments": {}} for cid in call_ids]
    return {"role": "assistant", "content": blocks}


def result(call_id: str) -> dict:
    return {"role": "toolResult", "toolCallId": call_id, "content": [{"type": "text", "text": "r"}]}


def test_empty() -> None:
    assert group_steps([]) == []
    assert fit_steps_to_budget([], [], 0) == ([], 0)


def test_plain_conversation_one_step_per_message() -> None:
    messages = [user(), assistant(), user(), assistant()]
    assert group_steps(messages) == [[0], [1], [2], [3]]


def test_assistant_with_its_results_is_one_step() -> None:
    messages = [user(), assistant("c1", "c2"), result("c1"), result("c2"), assistant(), user()]
    assert group_steps(messages) == [[0], [1, 2, 3], [4], [5]]


def test_tool_use_id_and_variant_call_blocks() -> None:
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "input": {}}]}
    answer = {"role": "toolResult", "toolUseId": "x", "content": "ok"}
    assert group_steps([call, answer]) == [[0, 1]]


def test_results_may_be_separated_by_other_results_only() -> None:
    messages = [assistant("c1"), result("other"), result("c1"), user()]
    assert group_steps(messages) == [[0, 2], [1], [3]]


def test_result_after_a_non_result_message_is_not_claimed() -> None:
    messages = [assistant("c1"), user(), result("c1")]
    assert group_steps(messages) == [[0], [1], [2]]


def test_duplicate_results_go_with_the_step() -> None:
    messages = [assistant("c1"), result("c1"), result("c1")]
    assert group_steps(messages) == [[0, 1, 2]]


def test_result_without_call_and_other_roles_are_their_own_steps() -> None:
    messages = [result("c9"), {"role": "system", "content": "s"}, {"role": "bashExecution"}]
    assert group_steps(messages) == [[0], [1], [2]]


def test_user_message_is_never_grouped_with_results() -> None:
    messages = [user(), result("c1")]
    assert group_steps(messages) == [[0], [1]]


def test_fit_keeps_everything_when_within_budget() -> None:
    messages = [user(), assistant(), user()]
    assert fit_steps_to_budget(messages, [10, 20, 30], 60) == ([0, 1, 2], 0)


def test_fit_drops_oldest_steps_first() -> None:
    messages = [user(), assistant(), user(), assistant()]
    assert fit_steps_to_budget(messages, [10, 20, 30, 40], 70) == ([2, 3], 2)
    assert fit_steps_to_budget(messages, [10, 20, 30, 40], 90) == ([1, 2, 3], 1)
    assert fit_steps_to_budget(messages, [10, 20, 30, 40], 89) == ([2, 3], 2)


def test_fit_never_splits_a_tool_step() -> None:
    messages = [user(), assistant("c1"), result("c1"), user()]
    # Dropping only the assistant would fit, but its step also holds the result.
    kept, dropped = fit_steps_to_budget(messages, [5, 50, 5, 10], 20)
    assert kept == [3]
    assert dropped == 3


def test_fit_non_contiguous_step_dropped_whole() -> None:
    messages = [assistant("c1"), result("x"), result("c1"), user()]
    kept, dropped = fit_steps_to_budget(messages, [10, 1, 10, 5], 6)
    assert kept == [1, 3]
    assert dropped == 2


def test_fit_may_drop_everything() -> None:
    messages = [user(), assistant()]
    assert fit_steps_to_budget(messages, [10, 20], 5) == ([], 2)
    assert fit_steps_to_budget(messages, [10, 20], -1) == ([], 2)


def test_fit_zero_cost_messages_survive_zero_budget() -> None:
    messages = [user(), assistant()]
    assert fit_steps_to_budget(messages, [5, 0], 0) == ([1], 1)


def test_fit_rejects_mismatched_costs() -> None:
    with pytest.raises(ValueError):
        fit_steps_to_budget([user()], [1, 2], 10)


def test_fit_does_not_mutate_inputs() -> None:
    messages = [user(), assistant("c1"), result("c1")]
    costs = [1, 2, 3]
    snapshot = [dict(m) for m in messages]
    fit_steps_to_budget(messages, costs, 4)
    assert messages == snapshot
    assert costs == [1, 2, 3]
