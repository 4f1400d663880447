"""The Working Memory built by a model: one tool call per archive, guards as the last defence.

docs/working-memory.md, Update flow: CREATE without a (v2) prior; otherwise UPDATE through the
``update_working_memory`` tool call, parsed leniently, salvaged by regex, and on failure a CREATE
with the prior as context. A fallback CREATE is merged into the prior through the guards, so even
that path cannot silently drop a path, an error or an open issue. When the model is unusable for
good the extractive builder finishes the archive.
"""

from __future__ import annotations

import json
from typing import Any

import structlog

from app.core.rules.transcript import render_transcript
from app.core.threads import to_thread
from app.providers.protocols import ChatModel, ChatResult, ProviderError
from app.working_memory.document import (
    WM_SEVEN_SECTIONS,
    is_wm_v2,
    normalize_created_wm,
    parse_wm_sections,
    section_key,
)
from app.working_memory.prompts import create_messages, update_messages
from app.working_memory.reminders import build_section_reminders
from app.working_memory.section_merge import merge_wm_sections
from app.working_memory.service import WmInputs, WmResult, build_extractive, finish_result
from app.working_memory.tool_call import (
    WM_UPDATE_TOOL,
    WM_UPDATE_TOOL_NAME,
    parse_update_arguments,
    raw_arguments_text,
    recover_ops_from_raw,
)

log = structlog.get_logger("app.working_memory")


class _Usage:
    def __init__(self) -> None:
        self.totals = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0}

    def add(self, result: ChatResult) -> ChatResult:
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            self.totals[key] += int(result.usage.get(key, 0) or 0)
        self.totals["calls"] += 1
        return result


class LlmWorkingMemoryBuilder:
    """Builds the Working Memory with a chat model; never fails while the extractive path works."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def build(self, inputs: WmInputs) -> WmResult:
        usage = _Usage()
        prior = inputs.prior_overview
        # The CPU work around the model calls (transcript, merges, the fallback builder) runs in
        # worker threads: an archive can hold megabytes of tool output.
        transcript = await to_thread(render_transcript, inputs.messages)
        if prior and is_wm_v2(prior):
            overview, path = await self._update(inputs, prior, transcript, usage)
        else:
            overview, path = await self._create_or_extract(
                inputs, prior, transcript, usage, "create"
            )
        return finish_result(overview, path, usage.totals)

    async def _update(
        self, inputs: WmInputs, prior: str, transcript: str, usage: _Usage
    ) -> tuple[str, str]:
        messages = update_messages(
            transcript, prior, build_section_reminders(prior), inputs.custom_instructions
        )
        try:
            result = usage.add(
                await self._model.complete_with_forced_tool(messages, WM_UPDATE_TOOL)
            )
        except ProviderError as exc:
            log.warning("wm_update_call_failed", error=str(exc))
            return await self._create_or_extract(
                inputs, prior, transcript, usage, "fallback_create"
            )
        raw = _tool_arguments(result)
        if raw is None:
            return await self._create_or_extract(
                inputs, prior, transcript, usage, "fallback_create"
            )
        ops = parse_update_arguments(raw)
        if ops is not None:
            return await to_thread(merge_wm_sections, prior, ops), "update"
        salvaged = recover_ops_from_raw(raw_arguments_text(raw))
        if salvaged:
            return await to_thread(merge_wm_sections, prior, salvaged), "salvaged"
        return await self._create_or_extract(inputs, prior, transcript, usage, "fallback_create")

    async def _create_or_extract(
        self, inputs: WmInputs, prior: str | None, transcript: str, usage: _Usage, path: str
    ) -> tuple[str, str]:
        messages = create_messages(transcript, prior, inputs.custom_instructions)
        try:
            result = usage.add(await self._model.complete(messages))
        except ProviderError as exc:
            log.warning("wm_create_call_failed", error=str(exc), path=path)
            return (await to_thread(build_extractive, inputs)).overview, "extractive"
        if not result.content or not result.content.strip():
            return (await to_thread(build_extractive, inputs)).overview, "extractive"
        created = normalize_created_wm(result.content)
        if prior and is_wm_v2(prior):
            # The guards still stand between a rewritten document and the prior one.
            return await to_thread(merge_wm_sections, prior, _as_update_ops(created)), path
        return created, path


def _tool_arguments(result: ChatResult) -> Any | None:
    """The update tool's arguments: from the tool call, or a tool call written as JSON content."""
    for call in result.tool_calls:
        if call.name in (WM_UPDATE_TOOL_NAME, ""):
            return call.arguments
    if result.tool_calls:
        return result.tool_calls[0].arguments
    content = (result.content or "").strip()
    if not content:
        return None
    start = content.find("{")
    if start < 0:
        return None
    candidate = content[start:].strip().removesuffix("```").strip()
    try:
        parsed = json.loads(candidate)
    except ValueError:
        return candidate  # let the lenient parser and the salvage try
    # {"name": "update_working_memory", "arguments": {...}} or {"function": {...}} as plain text.
    if isinstance(parsed, dict):
        function = parsed.get("function")
        inner = function if isinstance(function, dict) else parsed
        if "arguments" in inner:
            return inner["arguments"]
    return parsed


def _as_update_ops(document: str) -> dict[str, dict[str, str]]:
    parsed = parse_wm_sections(document)
    return {
        name: {"op": "UPDATE", "content": parsed.get(section_key(name), "")}
        for name in WM_SEVEN_SECTIONS
    }


__all__ = ["LlmWorkingMemoryBuilder"]
