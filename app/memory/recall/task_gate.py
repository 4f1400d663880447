"""The experience task gate: does the latest user turn look like task execution?

Deterministic scoring of the reference's ``shouldRecallAgentExperience`` (docs/recall.md, Experience
recall; docs/peers.md, OpenViking §5.6). The patterns are the reference's JavaScript regular expressions:
they run with ``re.ASCII`` so that ``\\b``, ``\\w`` and ``\\s`` keep their JavaScript meaning (an
ASCII word boundary also separates a Latin word from an adjacent Chinese character).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.rules.sanitize import sanitize_text

TASK_START = "task_start"
CRON_START = "cron_start"
RECALL_MIN_SCORE = 3
FORCED_SCORE = 99
ENVELOPE_OPEN_TAG = "<openviking-context"

_FLAGS = re.IGNORECASE | re.ASCII

WRITE_OR_EFFECT_RE = re.compile(
    r"\b(write|edit|modify|delete|remove|migrate|deploy|release|publish|configure|patch)\b"
    r"|写|改|修改|删除|迁移|部署|发布|配置|打补丁",
    _FLAGS,
)
EXECUTION_RE = re.compile(
    r"\b(fix|debug|test|build|run|implement|refactor|integrate|repair|troubleshoot)\b"
    r"|修复|调试|测试|构建|运行|实现|重构|对接|排查",
    _FLAGS,
)
FAILURE_RE = re.compile(
    r"\b(error|exception|traceback|failed|failure|retry|exit code|test failed)\b"
    r"|报错|异常|失败|重试|挂了|不通过",
    _FLAGS,
)
ENGINEERING_OBJECT_RE = re.compile(
    r"(?:^|\s)(?:[\w.-]+/[\w./-]+|[\w./-]+\.(?:ts|tsx|js|jsx|py|go|rs|java|md|json|ya?ml|toml|sh|sql))\b"
    r"|`[^`]+`"
    r"|\b(?:repo|workspace|plugin|service|component|hook|api|tool|package|module)\b"
    r"|仓库|工作区|插件|服务|组件|接口|工具|模块|文件",
    _FLAGS,
)
EXPERIENCE_INTENT_RE = re.compile(
    r"经验|踩坑|最佳实践|不要再|按之前|avoid|best practice|lesson|pitfall", _FLAGS
)
CASUAL_RE = re.compile(r"闲聊|翻译|总结当前对话|天气|笑话|hello|hi\b|你好", _FLAGS)
# The reference's "$" is the end of the input (no multiline flag); "\Z" says exactly that.
QUESTION_ONLY_RE = re.compile(
    r"^(?:什么是|是什么|区别|解释|讲讲|怎么看|为什么|如何理解|where is|what is|explain"
    r"|difference between)\b|[?？]\Z",
    _FLAGS,
)

# docs/recall.md, Experience recall: +3 / +2 / +2 / +2 / +1 / -3 (the -2 is conditional, below).
_WEIGHTS: tuple[tuple[re.Pattern[str], int], ...] = (
    (WRITE_OR_EFFECT_RE, 3),
    (EXECUTION_RE, 2),
    (FAILURE_RE, 2),
    (ENGINEERING_OBJECT_RE, 2),
    (EXPERIENCE_INTENT_RE, 1),
    (CASUAL_RE, -3),
)
_QUESTION_ONLY_PENALTY = -2


@dataclass(frozen=True, slots=True)
class GateDecision:
    """The gate's answer; ``score`` is 0 and ``trigger`` "" when the text was never scored."""

    recall: bool
    reason: str
    score: int = 0
    trigger: str = ""


def is_cron_run(session_key: str | None, runtime_context: Mapping[str, Any] | None) -> bool:
    """The reference's ``isCronSession``: ``:cron:`` in the key, or the runtime context says cron."""
    # docs/peers.md, OpenViking §5.6, task gate step 5.
    if isinstance(session_key, str) and ":cron:" in session_key:
        return True
    if isinstance(runtime_context, Mapping):
        return (
            runtime_context.get("isCron") is True or runtime_context.get("automationKind") == "cron"
        )
    return False


def task_score(text: str) -> int:
    """The execution score of a sanitized text."""
    # docs/peers.md, OpenViking §5.6, task gate step 6.
    score = sum(weight for pattern, weight in _WEIGHTS if pattern.search(text))
    engineering = ENGINEERING_OBJECT_RE.search(text) or EXECUTION_RE.search(text)
    if not engineering and QUESTION_ONLY_RE.search(text):
        score += _QUESTION_ONLY_PENALTY
    return score


def should_recall_experience(
    latest_user_text: str,
    *,
    session_key: str | None = None,
    runtime_context: Mapping[str, Any] | None = None,
    trigger_hint: str | None = None,
    min_query_chars: int = 12,
    bypassed: bool = False,
) -> GateDecision:
    """Decide whether to recall agent experiences for this user turn."""
    # docs/peers.md, OpenViking §5.6, task gate steps 1-4, in the reference's order.
    text = sanitize_text(latest_user_text, collapse_whitespace=True).strip()
    if bypassed:
        return GateDecision(recall=False, reason="session_bypassed")
    if len(text) < min_query_chars:
        return GateDecision(recall=False, reason="query_too_short")
    if ENVELOPE_OPEN_TAG in latest_user_text:
        return GateDecision(recall=False, reason="already_injected")
    # Step 5: any trigger other than task_start is forced; cron runs are cron_start.
    if trigger_hint is not None:
        trigger = trigger_hint
    else:
        trigger = CRON_START if is_cron_run(session_key, runtime_context) else TASK_START
    if trigger != TASK_START:
        return GateDecision(
            recall=True, reason="forced_trigger", score=FORCED_SCORE, trigger=trigger
        )
    # Steps 6-7.
    score = task_score(text)
    if score >= RECALL_MIN_SCORE:
        return GateDecision(recall=True, reason="task_execution", score=score, trigger=TASK_START)
    reason = "non_execution" if score < 0 else "below_threshold"
    return GateDecision(recall=False, reason=reason, score=score, trigger=TASK_START)
