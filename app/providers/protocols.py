"""What the domain knows about models: typed errors, the chat and embedding interfaces. Nothing above this
layer knows HTTP."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class ProviderError(Exception):
    """A model provider call failed."""


class TransientProviderError(ProviderError):
    """Worth retrying: timeouts, connection errors, 429, 5xx."""

    def __init__(
        self, message: str, retry_after: float | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.status = status


class PermanentProviderError(ProviderError):
    """Not worth retrying: other 4xx, malformed answers."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class ToolCallResult:
    """One tool call of an answer; ``arguments`` as the provider sent them (JSON text or object)."""

    name: str
    arguments: Any
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ChatResult:
    content: str | None
    tool_calls: list[ToolCallResult] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    model: str | None = None
    attempts: int = 1


class ChatModel(Protocol):
    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: Any = None,
    ) -> ChatResult:
        """One chat completion (retrying transient errors)."""
        ...

    async def complete_with_forced_tool(
        self, messages: list[dict[str, Any]], tool: dict[str, Any]
    ) -> ChatResult:
        """A completion that must call ``tool``; falls back to "required", then "auto" choices."""
        ...


class Embedder(Protocol):
    """Texts to L2-normalised vectors of one model's space; ``endpoint_key`` holds no secret."""

    @property
    def provider(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def dimensions(self) -> int: ...
    @property
    def endpoint_key(self) -> str: ...
    @property
    def similarity_floor(self) -> float:
        """The cosine the model gives unrelated texts (0.0 when it is not known)."""
        ...

    async def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """One vector per search query, in input order."""
        ...

    async def embed_passages(self, texts: list[str]) -> list[list[float]]:
        """One vector per stored passage, in input order."""
        ...

    async def fit_passages(self, texts: list[str], max_tokens: int) -> list[str]:
        """The passages, in order, while together they hold at most ``max_tokens`` of the model's
        input tokens: the first that does not fit is cut, the rest left out
        (``app.core.rules.tokens.fit_to_token_budget``)."""
        ...
