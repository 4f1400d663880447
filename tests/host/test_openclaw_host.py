"""The plugin in `clients/openclaw` driven by the real OpenClaw host, end to end, once per pinned
release selected (conftest.py: the newest by default, `--openclaw all` for every one).

The host, a Node 24 runtime and the service run on loopback; the model is a scripted streaming
stub (`stub_model.py`); the plugin is configured with `baseUrl` and a tiny
`assembleTailMessages` (2), so that both ways of sending a long history run. The conversation runs once
per module (`conversation.py`); each test checks one behaviour of what it left behind: what the
service stored, what the model received, what the plugin sent the service.

Run alone: `.venv/bin/python -m pytest tests/host -m host -s` (the first run installs the host
into `.cache/openclaw-host/`, about half a minute).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.host.conftest import SUMMARIES
from tests.host.conversation import (
    MEMORY,
    NOTES,
    PASTIME,
    PASTIME_QUESTION,
    Conversation,
    format_report,
    run_conversation,
    turn_path,
)
from tests.host.harness import hook_timings
from tests.host.install import NEWEST, commits_turns
from tests.host.prefix import prefix_reuse
from tests.host.stub_model import CUT_EMOJI, HOST_TIME_PREFIX, Exchange, text_of

pytestmark = [pytest.mark.host, pytest.mark.slow]

INTERNAL_CONTEXT = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT"
SUMMARY_MARK = "[Session History Summary]"


@pytest.fixture(scope="module")
def conv(tmp_path_factory: pytest.TempPathFactory, release: str) -> Iterator[Conversation]:
    root = tmp_path_factory.mktemp(f"openclaw-host-{release}")
    conversation = run_conversation(root, release)
    # shown at the end of the pytest run (conftest.py), captured output or not
    SUMMARIES.append(
        f"OpenClaw {release}\n{format_report(conversation.report)}\n"
        f"  (full figures: {root / 'host-latency.json'})"
    )
    try:
        yield conversation
    finally:
        conversation.service.stop()


# -- helpers ---------------------------------------------------------------------------------------


def agent_text(message: dict[str, Any]) -> str:
    """Text of a stored (OpenClaw AgentMessage) message."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )


def is_bookkeeping(message: dict[str, Any]) -> bool:
    """Host entries the service does not store: role custom, excludeFromContext, and a message
    with no content (2026.8 commits its failed overflow attempt as an empty assistant message;
    docs/lifecycle.md, Capture: a message left with no content is dropped)."""
    return (
        message.get("role") == "custom"
        or message.get("excludeFromContext") is True
        or message.get("content") in ([], "", None)
    )


def stored_signature(message: dict[str, Any]) -> tuple[str, str]:
    role = message.get("role", "?")
    if role == "assistant":
        calls = [
            b
            for b in message.get("content") or []
            if isinstance(b, dict) and b.get("type") == "toolCall"
        ]
        if calls:
            return "call", ";".join(
                f"{c.get('name')}:{json.dumps(c.get('arguments'), sort_keys=True)}" for c in calls
            )
        return "assistant", agent_text(message).strip()
    if role == "toolResult":
        return "result", str(message.get("toolName"))
    if role == "custom":  # host-internal transcript entries (e.g. a nested tool call's record)
        return "custom", str(message.get("customType"))
    return role, HOST_TIME_PREFIX.sub("", agent_text(message).strip(), count=1)


CONVERSATION_ROLES = ("user", "assistant", "toolResult")


def well_formed(text: str) -> str:
    """The text with each lone UTF-16 surrogate made U+FFFD, as the plugin sends it."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def expected_turn(conv: Conversation, name: str) -> list[tuple[str, str]]:
    """What one turn must leave in the service: the user's message, then every model answer
    (a tool call followed by its result, or text), from what the stub answered."""
    turn = conv.turn(name)
    out: list[tuple[str, str]] = [("user", turn.prompt)]
    for ex in turn.exchanges:
        if ex.kind == "tool_call" and ex.tool_call:
            out.append(
                (
                    "call",
                    f"{ex.tool_call['name']}:{json.dumps(ex.tool_call['arguments'], sort_keys=True)}",
                )
            )
            out.append(("result", ex.tool_call["name"]))
        elif ex.kind == "text":
            out.append(("assistant", well_formed(ex.text.strip())))
    return out


def matches(expected: tuple[str, str], stored: tuple[str, str]) -> bool:
    if expected[0] != stored[0]:
        return False
    if expected[0] == "user":  # the host keeps the user's words; it may wrap them
        return expected[1] in stored[1]
    return expected[1] == stored[1]


def request_units(ex: Exchange) -> list[tuple[str, str]]:
    """The stored-message content of one model request, one unit per text block, tool call and
    tool result (the system prompt and the host's per-request internal context left out)."""
    units: list[tuple[str, str]] = []
    for message in ex.messages:
        role = message.get("role")
        if role == "system":
            continue
        if role == "tool":
            units.append(("result", text_of(message.get("content")).strip()))
            continue
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [text_of([p]) for p in content or []]
        for part in parts:
            text = HOST_TIME_PREFIX.sub("", (part or "").strip(), count=1).strip()
            if text and not text.startswith(INTERNAL_CONTEXT):
                units.append((str(role), text))
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            args = fn.get("arguments")
            with contextlib.suppress(TypeError, ValueError):
                args = json.dumps(json.loads(args), sort_keys=True)
            units.append(("call", f"{fn.get('name')}:{args}"))
    return units


def history_texts(ex: Exchange) -> list[str]:
    """Texts of the request's messages other than the current prompt and the host's context."""
    out = []
    for message in ex.messages:
        if message.get("role") == "system":
            continue
        text = text_of(message.get("content"))
        if ex.prompt and ex.prompt in text:
            continue
        out.append(text)
    return out


def unwrap_tool_call_result(text: str) -> str:
    """The text a tool returned; through the host's `tool_call` it arrives wrapped in JSON
    (`{"tool": {...}, "result": {"content": [{"type": "text", "text": ...}]}}`)."""
    try:
        wrapped = json.loads(text)
    except ValueError:
        return text
    content = wrapped.get("result", {}).get("content") if isinstance(wrapped, dict) else None
    return text_of(content) if isinstance(content, list) else text


def walk(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")


# -- the host ran the conversation with the plugin as its engine ------------------------------------


def test_every_turn_succeeds_through_the_host(conv: Conversation) -> None:
    assert not conv.errors, conv.errors
    failed = [t.describe() for t in conv.turns if not t.ok]
    assert not failed, "\n\n".join(failed)
    numbered = [f"t{i}" for i in range(1, 14)]
    assert [t.name for t in conv.turns] == [*numbered[:10], "search", "recall", *numbered[10:]]
    assert conv.turn("t1").local and conv.session_id


def test_the_plugin_is_installed_from_its_tarball(conv: Conversation) -> None:
    """`openclaw plugins install <tarball>` (harness.py) put the packed plugin, compiled, into the
    host's extensions; it reports the version of its package.json with every request."""
    assert conv.plugin_install is not None and conv.plugin_install.returncode == 0
    installed = conv.host.state / "extensions" / "context-engine"
    assert (installed / "dist" / "index.js").is_file()
    assert "load" not in json.loads(conv.host.config_path.read_text())["plugins"]
    version = json.loads((installed / "package.json").read_text())["version"]
    sent = {r["headers"].get("x-plugin-version") for r in conv.requests}
    hosts = {r["headers"].get("x-host-version") for r in conv.requests}
    assert sent == {version} and hosts == {f"openclaw/{conv.release}"}


def test_plugin_is_the_hosts_context_engine(conv: Conversation) -> None:
    logs = "".join(
        p.read_text(errors="replace") for p in conv.host.root.glob("*.log")
    ) + conv.host.gateway_log_path.read_text(errors="replace")
    assert "degraded to" not in logs, "the host ran turns without the engine"
    assert "quarantin" not in logs.lower()
    hooks = Counter(hook for hook, _, _ in hook_timings(conv.hook_lines))
    up_turns = sum(1 for t in conv.turns if t.service_up)
    assert hooks["assemble.pre_prompt"] >= len(conv.turns)
    assert hooks["assemble.tool_loop"] >= sum(
        len([e for e in t.exchanges if e.kind != "overflow"]) for t in conv.turns
    )
    # From 2026.8.1 a turn is committed with commitTurn (and the tool loop's afterTurn calls store
    # nothing); before it, with afterTurn.
    turn_hook = "commitTurn" if commits_turns(conv.release) else "afterTurn"
    assert hooks[turn_hook] >= up_turns
    assert hooks["compact"] >= 2  # the overflow and the manual compaction


# -- what reached the service ----------------------------------------------------------------------


def test_every_message_is_stored_once_and_in_order(conv: Conversation) -> None:
    assert conv.final_commit.get("status") in ("accepted", "skipped"), conv.final_commit
    assert all(a.get("status") == "completed" for a in conv.archives), [
        a.get("status") for a in conv.archives
    ]
    expected = [sig for t in conv.turns for sig in expected_turn(conv, t.name)]
    stored = [
        stored_signature(m) for m in conv.stored_messages if m.get("role") in CONVERSATION_ROLES
    ]
    mismatch = next(
        (i for i, (e, s) in enumerate(zip(expected, stored, strict=False)) if not matches(e, s)),
        None,
    )
    if mismatch is not None or len(expected) != len(stored):
        at = mismatch if mismatch is not None else min(len(expected), len(stored))
        lo = max(0, at - 3)
        pytest.fail(
            f"stored messages differ from the conversation at #{at} "
            f"(expected {len(expected)}, stored {len(stored)})\n"
            f"expected[{lo}:{at + 4}]: {json.dumps(expected[lo : at + 4], indent=1)[:3000]}\n"
            f"stored[{lo}:{at + 4}]: {json.dumps(stored[lo : at + 4], indent=1)[:3000]}"
        )


def test_service_stores_exactly_what_the_host_committed(conv: Conversation) -> None:
    """Each accepted turn once (a retried key stores nothing); host bookkeeping entries that never
    reach the model (role custom, excludeFromContext) are not stored. A release before commitTurn
    sends whole snapshots to /after-turn: every stored message is one of theirs."""
    if not commits_turns(conv.release):
        assert not [r for r in conv.requests if r["path"] == "/commit-turn"]
        sent = {
            stored_signature(m)
            for r in conv.requests
            if r["path"] in ("/after-turn", "/assemble") and r["status"] == 200
            for m in r["body"]["messages"]
        }
        assert [s for s in map(stored_signature, conv.stored_messages) if s not in sent] == []
        return
    committed: list[tuple[str, str]] = []
    keys: list[str] = []
    for record in conv.requests:
        if record["path"] == "/commit-turn" and record["status"] == 200:
            key = record["body"]["advancementKey"]
            if key not in keys:
                keys.append(key)
                committed.extend(
                    stored_signature(m) for m in record["body"]["messages"] if not is_bookkeeping(m)
                )
    # (the newest release commits host bookkeeping entries with the turn; 2026.8 none)
    assert conv.release != NEWEST or any(
        is_bookkeeping(m)
        for r in conv.requests
        if r["path"] == "/commit-turn"
        for m in r["body"]["messages"]
    )
    assert len(keys) == len([t for t in conv.turns if t.ok]), keys
    assert [stored_signature(m) for m in conv.stored_messages] == committed


def test_a_commit_whose_answer_was_lost_is_retried_and_stored_once(conv: Conversation) -> None:
    lost = [r for r in conv.turn("t4").requests if r["path"] == turn_path(conv.release)]
    assert lost[0]["answer_lost"] and lost[0]["status"] == 200
    users = [stored_signature(m)[1] for m in conv.stored_messages if m.get("role") == "user"]
    assert sum(conv.turn("t4").prompt in u for u in users) == 1
    if not commits_turns(conv.release):
        # afterTurn has no outbox: the turn's next afterTurn (its snapshot holds the same
        # messages) or the next pre-prompt assemble stores what the lost answer left out, once.
        assert all(r["status"] == 200 for r in lost) and len(lost) >= 2
        return
    assert len(lost) == 1
    assert (
        lost[0]["answer"]["status"] == "committed"
    )  # the service stored it; the plugin never heard
    retried = [r for r in conv.turn("t5").requests if r["path"] == "/commit-turn"]
    assert len(retried) == 2, [r["body"]["advancementKey"] for r in retried]
    assert retried[0]["body"]["advancementKey"] == lost[0]["body"]["advancementKey"]
    assert retried[0]["body"]["messages"] == lost[0]["body"]["messages"]
    assert retried[0]["answer"]["status"] == "duplicate" and retried[0]["answer"]["ingested"] == 0
    assert retried[1]["answer"]["status"] == "committed"


def test_a_reply_cut_inside_an_emoji_is_stored_and_later_turns_assemble(
    conv: Conversation,
) -> None:
    """No UTF-8 text holds a lone UTF-16 surrogate, and the service refuses a body that carries
    one. The plugin sends it as U+FFFD, so the turn is stored rather than refused and lost, and
    the assembles of later turns, whose host history holds it, are answered from storage."""
    t3 = conv.turn("t3")
    replies = [ex.text for ex in t3.exchanges if ex.kind == "text"]
    assert replies and replies[-1].endswith(CUT_EMOJI)
    commits = [r for r in t3.requests if r["path"] == turn_path(conv.release)]
    assert commits and [r["status"] for r in commits] == [200] * len(commits)
    if commits_turns(conv.release):
        assert [r["answer"]["status"] for r in commits] == ["committed"]
    assert not [line for line in conv.hook_lines if "refused" in line]
    stored = [agent_text(m).strip() for m in conv.stored_messages if m.get("role") == "assistant"]
    assert well_formed(replies[-1].strip()) in stored
    assert well_formed(replies[-1].strip()).endswith("\ufffd")
    later = [
        r for t in conv.turns[3:] if t.service_up for r in t.requests if r["path"] == "/assemble"
    ]
    assert later and all(r["status"] == 200 for r in later), [r["status"] for r in later]
    # (a call that sent only the newest messages is asked for the whole history, then answered)
    assert all(
        r["answer"]["diagnostics"].get("mode") == "assembled"
        for r in later
        if r["body"].get("phase") == "pre_prompt"
        and r["answer"]["diagnostics"].get("reason") != "host_history_needed"
    )


def test_tool_call_and_result_are_stored_once_each(conv: Conversation) -> None:
    stored = [stored_signature(m) for m in conv.stored_messages]
    read_calls = [s for s in stored if s[0] == "call" and s[1].startswith("read:")]
    read_results = [
        m
        for m in conv.stored_messages
        if m.get("role") == "toolResult" and m.get("toolName") == "read"
    ]
    assert len(read_calls) == 1, read_calls
    assert len(read_results) == 1, read_results
    assert "PELICAN-42" in agent_text(read_results[0])


def test_turn_sent_while_the_service_was_down_is_stored_after_restart(conv: Conversation) -> None:
    t12 = conv.turn("t12")
    assert not t12.service_up and t12.ok, t12.describe()
    assert t12.requests == [], "the service was reachable during the offline turn"
    outcomes = {(hook, outcome) for hook, _, outcome in hook_timings(conv.hook_lines)}
    turn_hook = "commitTurn" if commits_turns(conv.release) else "afterTurn"
    assert (turn_hook, "error") in outcomes and (
        "assemble.pre_prompt",
        "passthrough",
    ) in outcomes
    if commits_turns(conv.release):
        # the host retried the commit from its outbox before the next turn, and the service took it
        t13_commits = [r for r in conv.turn("t13").requests if r["path"] == "/commit-turn"]
        assert [r["status"] for r in t13_commits] == [200, 200]
        assert t12.prompt in json.dumps(t13_commits[0]["body"]["messages"])
    else:
        # no outbox before commitTurn: the next pre-prompt assemble stores it from the history
        pre = [r for r in conv.turn("t13").requests if r["body"].get("phase") == "pre_prompt"]
        assert any(
            r["answer"]["diagnostics"].get("messages", {}).get("reconciled", 0) >= 2 for r in pre
        ), [r["answer"]["diagnostics"] for r in pre]
    users = [stored_signature(m)[1] for m in conv.stored_messages if m.get("role") == "user"]
    offline = [u for u in users if t12.prompt in u]
    assert len(offline) == 1, offline
    later = [u for u in users if conv.turn("t13").prompt in u]
    assert len(later) == 1 and users.index(offline[0]) < users.index(later[0])


def test_requests_to_the_service_carry_no_host_secrets_or_live_values(conv: Conversation) -> None:
    assert conv.requests, "the proxy saw no request"
    hooks = [
        r
        for r in conv.requests
        if r["path"].split("?")[0] in ("/assemble", "/commit-turn", "/after-turn", "/compact")
    ]
    assert {r["path"] for r in hooks} >= {"/assemble", turn_path(conv.release), "/compact"}
    # a host with commitTurn commits turns through it only (its tool loop's afterTurn calls store
    # nothing); an older one through afterTurn only
    other_path = "/after-turn" if commits_turns(conv.release) else "/commit-turn"
    assert not [r for r in conv.requests if r["path"] == other_path]
    for record in conv.requests:
        assert "stub-provider-secret" not in record["raw"], record["path"]
        assert "authorization" not in {k.lower() for k in record["headers"]}  # no apiKey configured
        body = record["body"]
        if not isinstance(body, dict):
            continue
        assert "runtimeContext" not in body and "config" not in body, record["path"]
        for path, _value in walk(body):
            assert not path.endswith(
                (".storePath", ".abortSignal", ".skillsSnapshot", ".sessionEntry")
            ), path
    assemble_phases = Counter(r["body"].get("phase") for r in hooks if r["path"] == "/assemble")
    assert set(assemble_phases) == {"pre_prompt", "tool_loop"}, assemble_phases
    for record in hooks:
        assert record["body"].get("sessionId") == conv.session_id, record["path"]


# -- what reached the model -----------------------------------------------------------------------


def test_no_model_request_holds_a_stored_message_twice(conv: Conversation) -> None:
    problems = []
    for t in conv.turns:
        for ex in t.exchanges:
            counts = Counter(request_units(ex))
            twice = [unit for unit, n in counts.items() if n > 1]
            summaries = sum(
                text_of(m.get("content")).count(SUMMARY_MARK)
                for m in ex.messages
                if m.get("role") != "system"
            )  # the guide in the system prompt names it
            if twice or summaries > 1:
                problems.append(
                    f"{t.name} request #{ex.n}: summaries={summaries} twice={json.dumps(twice)[:600]}"
                )
    assert not problems, "\n".join(problems)


def _assembles(conv: Conversation, phase: str) -> list[dict[str, Any]]:
    return [
        r
        for r in conv.requests
        if r["path"] == "/assemble" and r["status"] == 200 and r["body"].get("phase") == phase
    ]


def test_a_pre_prompt_tail_that_cannot_be_reconciled_is_sent_again_whole(
    conv: Conversation,
) -> None:
    """The plugin sends the newest 2 messages (harness.py): too few to show where the stored
    history ends, so the service asks for the whole history and the plugin sends it at once."""
    pre_prompt = _assembles(conv, "pre_prompt")
    tails = [r for r in pre_prompt if r["body"].get("omittedMessageCount")]
    assert tails, [len(r["body"]["messages"]) for r in pre_prompt]
    # Releases before 2026.9 replay a failed attempt that the plugin leaves out of what it sends.
    replays = 0 if conv.release == NEWEST else 1
    for record in tails:
        omitted = record["body"]["omittedMessageCount"]
        assert 2 - replays <= len(record["body"]["messages"]) <= 2
        diagnostics = record["answer"]["diagnostics"]
        assert (diagnostics["mode"], diagnostics["reason"]) == (
            "passthrough",
            "host_history_needed",
        )
        again = pre_prompt[pre_prompt.index(record) + 1]
        assert "omittedMessageCount" not in again["body"]
        assert 2 + omitted - replays <= len(again["body"]["messages"]) <= 2 + omitted
        assert again["answer"]["diagnostics"]["mode"] == "assembled"


def test_a_tool_loop_answer_for_the_newest_messages_follows_the_ones_left_out(
    conv: Conversation,
) -> None:
    loop = _assembles(conv, "tool_loop")
    recalled = [
        r
        for r in loop
        if r["body"].get("omittedMessageCount")
        and r["answer"]["diagnostics"]["mode"] == "assembled"
    ]
    if not recalled:
        # Not every release gets there: the recall of turn 11 may come with a history short enough
        # to be sent whole (older releases archive at other points). Then nothing was left out.
        assembled = [r for r in loop if r["answer"]["diagnostics"]["mode"] == "assembled"]
        assert assembled and not any(r["body"].get("omittedMessageCount") for r in assembled)
        assert conv.release != NEWEST, [
            (len(r["body"]["messages"]), r["body"].get("omittedMessageCount")) for r in loop
        ]
        return
    record = recalled[0]
    host_messages = record["body"]["omittedMessageCount"] + len(record["body"]["messages"])
    turn = next(t for t in conv.turns if record in t.requests)
    # The model call this answer was for: the turn's first request that holds an envelope (a turn
    # of several model calls asks for one before each, and archive recall answers more of them).
    exchange = next(
        (
            e
            for e in turn.exchanges
            if any("<openviking-context>" in text_of(m.get("content")) for m in e.messages)
        ),
        None,
    )
    assert exchange is not None, turn.describe()
    history = [m for m in exchange.messages if m.get("role") != "system"]
    envelope_at = next(
        i for i, m in enumerate(history) if "<openviking-context>" in text_of(m.get("content"))
    )
    # The model got the host's whole history (the messages left out, then the newest ones sent)
    # before the recalled envelope, each once; when the tool loop's history ends with the current
    # user message (a release before commitTurn, or 2026.8's "Continue…" retry after an overflow)
    # the envelope goes into that message.
    sent = record["body"]["messages"]
    ends_with_user = bool(sent) and sent[-1].get("role") == "user"
    in_flight = 1 if ends_with_user or not commits_turns(conv.release) else 0
    assert envelope_at >= host_messages - in_flight, (envelope_at, host_messages)
    assert not [u for u, n in Counter(request_units(exchange)).items() if n > 1]


def test_turn1_fact_reaches_the_model_in_turn6_through_the_history(conv: Conversation) -> None:
    exchanges = conv.turn("t6").exchanges
    assert exchanges
    assert "ZEBRA" not in conv.turn("t6").prompt
    assert all(
        any("Remember the word ZEBRA" in text for text in history_texts(ex)) for ex in exchanges
    )


def test_overflow_compaction_puts_the_summary_in_the_next_request_and_the_turn_succeeds(
    conv: Conversation,
) -> None:
    t7 = conv.turn("t7")
    assert t7.ok, t7.describe()
    kinds = [ex.kind for ex in t7.exchanges]
    assert kinds[0] == "overflow" and kinds.count("overflow") == 1, kinds
    retry = t7.exchanges[1]
    assert any(SUMMARY_MARK in text_of(m.get("content")) for m in retry.messages)
    assert t7.exchanges[-1].kind == "text"
    compacts = [r for r in conv.requests if r["path"] == "/compact"]
    assert compacts and compacts[0]["body"].get("trigger") == "overflow"


def test_manual_compaction_creates_an_archive(conv: Conversation) -> None:
    result = conv.manual_compact
    assert result is not None and result.returncode == 0, result and (result.stdout + result.stderr)
    answer = result.json()
    assert answer.get("ok") is True and answer.get("compacted") is True, answer
    before = {a["archiveId"] for a in conv.archives_before_manual}
    after = {a["archiveId"] for a in conv.archives_after_manual}
    assert len(after - before) == 1, (before, after)
    manual = [
        r for r in conv.requests if r["path"] == "/compact" and r["body"].get("trigger") == "manual"
    ]
    assert len(manual) == 1


def test_model_expands_an_archive_and_reads_its_original_text(conv: Conversation) -> None:
    t10 = conv.turn("t10")
    assert t10.ok, t10.describe()
    call = t10.exchanges[0]
    assert call.kind == "tool_call" and call.tool_call
    assert call.visible_archive_ids, "no archive id was visible to the model after compaction"
    archive_id = call.visible_archive_ids[0]
    archive = next(a for a in conv.archives if a["archiveId"] == archive_id)
    originals = [
        agent_text(row["message"])
        for row in archive["messages"]
        if row["message"].get("role") == "user"
    ]
    assert originals
    answer = t10.exchanges[1]
    results = [text_of(m.get("content")) for m in answer.messages if m.get("role") == "tool"]
    assert results, "the tool result did not reach the model"
    tool_result = unwrap_tool_call_result(results[-1])
    for original in originals:
        first_line = HOST_TIME_PREFIX.sub("", original.strip(), count=1).splitlines()[0]
        assert first_line in tool_result, (first_line, tool_result[:1500])
    expands = [r for r in conv.requests if r["path"].startswith(f"/archives/{archive_id}?")]
    assert expands and f"sessionId={conv.session_id}" in expands[0]["path"]


def test_model_finds_an_archived_turn_by_its_meaning_with_the_tools_default_mode(
    conv: Conversation,
) -> None:
    """The model asks archive_search, with no mode, a question that shares no word with the turn
    that answers it (turn 5): the plugin's default (ranked) finds it by meaning, as a message
    match of its own (not only inside an overview), and the tool result reaches the model."""
    turn = conv.turn("search")
    assert turn.ok, turn.describe()
    call = turn.exchanges[0]
    assert call.kind == "tool_call" and call.tool_call
    searches = [r for r in turn.requests if r["path"] == "/archives/search"]
    assert len(searches) == 1, [r["path"] for r in turn.requests]
    assert searches[0]["body"]["mode"] == "ranked"
    assert searches[0]["body"]["query"] == PASTIME_QUESTION
    assert searches[0]["body"]["sessionId"] == conv.session_id
    answer = turn.exchanges[1]
    results = [text_of(m.get("content")) for m in answer.messages if m.get("role") == "tool"]
    assert results, "the tool result did not reach the model"
    tool_result = unwrap_tool_call_result(results[-1])
    matches = [b for b in tool_result.split("\n\n## ") if b.startswith("Match ")]
    assert any(PASTIME.split(",")[0] in block for block in matches), tool_result[:3000]


def test_an_archived_fact_the_prompt_asks_about_reaches_the_model_without_a_search(
    conv: Conversation,
) -> None:
    """Turn 5's fact is archived; a later prompt asks about it and the model calls no tool:
    archive recall puts the archived turn, with its archive id, in the model's request."""
    turn = conv.turn("recall")
    assert turn.ok, turn.describe()
    assert all(e.kind != "tool_call" for e in turn.exchanges)
    assert not [r for r in turn.requests if r["path"] == "/archives/search"]
    recalled = [
        text_of(m.get("content"))
        for ex in turn.exchanges
        for m in ex.messages
        if "## From Earlier in This Session" in text_of(m.get("content"))
    ]
    assert recalled, "no archived turn reached the model"
    section = recalled[0][recalled[0].index("## From Earlier in This Session") :]
    line = next((ln for ln in section.splitlines() if "pottery" in ln), None)
    assert line is not None, section[:2000]
    assert re.search(r"\barchive_\d{3}\b #\d+ · user\]", line), line


def test_recalled_memory_reaches_the_model_marked_as_data(conv: Conversation) -> None:
    assert conv.memory_answer.get("action") == "ADD", conv.memory_answer
    t11 = conv.turn("t11")
    assert t11.ok, t11.describe()
    envelopes = [
        text_of(m.get("content"))
        for ex in t11.exchanges
        for m in ex.messages
        if "<openviking-context>" in text_of(m.get("content"))
    ]
    assert envelopes, "no recalled memory reached the model"
    envelope = envelopes[0]
    body = envelope[envelope.index("<openviking-context>") :]
    assert "mangosteen" in body and "</openviking-context>" in body
    assert MEMORY.split()[-1].rstrip(".") in body
    # docs/recall.md: recalled text is data, never instructions, and the injected section says so
    assert re.search(r"\bdata\b[^\n]{0,60}\binstructions?\b", body, re.IGNORECASE), body


def test_notes_file_fixture_is_what_the_read_tool_returned(conv: Conversation) -> None:
    """The tool turn ran the host's real `read` tool on the workspace file."""
    t2 = conv.turn("t2")
    results = [
        text_of(m.get("content"))
        for ex in t2.exchanges
        for m in ex.messages
        if m.get("role") == "tool"
    ]
    assert any(NOTES.strip() in r for r in results), results


def test_latency_report_is_written(conv: Conversation) -> None:
    report_path = Path(conv.root) / "host-latency.json"
    report = json.loads(report_path.read_text())
    turn_hook = "commitTurn" if commits_turns(conv.release) else "afterTurn"
    assert {"assemble.pre_prompt", "assemble.tool_loop", turn_hook} <= set(report["hooks_ms"])
    assert report["turn_s"]["gateway"]["n"] >= 8 and report["turn_s"]["local"]["n"] == 1


# -- the prompt prefix stays put ------------------------------------------------------------------


def test_between_commits_each_request_repeats_the_stored_prefix_of_the_one_before(
    conv: Conversation,
) -> None:
    """The system prompt (the Session Context Guide included, from the first turn, and through
    the outage of turn 12) and every message up to the earlier request's current user message
    are repeated unchanged by the next request, unless an archive was made between the two (or
    the host's budget made the service leave older steps out). The `--local` first turn is left
    out: that runner offers other tools than the gateway's."""
    reuse = prefix_reuse(conv)
    (Path(conv.root) / "prefix-reuse.json").write_text(json.dumps(reuse, indent=1))
    SUMMARIES.append(
        f"OpenClaw {conv.release}: prompt prefix reuse, mean share of a request repeated from the"
        f" one before: {reuse['mean_share_between_commits']:.1%} between commits"
        f" ({sum(p['window'] for p in reuse['pairs'])} windows fitted to the host's budget),"
        f" {reuse['mean_share_all']:.1%} over all {len(reuse['pairs'])} pairs"
    )
    checked = [p for p in reuse["pairs"] if not (p["commit"] or p["window"])]
    assert len(checked) >= 8, reuse["pairs"]
    # the newest release gives a budget that holds the whole history between commits
    assert conv.release != NEWEST or not any(p["window"] for p in reuse["pairs"])
    broken = [p for p in checked if p["shared"] < p["needed"]]
    if not commits_turns(conv.release):
        # 2026.7 writes its time into the summary message in some requests and not in others:
        # there the stored prefix is the same but for that time.
        broken = [p for p in broken if p["shared_but_time"] < p["needed"]]
    assert not broken, broken
    systems = [
        json.dumps([m for m in ex.messages if m.get("role") == "system"])
        for t in conv.turns
        if not t.local
        for ex in t.exchanges
    ]
    assert all("## Session Context Guide" in s for s in systems)
