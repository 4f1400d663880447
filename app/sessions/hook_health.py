"""Whether a session's OpenClaw hooks still pair up: pure rules over its hook records.

A host that upgrades under the plugin can keep calling one hook and stop calling another
(assembles but no committed turns, or turns but no assembles), or stop calling the plugin at all
while it falls back to its own engine. Each hook call updates the records' streaks here; the
flags are read from them (docs/api.md, Hook health).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

PRE_PROMPT = "assemble.pre_prompt"
TOOL_LOOP = "assemble.tool_loop"
TURN_HOOKS = frozenset({"commitTurn", "afterTurn"})
HOOKS = (PRE_PROMPT, TOOL_LOOP, "commitTurn", "afterTurn", "compact")

# Every turn starts with one pre-prompt assemble and ends with one turn hook; a compaction may
# restart the turn (the host's retry after an overflow assembles again). A second pre-prompt
# assemble with no turn hook since is a turn the host did not commit.
TURNLESS_ASSEMBLES = 2
# A host retries a failed turn before the next one, so two turn hooks in a row are normal after
# an outage (the turns of the outage assembled without the service); three are not.
ASSEMBLELESS_TURNS = 3

ASSEMBLES_WITHOUT_TURNS = "assembles_without_turns"
TURNS_WITHOUT_ASSEMBLES = "turns_without_assembles"
HOST_SILENT = "host_silent"

# What each flag means, for people (the console shows it beside the badge).
FLAG_HELP = {
    ASSEMBLES_WITHOUT_TURNS: "The host assembled a new turn before committing the last one: its "
    "turn hook (commitTurn or afterTurn) is not reaching the plugin. Turns are stored only from "
    "the histories later assembles send.",
    TURNS_WITHOUT_ASSEMBLES: "The host commits turns but stopped asking the engine to assemble "
    "them: its own context engine builds the prompts.",
    HOST_SILENT: "No hook call for longer than CE_HOOK_SILENT_AFTER_S: the session ended, or its "
    "host stopped calling the plugin (a host upgrade that fell back to its built-in engine).",
}


@dataclass(frozen=True, slots=True)
class HookRecord:
    """One hook of one session: how often and when it arrived, from which host and plugin."""

    hook: str
    calls: int
    streak: int
    first_at: datetime
    last_at: datetime
    host_version: str | None
    plugin_version: str | None


def streaks_after(hook: str, streaks: Mapping[str, int]) -> dict[str, int]:
    """Every hook's streak once ``hook`` has arrived (hooks absent from ``streaks`` count 0).

    pre-prompt assemble: its own streak grows, the turn hooks' start again; tool-loop assemble:
    the turn hooks' start again; a turn hook: its own grows, the pre-prompt's starts again;
    compact: the pre-prompt's starts again (the host assembles again after it)."""
    out = dict(streaks)
    out.setdefault(hook, 0)
    if hook == PRE_PROMPT or hook in TURN_HOOKS:
        out[hook] += 1
    restarted = TURN_HOOKS if hook in (PRE_PROMPT, TOOL_LOOP) else frozenset()
    if hook in TURN_HOOKS or hook == "compact":
        restarted = frozenset({PRE_PROMPT})
    return {name: 0 if name in restarted else streak for name, streak in out.items()}


def hook_flags(records: Iterable[HookRecord], now: datetime, silent_after_s: float) -> list[str]:
    """What is wrong with the session's hooks, in a stable order (empty when nothing is)."""
    by_hook = {r.hook: r for r in records}
    flags: list[str] = []
    pre_prompt = by_hook.get(PRE_PROMPT)
    if pre_prompt is not None and pre_prompt.streak >= TURNLESS_ASSEMBLES:
        flags.append(ASSEMBLES_WITHOUT_TURNS)
    if any(by_hook[h].streak >= ASSEMBLELESS_TURNS for h in TURN_HOOKS if h in by_hook):
        flags.append(TURNS_WITHOUT_ASSEMBLES)
    newest = max((r.last_at for r in by_hook.values()), default=None)
    silent = newest is not None and (now - newest).total_seconds() > silent_after_s
    if silent_after_s > 0 and silent:
        flags.append(HOST_SILENT)
    return flags
