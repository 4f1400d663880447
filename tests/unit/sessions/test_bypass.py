"""Bypass patterns, agent id resolution and cron detection."""

from __future__ import annotations

import re

import pytest

from app.core.rules.bypass import (
    compile_session_pattern,
    is_bypassed,
    is_cron_session,
    resolve_agent_id,
)


@pytest.mark.parametrize(
    ("glob", "text", "expected"),
    [
        ("agent:*:cron:**", "agent:main:cron:job1", True),
        ("agent:*:cron:**", "agent:main:cron:job1:run:2", True),
        ("agent:*:cron:**", "agent:main:sub:cron:job1", False),
        ("agent:*:main", "agent:ops:main", True),
        ("agent:*:main", "agent::main", True),
        ("agent:*:main", "agent:a:b:main", False),
        ("agent:**:main", "agent:a:b:main", True),
        ("cron:*", "cron:abc", True),
        ("cron:*", "cron:abc:def", False),
        ("cron:*", "xcron:abc", False),
        ("exact", "exact", True),
        ("exact", "exactly", False),
        ("exact", "the exact", False),
        ("**", "anything:at:all", True),
        ("*", "", True),
        ("", "", True),
        ("", "x", False),
    ],
)
def test_glob_semantics(glob: str, text: str, expected: bool) -> None:
    assert bool(compile_session_pattern(glob).match(text)) is expected


def test_regex_characters_are_literal() -> None:
    pattern = compile_session_pattern("a.b+(c)?[d]|e$")
    assert pattern.match("a.b+(c)?[d]|e$")
    assert not pattern.match("axb+(c)?[d]|e$")
    assert not pattern.match("abb")


def test_anchor_rejects_trailing_newline() -> None:
    assert not compile_session_pattern("agent:main").match("agent:main\n")


def test_double_star_crosses_newlines() -> None:
    assert compile_session_pattern("a**").match("a\nb")


def test_patterns_are_case_sensitive() -> None:
    assert not compile_session_pattern("Agent:*").match("agent:x")


def test_is_bypassed_uses_session_key_when_present() -> None:
    assert is_bypassed(["agent:*:cron:**"], "agent:main:cron:1", "sid")
    assert not is_bypassed(["sid"], "agent:main:main", "sid")


def test_is_bypassed_falls_back_to_session_id() -> None:
    assert is_bypassed(["temp-*"], None, "temp-123")
    assert is_bypassed(["temp-*"], "", "temp-123")
    assert not is_bypassed(["temp-*"], None, "perm-123")


def test_is_bypassed_without_patterns_or_ids() -> None:
    assert not is_bypassed([], "agent:main:main", "sid")
    assert not is_bypassed(["**"], None, None)
    assert not is_bypassed(["**"], "", "")


def test_is_bypassed_accepts_compiled_patterns_and_any_match() -> None:
    patterns = [re.compile(r"\Anever\Z"), "hook:*"]
    assert is_bypassed(patterns, "hook:abc", None)
    assert is_bypassed([compile_session_pattern("hook:*")], "hook:abc", None)


# Agent id (docs/api.md, Identity).


def test_agent_id_from_body_wins() -> None:
    assert resolve_agent_id("ops", "agent:main:x", {"agentId": "ctx"}) == "ops"


def test_agent_id_from_session_key_prefix() -> None:
    assert (
        resolve_agent_id(None, "agent:research:telegram:group:1", {"agentId": "ctx"}) == "research"
    )
    assert resolve_agent_id("", "agent:research:main", None) == "research"
    assert resolve_agent_id("   ", "agent:research:main", None) == "research"


def test_agent_id_key_must_have_the_prefix_form() -> None:
    assert resolve_agent_id(None, "agent:research", None) == "main"
    assert resolve_agent_id(None, "agent::main", None) == "main"
    assert resolve_agent_id(None, "xagent:r:main", None) == "main"
    assert resolve_agent_id(None, "cron:job", {"agentId": "ctx"}) == "ctx"


def test_agent_id_from_runtime_context_then_default() -> None:
    assert resolve_agent_id(None, None, {"agentId": "ctx"}) == "ctx"
    assert resolve_agent_id(None, None, {"agentId": ""}) == "main"
    assert resolve_agent_id(None, None, {"agentId": 5}) == "main"
    assert resolve_agent_id(None, None, None) == "main"


# Cron detection.


@pytest.mark.parametrize(
    ("key", "context", "expected"),
    [
        ("agent:main:cron:job1", None, True),
        ("cron:job1", None, True),
        ("agent:main:main", None, False),
        ("agent:main:cronjob", None, False),
        (None, None, False),
        (None, {"isCron": True}, True),
        (None, {"isCron": "true"}, False),
        (None, {"isCron": False}, False),
        ("agent:main:main", {"automationKind": "cron"}, True),
        ("agent:main:main", {"automationKind": "webhook"}, False),
        (None, {}, False),
    ],
)
def test_is_cron_session(key: str | None, context: dict | None, expected: bool) -> None:
    assert is_cron_session(key, context) is expected
