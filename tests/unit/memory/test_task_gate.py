"""The experience task gate (docs/recall.md, Experience recall; docs/peers.md, OpenViking §5.6)."""

from __future__ import annotations

import pytest

from app.memory.recall.task_gate import (
    GateDecision,
    is_cron_run,
    should_recall_experience,
    task_score,
)

# The reference's own examples.


def test_reference_example_question_is_not_recalled() -> None:
    decision = should_recall_experience("preflight assemble 和 transformcontext assemble是什么区别")
    assert decision == GateDecision(
        recall=False, reason="below_threshold", score=0, trigger="task_start"
    )


def test_reference_example_plugin_fix_is_recalled_with_score_5() -> None:
    decision = should_recall_experience("修一下 OpenClaw 插件里 afterTurn 写入 tool result 的问题")
    assert decision == GateDecision(
        recall=True, reason="task_execution", score=5, trigger="task_start"
    )


def test_reference_example_cron_is_forced() -> None:
    decision = should_recall_experience(
        "summarize this conversation please", trigger_hint="cron_start"
    )
    assert decision == GateDecision(
        recall=True, reason="forced_trigger", score=99, trigger="cron_start"
    )


# Scoring, English and Chinese: (text, recall, reason, score).
SCORED = [
    # fix +2 (execution), path +2 (engineering object).
    ("Please fix the failing test in app/memory/text.py", True, "task_execution", 4),
    # deploy +3, service +2.
    ("deploy the service to staging and check the health endpoint", True, "task_execution", 5),
    # Case-insensitive.
    ("DEPLOY THE SERVICE NOW PLEASE", True, "task_execution", 5),
    # build +2, failed +2.
    ("The build failed with exit code 137 again", True, "task_execution", 4),
    # refactor +2, module +2, avoid/pitfall +1.
    ("Refactor the payment module, avoid the pitfall from last time", True, "task_execution", 5),
    # "explain" opens the text, but an engineering object cancels the question-only penalty:
    # retry +2, backticks +2.
    ("explain the retry logic in the `sync_worker` function", True, "task_execution", 4),
    # run +2 only: "migration" is not the word "migrate".
    ("run the migration and check the logs", False, "below_threshold", 2),
    # "writer" is not the word "write".
    ("writer's block tips for novels", False, "below_threshold", 0),
    ("Tell me a story about dragons and castles", False, "below_threshold", 0),
    # Question-only: "difference between" is not an opening phrase, the final "?" is.
    ("What is the difference between BM25 and TF-IDF?", False, "non_execution", -2),
    ("what is a good name for my cat", False, "non_execution", -2),
    ("Can you explain why the sky looks blue?", False, "non_execution", -2),
    # hello -3, final "?" -2.
    ("hello, how is the weather today?", False, "non_execution", -5),
    # The reference's "hi\b" has no leading boundary: "Delhi" is casual. publish +3, -3.
    ("Publish the release notes for Delhi", False, "below_threshold", 0),
    # ASCII word boundaries as in JavaScript: "tool" next to Chinese characters is a word.
    ("修复tool调用返回空结果的bug", True, "task_execution", 4),
    # 迁移 +3 (部署 is the same pattern), 测试 +2.
    ("帮我把数据库迁移脚本部署到测试环境", True, "task_execution", 5),
    # 部署 +3, 失败/报错/exit code +2.
    ("部署失败了，报错 exit code 1", True, "task_execution", 5),
    # 排查 +2, 接口 +2, 经验/按之前 +1.
    ("按之前的经验排查一下这个接口超时", True, "task_execution", 5),
    # 重构 +2 (测试 is the same pattern), 模块 +2.
    ("请重构这个模块并补上单元测试", True, "task_execution", 4),
    # 配置 +3, 仓库/文件 +2.
    ("这个仓库的配置文件应该放在哪里比较合适", True, "task_execution", 5),
    # 为什么 opens the text, but the path and 报错 make it a task: +2 +2.
    ("为什么 src/app.py 启动时报错", True, "task_execution", 4),
    # 翻译 / 天气: -3 once.
    ("翻译这段话成英文：今天天气很好", False, "non_execution", -3),
    ("你好，今天我们随便闲聊一下吧", False, "non_execution", -3),
    ("总结当前对话的主要内容，谢谢你", False, "non_execution", -3),
    # 什么是 opens the text and it ends with a full-width question mark: -2 once.
    ("什么是向量数据库，能讲讲吗？", False, "non_execution", -2),
    ("你怎么看这个开源项目的发展前景？", False, "non_execution", -2),
    # 项目 is not an engineering object in the reference.
    ("这个项目的发展历史可以介绍一下", False, "below_threshold", 0),
]


@pytest.mark.parametrize(("text", "recall", "reason", "score"), SCORED)
def test_scoring(text: str, recall: bool, reason: str, score: int) -> None:
    decision = should_recall_experience(text)
    assert (decision.recall, decision.reason, decision.score) == (recall, reason, score)
    assert decision.trigger == "task_start"
    assert task_score(text) == score


# Hard skips, in the reference's order.


def test_bypassed_session_is_skipped_first() -> None:
    decision = should_recall_experience(
        "deploy the service to staging", session_key="agent:main:cron:x", bypassed=True
    )
    assert decision == GateDecision(recall=False, reason="session_bypassed", score=0, trigger="")


def test_short_query_is_skipped() -> None:
    assert should_recall_experience("fix it").reason == "query_too_short"


def test_short_query_is_skipped_even_for_cron() -> None:
    assert (
        should_recall_experience("run", session_key="agent:main:cron:j").reason == "query_too_short"
    )


def test_min_query_chars_is_configurable() -> None:
    decision = should_recall_experience("fix it", min_query_chars=5)
    assert (decision.reason, decision.score) == ("below_threshold", 2)


def test_length_is_measured_after_sanitation() -> None:
    text = "[2026-03-29T10:00:00Z]   deploy   it   "
    assert should_recall_experience(text).reason == "query_too_short"


def test_already_injected_text_is_skipped() -> None:
    text = (
        "<openviking-context>\n## Long-term Memories\n- [profile] x\n</openviking-context>\n"
        "please fix the build error in the plugin"
    )
    assert should_recall_experience(text) == GateDecision(recall=False, reason="already_injected")


def test_injected_block_does_not_count_towards_the_score() -> None:
    # The sanitized text is scored: the envelope's words (deploy, plugin) are not.
    assert task_score("tell me a story about dragons") == 0


# Forced triggers.


@pytest.mark.parametrize(
    ("session_key", "runtime_context"),
    [
        ("agent:main:cron:nightly-report", None),
        (None, {"isCron": True}),
        ("agent:main:main", {"automationKind": "cron"}),
    ],
)
def test_cron_runs_are_forced(session_key: str | None, runtime_context: dict | None) -> None:
    decision = should_recall_experience(
        "summarize this conversation please",
        session_key=session_key,
        runtime_context=runtime_context,
    )
    assert decision == GateDecision(
        recall=True, reason="forced_trigger", score=99, trigger="cron_start"
    )


def test_other_trigger_hints_are_forced() -> None:
    decision = should_recall_experience("look at this skill file now", trigger_hint="skill_load")
    assert (decision.recall, decision.trigger, decision.score) == (True, "skill_load", 99)


def test_task_start_hint_overrides_cron_detection() -> None:
    decision = should_recall_experience(
        "summarize this conversation please",
        session_key="agent:main:cron:x",
        trigger_hint="task_start",
    )
    assert (decision.recall, decision.reason) == (False, "below_threshold")


@pytest.mark.parametrize(
    ("session_key", "runtime_context", "expected"),
    [
        ("agent:main:cron:job", None, True),
        ("cron:job", None, False),  # the reference looks for ":cron:" only
        ("agent:main:main", {"isCron": "true"}, False),  # only the boolean true
        ("agent:main:main", {"automationKind": "heartbeat"}, False),
        (None, None, False),
    ],
)
def test_cron_detection(
    session_key: str | None, runtime_context: dict | None, expected: bool
) -> None:
    assert is_cron_run(session_key, runtime_context) is expected
