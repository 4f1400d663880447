"""Steps of a history, the unit that budget trimming drops (docs/lifecycle.md, Assemble step 4).

A step is a user message; or an assistant message together with the tool results that answer its
tool calls; or any other single message. Trimming drops whole oldest steps, never part of one, so
a tool call never loses its result to the budget.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.rules.messages import Message, role_of, tool_calls, tool_result_id


def _claim_results(messages: Sequence[Message], start: int, call_ids: set[str]) -> list[int]:
    """Indexes of the tool results after ``start`` that answer ``call_ids``.

    Only a run of consecutive tool results is searched: the answers may be separated by other
    tool results, but not by any other message.
    """
    claimed: list[int] = []
    index = start + 1
    while index < len(messages) and role_of(messages[index]) == "toolResult":
        if tool_result_id(messages[index]) in call_ids:
            claimed.append(index)  # duplicates too: they answer this step and must go with it
        index += 1
    return claimed


def group_steps(messages: Sequence[Message]) -> list[list[int]]:
    """Group message indexes into steps, ordered by their first index."""
    steps: list[list[int]] = []
    taken: set[int] = set()
    for index, message in enumerate(messages):
        if index in taken:
            continue
        step = [index]
        if role_of(message) == "assistant":
            call_ids = {call.id for call in tool_calls(message)}
            if call_ids:
                claimed = _claim_results(messages, index, call_ids)
                step.extend(claimed)
                taken.update(claimed)
        steps.append(step)
    return steps


def fit_steps_to_budget(
    messages: Sequence[Message],
    token_costs: Sequence[int],
    budget_tokens: float,
) -> tuple[list[int], int]:
    """Drop whole oldest steps until the rest costs at most the budget.

    Returns the kept message indexes in order and how many messages were dropped. Everything may
    be dropped when even the newest step does not fit.
    """
    if len(token_costs) != len(messages):
        raise ValueError("token_costs must have one entry per message")
    steps = group_steps(messages)
    step_costs = [sum(token_costs[i] for i in step) for step in steps]
    remaining = sum(step_costs)
    first_kept = 0
    while first_kept < len(steps) and remaining > budget_tokens:
        remaining -= step_costs[first_kept]
        first_kept += 1
    kept = sorted(i for step in steps[first_kept:] for i in step)
    return kept, len(messages) - len(kept)
