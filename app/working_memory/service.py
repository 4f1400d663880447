"""Build the Working Memory of one archive (docs/working-memory.md, Update flow).

The builder is chosen once at start-up. Without an LLM the deterministic extractive builder runs,
merged into the prior through the guards. An LLM-backed builder plugs in behind the same
``WorkingMemoryBuilder`` protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from app.core.rules.messages import Message
from app.core.rules.tokens import estimate_text_tokens
from app.core.threads import to_thread
from app.working_memory.document import extract_abstract
from app.working_memory.extractive import update_working_memory_extractive


@dataclass(frozen=True, slots=True)
class WmInputs:
    messages: list[Message]
    prior_overview: str | None
    first_user_request: str | None
    custom_instructions: str | None = None


@dataclass(frozen=True, slots=True)
class WmResult:
    overview: str
    abstract: str
    overview_tokens: int
    path: str
    usage: dict[str, Any] = field(default_factory=dict)


class WorkingMemoryBuilder(Protocol):
    async def build(self, inputs: WmInputs) -> WmResult:
        """The new Working Memory for an archive."""
        ...


def finish_result(overview: str, path: str, usage: dict[str, Any] | None = None) -> WmResult:
    """Wrap a finished document with its abstract and size."""
    return WmResult(
        overview=overview,
        abstract=extract_abstract(overview),
        overview_tokens=estimate_text_tokens(overview),
        path=path,
        usage=usage or {},
    )


def build_extractive(inputs: WmInputs) -> WmResult:
    """The deterministic builder (no model), merged through the guards."""
    overview = update_working_memory_extractive(
        inputs.prior_overview, inputs.messages, first_user_request=inputs.first_user_request
    )
    return finish_result(overview, "extractive")


class ExtractiveBuilder:
    """The embedded default: no network, no model."""

    async def build(self, inputs: WmInputs) -> WmResult:
        # CPU work over a whole archive: a worker thread, never the event loop.
        return await to_thread(build_extractive, inputs)
