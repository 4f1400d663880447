"""The LLM Working Memory builder's paths, with a scripted chat model (no HTTP)."""

from __future__ import annotations

import json
from typing import Any

from app.providers.protocols import (
    ChatResult,
    PermanentProviderError,
    ToolCallResult,
    TransientProviderError,
)
from app.working_memory.document import WM_SEVEN_SECTIONS, parse_wm_sections
from app.working_memory.llm_builder import LlmWorkingMemoryBuilder
from app.working_memory.service import WmInputs

PRIOR = """# Working Memory

## Session Title
Payments Service Migration

## Current State
Writing the migration.

## Task & Goals
- Migrate payments to the new ledger

## Key Facts & Decisions
- Cutover on 2026-12-04 because of the freeze

## Files & Context
- services/payments/ledger.py — the new ledger

## Errors & Corrections
- first dry run failed on currency rounding

## Open Issues
- Confirm refunds are covered
"""
MESSAGES = [{"role": "user", "content": "refunds are covered; next is reporting"}]


class ScriptedModel:
    """Answers each call with the next scripted result or error; records the prompts."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, list[dict[str, Any]]]] = []

    async def _next(self, kind: str, messages: list[dict[str, Any]]) -> ChatResult:
        self.calls.append((kind, messages))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def complete(self, messages, *, tools=None, tool_choice=None):  # type: ignore[no-untyped-def]
        return await self._next("complete", messages)

    async def complete_with_forced_tool(self, messages, tool):  # type: ignore[no-untyped-def]
        return await self._next("tool", messages)


def tool_answer(arguments: Any) -> ChatResult:
    return ChatResult(
        content=None,
        tool_calls=[ToolCallResult("update_working_memory", arguments, "c1")],
        usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    )


def section(doc: str, name: str) -> str:
    return parse_wm_sections(doc).get(f"## {name}", "")


async def build(model: ScriptedModel, prior: str | None = PRIOR, **extra: Any):  # type: ignore[no-untyped-def]
    return await LlmWorkingMemoryBuilder(model).build(
        WmInputs(MESSAGES, prior, "migrate payments", **extra)
    )


async def test_only_some_sections_leave_the_others_untouched():
    model = ScriptedModel(
        tool_answer({"sections": {"Current State": {"op": "UPDATE", "content": "Reporting next."}}})
    )
    result = await build(model)
    assert result.path == "update"
    assert section(result.overview, "Current State") == "Reporting next."
    for name in WM_SEVEN_SECTIONS:
        if name != "Current State":
            assert section(result.overview, name) == section(PRIOR, name)


async def test_arguments_as_a_json_string_and_the_seven_names_at_top_level():
    ops = {name: {"op": "KEEP"} for name in WM_SEVEN_SECTIONS}
    ops["Open Issues"] = {"op": "UPDATE", "content": "- [resolved] Confirm refunds are covered"}
    result = await build(ScriptedModel(tool_answer(json.dumps(ops))))
    assert result.path == "update"
    assert section(result.overview, "Open Issues") == "- [resolved] Confirm refunds are covered"


async def test_raw_wrapper_with_unbalanced_braces_is_repaired():
    raw = '{"sections": {"Current State": {"op": "UPDATE", "content": "Reporting next."}'
    result = await build(ScriptedModel(tool_answer({"raw": raw})))
    assert (
        result.path == "update" and section(result.overview, "Current State") == "Reporting next."
    )


async def test_unknown_ops_and_non_string_items_are_harmless():
    ops = {
        "sections": {
            "Current State": {"op": "REWRITE", "content": "gone"},
            "Errors & Corrections": {
                "op": "APPEND",
                "items": ["report totals off by one", 42, None, {"x": 1}],
            },
        }
    }
    result = await build(ScriptedModel(tool_answer(ops)))
    assert section(result.overview, "Current State") == "Writing the migration."
    errors = section(result.overview, "Errors & Corrections")
    assert errors.endswith("- report totals off by one") and "42" not in errors


async def test_empty_message_falls_back_to_create_with_the_prior_as_context():
    created = PRIOR.replace("Writing the migration.", "Refunds done; reporting next.")
    model = ScriptedModel(ChatResult(content=None), ChatResult(content=created))
    result = await build(model)
    assert result.path == "fallback_create"
    assert "<previous_working_memory>" in model.calls[1][1][-1]["content"]
    assert section(result.overview, "Current State") == "Refunds done; reporting next."
    assert result.usage["calls"] == 2


async def test_provider_failures_end_in_the_extractive_builder():
    model = ScriptedModel(TransientProviderError("503"), PermanentProviderError("400", status=400))
    result = await build(model)
    assert result.path == "extractive"
    assert section(result.overview, "Files & Context").startswith("- services/payments/ledger.py")


async def test_first_archive_uses_create_and_normalises_the_answer():
    answer = "# Working Memory\n\n## Session Title\nPayments\n\n## Extra Notes\n- keep this\n"
    model = ScriptedModel(
        ChatResult(
            content=answer, usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        )
    )
    result = await build(model, prior=None, custom_instructions="focus on money")
    assert result.path == "create" and model.calls[0][0] == "complete"
    assert all(f"## {name}" in result.overview for name in WM_SEVEN_SECTIONS)
    assert "keep this" in section(result.overview, "Key Facts & Decisions")
    assert "<checkpoint_instructions>\nfocus on money" in model.calls[0][1][-1]["content"]
    assert result.usage["total_tokens"] == 10


async def test_update_prompt_carries_the_prior_and_size_warnings():
    facts = "\n".join(f"- Fact {i} about Alpha{i}" for i in range(30))
    big_prior = PRIOR.replace("- Cutover on 2026-12-04 because of the freeze", facts)
    model = ScriptedModel(tool_answer({"sections": {}}))
    await build(model, prior=big_prior)
    prompt = model.calls[0][1][-1]["content"]
    assert "<current_wm>" in prompt and "Payments Service Migration" in prompt
    assert (
        "<section_size_warnings>" in prompt and '"Key Facts & Decisions" has 30 bullets' in prompt
    )
    assert "<new_content>" in prompt and "refunds are covered" in prompt
