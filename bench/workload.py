"""Deterministic, realistic OpenClaw ``AgentMessage`` dicts for the benchmarks.

A coding-agent session: user requests and questions, assistant prose, tool calls with arguments,
tool results (file listings, test output, stack traces), file paths, numbers, error lines, some
Chinese. Every generator takes a ``random.Random`` so a run is reproducible.
"""

from __future__ import annotations

import random
from typing import Any

Message = dict[str, Any]

BASE_TS_MS = 1_760_000_000_000

# Planted search terms (the filler vocabulary below never produces them).
SELECTIVE_TERM = "E_PIPELINE_4417"
COMMON_TERM = "deploy"
SHORT_RARE_TERM = "Q7"
CHINESE_TERM = "部署失败"

_MODULES = ["api", "core", "db", "jobs", "auth", "billing", "search", "render", "cache", "worker"]
_FILES = [
    "service",
    "handlers",
    "models",
    "repository",
    "utils",
    "config",
    "schema",
    "client",
    "tasks",
]
_EXTS = [".py", ".ts", ".go", ".rs", ".yaml", ".json", ".md", ".sql"]
_VERBS = [
    "refactor",
    "fix",
    "add",
    "remove",
    "rename",
    "document",
    "test",
    "profile",
    "migrate",
    "review",
]
_NOUNS = [
    "the retry logic",
    "the cache layer",
    "the login flow",
    "the invoice export",
    "the rate limiter",
    "the search index",
    "the job queue",
    "the config loader",
    "the websocket handler",
    "the CLI",
]
_ERRORS = [
    "TypeError: cannot unpack non-iterable NoneType object",
    "KeyError: 'user_id'",
    "AssertionError: expected 200, got 500",
    "sqlite3.OperationalError: database is locked",
    "ConnectionRefusedError: [Errno 111] Connection refused",
    "ValueError: invalid literal for int() with base 10: 'abc'",
    "TimeoutError: request took longer than 30s",
    "ImportError: cannot import name 'Settings' from 'app.config'",
]
_PROSE = [
    "I looked at the code path and the problem is that the handler swallows the exception.",
    "The simplest fix is to validate the input before it reaches the repository.",
    "We decided to keep the old behaviour behind a flag until the migration is done.",
    "All tests pass now except the flaky integration test, which times out on CI.",
    "The benchmark shows the hot loop spends most of its time serialising JSON.",
    "I updated the docstring and the README so the new option is documented.",
    "This change is backwards compatible; old clients keep working.",
    "Let me check the logs again to see whether the retry actually happened.",
    "The root cause was an off-by-one error in the pagination cursor.",
    "I will run the full test suite before opening the pull request.",
    "TODO: follow up on the flaky retry test once the fix is merged.",
]
_QUESTIONS = [
    "Why does the worker retry forever when the upstream returns 429?",
    "Can you check whether the migration is idempotent?",
    "What happens if two requests update the same row at once?",
    "Is the timeout configurable per tenant?",
    "Should we log the request body or only its size?",
]
_CHINESE = [
    "昨天部署失败了，请帮我看一下日志。",
    "这个函数的返回值不对，需要修复。",
    "请把配置文件里的超时时间改成三十秒。",
    "测试通过了，可以合并吗？",
]
_TOOLS = ["read", "exec", "edit", "write", "grep"]


def _path(rng: random.Random) -> str:
    return f"src/{rng.choice(_MODULES)}/{rng.choice(_FILES)}{rng.choice(_EXTS)}"


def _sentence(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.45:
        return rng.choice(_PROSE)
    if kind < 0.6:
        return rng.choice(_QUESTIONS)
    if kind < 0.75:
        return f"The change touches {_path(rng)} and {_path(rng)} (line {rng.randint(1, 900)})."
    if kind < 0.85:
        return f"Latency went from {rng.randint(20, 900)} ms to {rng.randint(5, 200)} ms after {rng.choice(_VERBS)}ing {rng.choice(_NOUNS)}."
    if kind < 0.95:
        return f"We need to {COMMON_TERM} version {rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)} to staging."
    return rng.choice(_CHINESE)


def _paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(_sentence(rng) for _ in range(sentences))


def _tool_output(rng: random.Random, tool: str) -> tuple[str, bool]:
    if tool == "exec" and rng.random() < 0.35:
        err = rng.choice(_ERRORS)
        trace = "\n".join(
            f'  File "{_path(rng)}", line {rng.randint(1, 900)}, in {rng.choice(_FILES)}_{rng.choice(_VERBS)}'
            for _ in range(rng.randint(3, 8))
        )
        return f"Traceback (most recent call last):\n{trace}\n{err}\nexit code 1", True
    if tool == "exec":
        passed = rng.randint(10, 400)
        lines = [
            f"{_path(rng)}::test_{rng.choice(_VERBS)}_{i} PASSED" for i in range(rng.randint(3, 15))
        ]
        return "\n".join(
            lines
        ) + f"\n===== {passed} passed in {rng.randint(1, 90)}.{rng.randint(0, 99)}s =====", False
    if tool == "grep":
        return "\n".join(
            f"{_path(rng)}:{rng.randint(1, 900)}: {rng.choice(_PROSE)}"
            for _ in range(rng.randint(2, 12))
        ), False
    if tool == "read":
        body = "\n".join(
            f"def {rng.choice(_VERBS)}_{rng.choice(_FILES)}(value: int) -> int:\n    return value * {rng.randint(2, 99)}"
            for _ in range(rng.randint(3, 20))
        )
        return body, False
    return f"Successfully wrote {rng.randint(100, 9000)} bytes to {_path(rng)}", False


class Conversation:
    """Generates turns of one session; timestamps and tool-call ids increase monotonically."""

    def __init__(self, seed: int, prefix: str = "") -> None:
        self.rng = random.Random(seed)
        self.ts = BASE_TS_MS + seed * 1_000_000
        self.calls = 0
        self.prefix = prefix

    def _tick(self) -> int:
        self.ts += self.rng.randint(200, 5000)
        return self.ts

    def user(self) -> Message:
        rng = self.rng
        text = rng.choice(
            [
                f"Please {rng.choice(_VERBS)} {rng.choice(_NOUNS)} in {_path(rng)}.",
                rng.choice(_QUESTIONS),
                f"{rng.choice(_VERBS).capitalize()} {rng.choice(_NOUNS)}; it fails with {rng.choice(_ERRORS)}",
                rng.choice(_CHINESE),
                _paragraph(rng, rng.randint(1, 3)),
            ]
        )
        return {"role": "user", "content": text, "timestamp": self._tick()}

    def assistant(self) -> Message:
        text = _paragraph(self.rng, self.rng.randint(1, 5))
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stopReason": "stop",
            "timestamp": self._tick(),
        }

    def tool_pair(self) -> tuple[Message, Message]:
        rng = self.rng
        self.calls += 1
        call_id = f"call_{self.prefix}{self.calls:06d}"
        tool = rng.choice(_TOOLS)
        if tool == "exec":
            args: dict[str, Any] = {"command": f"pytest -q {_path(rng)} -k {rng.choice(_VERBS)}"}
        elif tool == "grep":
            args = {"pattern": rng.choice(_FILES), "path": f"src/{rng.choice(_MODULES)}"}
        else:
            args = {"path": _path(rng)}
        call = {
            "role": "assistant",
            "content": [
                {"type": "text", "text": rng.choice(_PROSE)},
                {"type": "toolCall", "id": call_id, "name": tool, "arguments": args},
            ],
            "stopReason": "toolUse",
            "timestamp": self._tick(),
        }
        output, is_error = _tool_output(rng, tool)
        result = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": tool,
            "content": [{"type": "text", "text": output}],
            "isError": is_error,
            "timestamp": self._tick(),
        }
        return call, result

    def turn(self) -> list[Message]:
        """Four messages: request, tool call, tool result, answer."""
        call, result = self.tool_pair()
        return [self.user(), call, result, self.assistant()]

    def messages(self, count: int) -> list[Message]:
        out: list[Message] = []
        while len(out) < count:
            out.extend(self.turn())
        return out[:count]


def search_corpus(count: int, seed: int = 7) -> list[Message]:
    """``count`` archived messages with the planted search terms at fixed densities.

    - ``SELECTIVE_TERM``: in 5 messages whatever the size;
    - ``COMMON_TERM``: in about 8% of the messages (from the filler);
    - ``SHORT_RARE_TERM`` (2 characters, below the trigram index): in 10 messages, spread out,
      so a keyword search for it scans the whole session;
    - ``CHINESE_TERM``: in about 2% of the messages (from the filler).
    """
    conv = Conversation(seed, prefix="s")
    messages = conv.messages(count)
    rng = random.Random(seed + 1)
    for index in rng.sample(range(count), min(5, count)):
        _append_text(
            messages[index], f" Build failed with {SELECTIVE_TERM} in stage {rng.randint(1, 9)}."
        )
    for k in range(min(10, count)):
        index = (k * count) // 10 + count // 20
        _append_text(messages[min(index, count - 1)], f" Ticket {SHORT_RARE_TERM} is still open.")
    return messages


def _append_text(message: Message, extra: str) -> None:
    content = message["content"]
    if isinstance(content, str):
        message["content"] = content + extra
        return
    for block in content:
        if block.get("type") == "text":
            block["text"] += extra
            return
    content.append({"type": "text", "text": extra})
