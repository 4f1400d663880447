"""The scripted conversation with the real OpenClaw host, and what it left behind.

One run drives one session through the host: a first turn with `openclaw agent --local`, then
the gateway for everything else (plain turns, a real tool call, recall of the first turn's fact,
an overflow compaction, a manual `openclaw sessions compact`, the model expanding an archive and
searching the archives with a question in other words, a recalled memory, and one turn while the
service is stopped). Nothing is asserted here: the run records what the host printed, what the
model received, what the plugin logged and what the service stored, and `test_openclaw_host.py`
checks it.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.host.harness import CliResult, Host, RecordingProxy, Service, hook_timings, pack_plugin
from tests.host.install import NEWEST, commits_turns, ensure_installed, openclaw_entry
from tests.host.stub_model import Exchange, StubModel

SESSION_KEY = "agent:main:host-test"
NOTES = "The secret launch code is PELICAN-42. Ship v2 on Friday.\n"
MEMORY = "The user's favourite fruit is the mangosteen."
# Said in turn 5; asked for in other words (no word of the question but stop words is in it).
PASTIME = "After a long shift I relax with pottery, it clears my head."
PASTIME_QUESTION = "How do I unwind once work is over?"
# Asked in turn "recall", with the words of turn 5 (the model is given no search to run).
PASTIME_RECALL_QUESTION = "What did I tell you I do to relax after a long shift?"
UUID = re.compile(r"sessionId=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


@dataclass
class Turn:
    name: str
    prompt: str
    local: bool
    result: CliResult
    exchanges: list[Exchange]
    service_up: bool = True
    requests: list[dict[str, Any]] = field(default_factory=list)  # what the plugin sent meanwhile

    @property
    def ok(self) -> bool:
        return self.result.returncode == 0

    @property
    def run_ms(self) -> float | None:
        """The host's own duration of the agent run (`meta.durationMs` of `openclaw agent --json`)."""
        try:
            answer = self.result.json()
        except ValueError:
            return None
        for holder in (answer, answer.get("result") if isinstance(answer, dict) else None):
            meta = holder.get("meta") if isinstance(holder, dict) else None
            if isinstance(meta, dict) and isinstance(meta.get("durationMs"), int | float):
                return float(meta["durationMs"])
        return None

    def describe(self) -> str:
        tail = (self.result.stdout[-1500:] + "\n" + self.result.stderr[-1500:]).strip()
        return f"turn {self.name} rc={self.result.returncode} ({self.result.seconds:.1f} s)\n{tail}"


@dataclass
class Conversation:
    root: Path
    service: Service
    proxy: RecordingProxy
    host: Host
    stub: StubModel
    release: str = NEWEST
    turns: list[Turn] = field(default_factory=list)
    session_id: str | None = None
    gateway_start_s: float = 0.0
    manual_compact: CliResult | None = None
    plugin_install: CliResult | None = None
    archives_before_manual: list[dict[str, Any]] = field(default_factory=list)
    archives_after_manual: list[dict[str, Any]] = field(default_factory=list)
    memory_answer: dict[str, Any] = field(default_factory=dict)
    final_commit: dict[str, Any] = field(default_factory=dict)
    archives: list[dict[str, Any]] = field(default_factory=list)
    hook_lines: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)  # what the plugin sent the service

    def turn(self, name: str) -> Turn:
        return next(t for t in self.turns if t.name == name)

    @property
    def stored_messages(self) -> list[dict[str, Any]]:
        """Every message the service holds for the session, in order (all archived at the end)."""
        rows = [row for archive in self.archives for row in archive.get("messages", [])]
        return [row["message"] for row in sorted(rows, key=lambda r: r["seq"])]


def _find_session_id(conv: Conversation, result: CliResult) -> str | None:
    def walk(value: Any) -> str | None:
        if isinstance(value, dict):
            sid = value.get("sessionId")
            if isinstance(sid, str) and sid:
                return sid
            for v in value.values():
                if (found := walk(v)) is not None:
                    return found
        elif isinstance(value, list):
            for v in value:
                if (found := walk(v)) is not None:
                    return found
        return None

    try:
        if (sid := walk(result.json())) is not None:
            return sid
    except ValueError:
        pass
    for exchange in conv.stub.exchanges:
        if m := UUID.search(json.dumps(exchange.body.get("messages", []))):
            return m.group(1)
    return None


def _archives(conv: Conversation) -> list[dict[str, Any]]:
    if not conv.session_id:
        return []
    response = conv.service.get(f"/sessions/{conv.session_id}")
    return list(response.json().get("archives", [])) if response.status_code == 200 else []


def _wait_for_archives(conv: Conversation, timeout_s: float = 120.0) -> None:
    """Until Phase 2 has finished every archive of the session (search facts and vectors)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        archives = _archives(conv)
        if archives and all(a["status"] in ("completed", "failed") for a in archives):
            return
        time.sleep(0.5)
    raise TimeoutError(f"archives not through Phase 2 after {timeout_s:g} s")


def turn_path(release: str) -> str:
    """The endpoint a turn of this release reaches the service through."""
    return "/commit-turn" if commits_turns(release) else "/after-turn"


def run_conversation(root: Path, release: str = NEWEST) -> Conversation:
    node = ensure_installed(release)
    service = Service(root / "service")
    service.workdir.mkdir(parents=True, exist_ok=True)
    stub = StubModel()
    model_url = stub.start()
    service.start()
    proxy = RecordingProxy(service.port)
    proxy.start()
    host = Host(
        node=node,
        openclaw=openclaw_entry(release),
        root=root / "openclaw",
        model_url=model_url,
        service_url=proxy.url,
    )
    notes = host.workspace / "notes.md"
    notes.write_text(NOTES)
    conv = Conversation(
        root=root, service=service, proxy=proxy, host=host, stub=stub, release=release
    )

    def turn(name: str, prompt: str, *, local: bool = False) -> Turn:
        before, sent_before = stub.count, len(proxy.snapshot())
        result = host.agent_turn(SESSION_KEY, prompt, local=local, timeout=240 if local else 120)
        t = Turn(
            name,
            prompt,
            local,
            result,
            stub.since(before),
            service_up=service.proc is not None,
            requests=proxy.snapshot()[sent_before:],
        )
        conv.turns.append(t)
        if conv.session_id is None and t.ok:
            conv.session_id = _find_session_id(conv, result)
        return t

    try:
        # The plugin as a user installs it: its tarball, `openclaw plugins install <tarball>`.
        newest = ensure_installed(NEWEST)
        typescript = newest.parents[2] / "typescript" / "bin" / "tsc"
        conv.plugin_install = host.install_plugin(
            pack_plugin(newest, typescript, root / "plugin"), release
        )
        # 1. The embedded runner without the gateway (a whole host process for one turn).
        turn("t1", "Hello, my name is Ada. Remember the word ZEBRA.", local=True)
        conv.gateway_start_s = host.start_gateway()
        # 2. A real tool call: the host runs `read` on a workspace file.
        turn("t2", f"Please READFILE {notes} and tell me the launch code.")
        # 3. The model's reply ends in a lone UTF-16 surrogate (cut inside an emoji).
        turn("t3", "PLAIN-3 CUT-EMOJI: what is two plus two?")
        # 4. The service stores turn 4 but its answer is lost: the host keeps the turn in its
        # outbox and commits it again (same advancementKey) before turn 5.
        proxy.drop_next_response(turn_path(release))
        turn("t4", "PLAIN-4: tell me a short joke about databases.")
        turn("t5", f"PLAIN-5: {PASTIME} Any plans for the weekend?")
        # 6. The fact of turn 1 must reach the model through the assembled history.
        turn("t6", "RECALL-WORD: which word did I ask you to remember in my first message?")
        # 7. The provider refuses the prompt once ("maximum context length"): overflow compaction.
        turn("t7", "OVERFLOW-ONCE-t7: summarise everything we said so far.")
        turn("t8", "PLAIN-8: thanks, what's next after the summary?")
        turn("t9", "PLAIN-9: let us also plan the v3 release notes.")
        # Manual compaction through the gateway.
        conv.archives_before_manual = _archives(conv)
        conv.manual_compact = host.cli(["sessions", "compact", SESSION_KEY, "--json"], timeout=240)
        conv.archives_after_manual = _archives(conv)
        # 10. The model reads an archive back with archive_expand.
        turn("t10", "EXPAND-ARCHIVE: what exactly did the notes file say?")
        # The model searches the archives with a question in other words than turn 5's, once
        # Phase 2 has indexed them.
        _wait_for_archives(conv)
        turn("search", f"SEARCH-ARCHIVE: {PASTIME_QUESTION}")
        # The archived fact of turn 5, asked about without a search: archive recall brings it.
        turn("recall", f"PLAIN-RECALL: {PASTIME_RECALL_QUESTION}")
        # 11. A stored memory that matches the prompt is recalled into the model's request.
        conv.memory_answer = service.post(
            "/memories", {"content": MEMORY, "category": "preferences"}
        ).json()
        turn("t11", "MEMORY-CHECK: which fruit is my favourite?")
        # 12. The service is down for one turn; 13. it is back and the host's outbox retries.
        proxy.stop()
        service.stop()
        turn("t12", "OFFLINE-12: note that the backup code is OTTER-7.")
        service.start()
        proxy.start()
        turn("t13", "PLAIN-13: the service is back, anything pending?")
        # Archive everything left so every stored message can be read back in order.
        if conv.session_id:
            conv.final_commit = service.post(
                f"/sessions/{conv.session_id}/commit",
                {"keepRecentCount": 0, "wait": True, "timeoutMs": 60000},
            ).json()
            for summary in _archives(conv):
                archive = service.get(
                    f"/archives/{summary['archiveId']}", params={"sessionId": conv.session_id}
                ).json()
                conv.archives.append(archive)
    except Exception as error:  # recorded, so every check still reports on what did happen
        conv.errors.append(f"{type(error).__name__}: {error}")
    finally:
        host.stop_gateway()
        proxy.stop()
        conv.requests = proxy.snapshot()
        conv.hook_lines = host.plugin_log_lines()
        conv.report = latency_report(conv)
        (root / "host-latency.json").write_text(json.dumps(conv.report, indent=2))
        stub.stop()
        # What each side saw, for whoever reads a failure.
        (root / "model-requests.json").write_text(
            json.dumps(
                [
                    {
                        "turn": t.name,
                        "n": e.n,
                        "kind": e.kind,
                        "prompt": e.prompt,
                        "text": e.text,
                        "tool_call": e.tool_call,
                        "messages": e.messages,
                    }
                    for t in conv.turns
                    for e in t.exchanges
                ],
                indent=1,
            )
        )
        (root / "service-requests.json").write_text(
            json.dumps(
                [
                    {
                        **{
                            k: r[k]
                            for k in ("method", "path", "status", "ms", "answer_lost", "body")
                        },
                        "answer": (
                            r["answer"].get("diagnostics")
                            if r["path"] == "/assemble" and isinstance(r["answer"], dict)
                            else r["answer"]
                        ),
                    }
                    for r in conv.requests
                ],
                indent=1,
            )
        )
        (root / "stored-messages.json").write_text(json.dumps(conv.stored_messages, indent=1))
    return conv


def _stats(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]
    return {
        "n": len(ordered),
        "median": round(statistics.median(ordered), 1),
        "p95": round(p95, 1),
        "max": round(ordered[-1], 1),
    }


def latency_report(conv: Conversation) -> dict[str, Any]:
    """Hook latencies measured inside the plugin (host call to return) and turn times."""
    by_hook: dict[str, list[float]] = {}
    for hook, ms, outcome in hook_timings(conv.hook_lines):
        if outcome == "ok":
            by_hook.setdefault(hook, []).append(ms)
    by_endpoint: dict[str, list[float]] = {}
    for record in conv.requests:
        if record["status"] == 200:
            path = re.sub(r"/archive_\d+", "/{archiveId}", record["path"].split("?")[0])
            by_endpoint.setdefault(f"{record['method']} {path}", []).append(record["ms"])
    gateway_turns = [t.result.seconds for t in conv.turns if not t.local and t.ok and t.service_up]
    local_turns = [t.result.seconds for t in conv.turns if t.local and t.ok]
    run_s = [
        t.run_ms / 1000
        for t in conv.turns
        if not t.local and t.ok and t.service_up and t.run_ms is not None
    ]
    model_calls = [len(t.exchanges) for t in conv.turns]
    return {
        "hooks_ms": {hook: _stats(values) for hook, values in sorted(by_hook.items())},
        "service_ms": {path: _stats(values) for path, values in sorted(by_endpoint.items())},
        "turn_s": {
            "gateway": _stats(gateway_turns) if gateway_turns else {},
            "local": _stats(local_turns) if local_turns else {},
            "gateway_run": _stats(run_s) if run_s else {},
            "gateway_start": round(conv.gateway_start_s, 1),
        },
        "turns": [
            {
                "name": t.name,
                "seconds": round(t.result.seconds, 2),
                "run_ms": t.run_ms,
                "rc": t.result.returncode,
                "local": t.local,
                "model_calls": n,
            }
            for t, n in zip(conv.turns, model_calls, strict=True)
        ],
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def format_report(report: dict[str, Any]) -> str:
    lines = ["OpenClaw host: hook latency seen by the plugin (ms) and turn time (s)"]
    for hook, s in report.get("hooks_ms", {}).items():
        lines.append(
            f"  {hook:<28} n={s['n']:<3} median={s['median']:<7} p95={s['p95']:<7} max={s['max']}"
        )
    lines.append("service time per endpoint (ms), measured at a recording proxy in front of it")
    for path, s in report.get("service_ms", {}).items():
        lines.append(
            f"  {path:<28} n={s['n']:<3} median={s['median']:<7} p95={s['p95']:<7} max={s['max']}"
        )
    turns = report.get("turn_s", {})
    labels = {
        "gateway": "turn, CLI via gateway",
        "gateway_run": "turn, host run time",
        "local": "turn, CLI --local",
    }
    for kind, label in labels.items():
        if s := turns.get(kind):
            lines.append(
                f"  {label:<28} n={s['n']:<3} median={s['median']:<7} p95={s['p95']:<7} max={s['max']}"
            )
    lines.append(f"  {'gateway start':<28} {turns.get('gateway_start')} s")
    return "\n".join(lines)
