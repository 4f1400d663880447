"""The deterministic builder used without an LLM (docs/working-memory.md "Without an LLM")."""

from __future__ import annotations

import copy
import time
from typing import Any

from app.core.rules.tokens import estimate_text_tokens
from app.working_memory.document import (
    WM_SEVEN_SECTIONS,
    WM_TOKEN_BUDGET,
    extract_bullet_items,
    parse_wm_sections,
    render_wm,
)
from app.working_memory.extractive import (
    BULLET_MAX_CHARS,
    SECTION_CAPS,
    build_extractive_ops,
    make_title,
    update_working_memory_extractive,
)
from app.working_memory.guards import WM_CONSOLIDATION_SENTINEL

Message = dict[str, Any]


def user(text: str) -> Message:
    return {"role": "user", "content": text}


def assistant(text: str, *calls: tuple[str, str, dict[str, Any]]) -> Message:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for call_id, name, arguments in calls:
        blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": arguments})
    return {"role": "assistant", "content": blocks}


def tool_result(call_id: str, name: str, text: str, is_error: bool = False) -> Message:
    return {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": [{"type": "text", "text": text}],
        "isError": is_error,
    }


def body(wm: str, name: str) -> str:
    return parse_wm_sections(wm).get(f"## {name}", "")


def items(wm: str, name: str) -> list[str]:
    return extract_bullet_items(body(wm, name))


def headers(wm: str) -> list[str]:
    return [line for line in wm.splitlines() if line.startswith("## ")]


SEVEN = [f"## {name}" for name in WM_SEVEN_SECTIONS]

FIRST = [
    user("[Mon 2024-05-06 09:00 UTC] Please help me fix the login bug in src/auth/login.py"),
    assistant("Let me read it.", ("c1", "read", {"path": "src/auth/login.py"})),
    tool_result(
        "c1", "read", "Traceback (most recent call last):\nKeyError: 'session_token'", True
    ),
    assistant(
        "The handler reads session_token before it is set. We decided to move the check because "
        "the middleware runs first. Tests run on 2024-05-07 and the fix costs $0. "
        "TODO: add a regression test for expired tokens."
    ),
    user("Also, is config/settings.yaml still used?"),
]


def test_fresh_document_sections() -> None:
    wm = update_working_memory_extractive(None, FIRST)
    assert headers(wm) == SEVEN
    assert body(wm, "Session Title") == "fix the login bug in src/auth/login.py"
    state = body(wm, "Current State")
    assert "config/settings.yaml" in state and "handler reads session_token" in state
    assert len(state) <= 600
    assert items(wm, "Task & Goals")[0] == "Please help me fix the login bug in src/auth/login.py"
    facts = body(wm, "Key Facts & Decisions")
    assert "We decided to move the check because the middleware runs first." in facts
    assert "2024-05-07" in facts
    files = body(wm, "Files & Context")
    assert "src/auth/login.py" in files and "config/settings.yaml" in files
    errors = body(wm, "Errors & Corrections")
    assert "read error: KeyError: 'session_token'" in errors
    assert "Traceback" not in errors
    issues = body(wm, "Open Issues")
    assert "Unanswered: Also, is config/settings.yaml still used?" in issues
    assert "TODO: add a regression test for expired tokens." in issues


def test_title_from_first_user_request_of_session() -> None:
    later = [user("now look at the billing page"), assistant("Sure.")]
    ops = build_extractive_ops(
        later, prior_wm=None, first_user_request="Migrate the Postgres schema"
    )
    assert ops["Session Title"] == {"op": "UPDATE", "content": "Migrate the Postgres schema"}


def test_title_kept_when_prior_has_one() -> None:
    prior = render_wm({"Session Title": "Login bug"})
    ops = build_extractive_ops(FIRST, prior_wm=prior, first_user_request="Something else")
    assert ops["Session Title"] == {"op": "KEEP"}
    assert body(update_working_memory_extractive(prior, FIRST), "Session Title") == "Login bug"


def test_make_title_is_short() -> None:
    title = make_title("Could you please help me " + " ".join(f"word{i}" for i in range(30)))
    assert title.split() == [f"word{i}" for i in range(8)]
    assert make_title("[Tue 10:00] Hello?") == "Hello"
    assert make_title("") == ""
    assert len(make_title("x" * 500)) <= 80


def test_title_of_cjk_request_is_first_sentence() -> None:
    request = "请帮我修复登录模块的问题，文件在 src/登录/auth.py。然后部署。" * 5
    assert make_title(request) == "请帮我修复登录模块的问题，文件在 src/登录/auth.py"


def test_cjk_punctuation_not_part_of_path() -> None:
    wm = update_working_memory_extractive(None, [user("文件在 src/登录/auth.py。部署失败了。")])
    assert items(wm, "Files & Context")[0].startswith("src/登录/auth.py — ")
    assert "src/登录/auth.py。 —" not in wm
    assert "部署失败了。" in items(wm, "Errors & Corrections")


def test_ops_shapes() -> None:
    ops = build_extractive_ops(FIRST, prior_wm=None, first_user_request=None)
    assert list(ops) == WM_SEVEN_SECTIONS
    assert ops["Current State"]["op"] == "UPDATE"
    for name in WM_SEVEN_SECTIONS[2:]:
        assert ops[name]["op"] == "APPEND"
        assert all(isinstance(item, str) and item for item in ops[name]["items"])


def test_empty_archive_keeps_prior() -> None:
    prior = update_working_memory_extractive(None, FIRST)
    ops = build_extractive_ops([], prior_wm=prior, first_user_request=None)
    assert all(op == {"op": "KEEP"} for op in ops.values())
    assert update_working_memory_extractive(prior, []) == prior
    assert headers(update_working_memory_extractive(None, [])) == SEVEN


def test_non_dict_messages_ignored() -> None:
    wm = update_working_memory_extractive(None, ["junk", None, user("check docs/readme.md")])  # type: ignore[list-item]
    assert "docs/readme.md" in body(wm, "Files & Context")


def test_acknowledgements_are_not_goals() -> None:
    wm = update_working_memory_extractive(
        None, [user("Deploy the api"), user("ok"), user("thanks!")]
    )
    assert items(wm, "Task & Goals") == ["Deploy the api"]


def test_no_duplicates_against_prior_or_within_batch() -> None:
    prior = update_working_memory_extractive(None, FIRST)
    again = update_working_memory_extractive(prior, FIRST + FIRST)
    for name in WM_SEVEN_SECTIONS[2:]:
        assert items(again, name) == items(prior, name), name


def test_path_text_appears_verbatim_once() -> None:
    messages = [
        user("Edit `web/components/App.tsx` and web/components/App.tsx again."),
        user("Is https://example.com/a/b.png? the logo"),
        assistant("", ("c1", "edit", {"path": "web/components/App.tsx"})),
    ]
    files = items(update_working_memory_extractive(None, messages), "Files & Context")
    assert sum(item.startswith("web/components/App.tsx") for item in files) == 1
    assert files[0].startswith("web/components/App.tsx — Edit `web/components/App.tsx`")
    assert files[1].startswith("https://example.com/a/b.png — ")  # "?" is not part of it


def test_errors_and_corrections_sources() -> None:
    messages = [
        user("That is wrong, the port is 8080 not 3000."),
        assistant("", ("c1", "exec", {"cmd": "make"})),
        tool_result("c1", "exec", "building...\nmake: *** [all] Error 2", True),
        assistant("部署失败了，我再试一次。"),
        tool_result("c2", "exec", "ok\nFAILED tests/test_api.py::test_login"),
    ]
    errors = items(update_working_memory_extractive(None, messages), "Errors & Corrections")
    assert errors[0] == "exec error: make: *** [all] Error 2"
    assert "That is wrong, the port is 8080 not 3000." in errors
    assert "部署失败了，" in "".join(errors)
    assert "FAILED tests/test_api.py::test_login" in errors


def test_open_issues_answered_questions_not_listed() -> None:
    messages = [user("Why does the build fail?"), assistant("Because the cache was stale.")]
    assert items(update_working_memory_extractive(None, messages), "Open Issues") == []


def test_open_issues_assistant_question_awaiting_user() -> None:
    messages = [user("Refactor the parser"), assistant("Done. Should I also update the docs?")]
    issues = items(update_working_memory_extractive(None, messages), "Open Issues")
    assert issues == ["Awaiting user: Should I also update the docs?"]


def test_open_issues_only_from_latest_messages() -> None:
    old_todo = [assistant("TODO: ancient task"), *[user(f"step {i}") for i in range(30)]]
    issues = items(update_working_memory_extractive(None, old_todo), "Open Issues")
    assert not any("ancient task" in issue for issue in issues)


def test_bullets_bounded_and_counts_capped() -> None:
    long = "word " * 500
    messages: list[Message] = []
    for i in range(60):
        messages.append(
            user(
                f"Request {i}: {long} see pkg_{i}/mod_{i}.py on 2024-01-{i % 28 + 1:02d}. Done {i}?"
            )
        )
        messages.append(tool_result(f"c{i}", "exec", f"fatal error {i}: {long}", True))
    wm = update_working_memory_extractive(None, messages)
    for name, cap in SECTION_CAPS.items():
        section_items = items(wm, name)
        assert len(section_items) == cap, name
        assert all(len(item) <= BULLET_MAX_CHARS for item in section_items), name


def test_legacy_prior_starts_fresh_document() -> None:
    legacy = "# Session Summary\n\n**Overview**: 3 turns, 5 messages"
    wm = update_working_memory_extractive(legacy, FIRST)
    assert headers(wm) == SEVEN
    assert "Overview" not in wm
    assert body(wm, "Session Title") == "fix the login bug in src/auth/login.py"


def test_deterministic() -> None:
    messages = archive(3) + FIRST
    first = update_working_memory_extractive(None, copy.deepcopy(messages), "Fix things")
    second = update_working_memory_extractive(None, copy.deepcopy(messages), "Fix things")
    assert first == second
    assert update_working_memory_extractive(first, messages) == update_working_memory_extractive(
        first, messages
    )


def archive(i: int) -> list[Message]:
    """One archive that mentions facts of its own."""
    return [
        user(f"Please wire feature {i} into svc_{i}/handler_{i}.py before Friday"),
        assistant(
            f"We decided to use queue q{i} because it keeps ordering. It took {i + 1} hours.",
            (f"c{i}", "exec", {"cmd": f"pytest svc_{i}"}),
        ),
        tool_result(f"c{i}", "exec", f"ImportError: cannot import name thing_{i}", True),
        assistant(f"TODO: benchmark queue q{i} under load. Should I also migrate job_{i}?"),
    ]


def test_first_archive_survives_twenty_archives() -> None:
    wm: str | None = None
    for i in range(20):
        wm = update_working_memory_extractive(wm, archive(i), first_user_request="Wire features")
        assert headers(wm) == SEVEN
    assert wm is not None
    assert "svc_0/handler_0.py" in body(wm, "Files & Context")
    assert "ImportError: cannot import name thing_0" in body(wm, "Errors & Corrections")
    assert "TODO: benchmark queue q0 under load." in body(wm, "Open Issues")
    assert "Should I also migrate job_0?" in body(wm, "Open Issues")
    assert "svc_19/handler_19.py" in body(wm, "Files & Context")
    assert body(wm, "Session Title") == "Wire features"
    assert estimate_text_tokens(wm) <= WM_TOKEN_BUDGET


def test_key_facts_growth_bounded_by_guard() -> None:
    wm: str | None = None
    for i in range(40):
        wm = update_working_memory_extractive(wm, archive(i))
    assert wm is not None
    facts = items(wm, "Key Facts & Decisions")
    assert facts[-1] == WM_CONSOLIDATION_SENTINEL
    assert len(facts) <= 50 + 5 + 1  # emergency bound + one capped round + the sentinel
    assert "We decided to use queue q0 because it keeps ordering." in facts
    later = update_working_memory_extractive(wm, archive(99))
    assert items(later, "Key Facts & Decisions") == facts
    assert "svc_99/handler_99.py" in body(later, "Files & Context")


def test_budget_trims_free_sections_only() -> None:
    goals = "\n".join(f"- goal {i}: " + "g" * 300 for i in range(150))
    guarded = {
        "Key Facts & Decisions": "\n".join(f"- fact {i} on 2024-01-01" for i in range(20)),
        "Files & Context": "\n".join(f"- src/file_{i}.py" for i in range(40)),
        "Errors & Corrections": "\n".join(f"- error {i}" for i in range(40)),
        "Open Issues": "\n".join(f"- issue {i}" for i in range(20)),
    }
    prior = render_wm({"Session Title": "Big", "Task & Goals": goals, **guarded})
    assert estimate_text_tokens(prior) > WM_TOKEN_BUDGET
    wm = update_working_memory_extractive(prior, archive(1))
    assert estimate_text_tokens(wm) <= WM_TOKEN_BUDGET
    for name, text in guarded.items():
        assert body(wm, name).startswith(text), name
    goal_items = items(wm, "Task & Goals")
    assert goal_items[-1] == "Please wire feature 1 into svc_1/handler_1.py before Friday"
    assert "goal 149: " in body(wm, "Task & Goals") and "goal 0: " not in body(wm, "Task & Goals")


def test_budget_drops_new_appends_before_old_content() -> None:
    errors = "\n".join(
        f"- error {i}: " + "e" * 950 for i in range(49)
    )  # append-only, ~11.9k tokens
    prior = render_wm({"Session Title": "Full", "Errors & Corrections": errors})
    assert WM_TOKEN_BUDGET - 200 < estimate_text_tokens(prior) <= WM_TOKEN_BUDGET
    wm = update_working_memory_extractive(prior, archive(2) + archive(3))
    assert estimate_text_tokens(wm) <= WM_TOKEN_BUDGET
    assert body(wm, "Errors & Corrections").startswith(errors)
    assert headers(wm) == SEVEN
    assert body(wm, "Session Title") == "Full"


def test_large_archive_is_fast_and_bounded() -> None:
    messages: list[Message] = []
    for i in range(125):
        messages.extend(archive(i))
        messages[-2]["content"][0]["text"] += "\n" + "log line with /var/tmp/x.json\n" * 200
    assert len(messages) == 500
    best = min(_timed(messages) for _ in range(3))
    assert best < 0.2
    wm = update_working_memory_extractive(None, messages)
    assert estimate_text_tokens(wm) <= WM_TOKEN_BUDGET
    assert headers(wm) == SEVEN


def _timed(messages: list[Message]) -> float:
    # CPU time: a loaded test machine must not make this flaky.
    start = time.process_time()
    update_working_memory_extractive(None, messages)
    return time.process_time() - start
