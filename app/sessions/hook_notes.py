"""Hook calls on their way to the session's hook records (app/sessions/hooks.py).

The host makes a tool-loop assemble before every model call of a turn, and a prompt should not
wait for (or share its cores with) a write it does not read. A tool-loop call changes the
records only by its count and time once the first of a turn has restarted the turn hooks'
streaks (a repeat leaves every streak as it is) and never raises a flag, so its calls are held
in process and written together: with the session's next other hook call (in the same write,
before it, so the order of the calls is kept), before the session's hook records are read, or at
most ``delay_s`` after the first of them. Every other hook is written when it is noted.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from collections.abc import Callable

import structlog

from app.core.clock import utcnow
from app.core.threads import to_thread
from app.db.uow import UnitOfWork
from app.sessions.hook_health import TOOL_LOOP
from app.sessions.hooks import NOT_STORED, HookCall, NotedCalls, RecordedCall, record_hook_calls

log = structlog.get_logger("app.sessions.hook_notes")

HELD_WRITE_DELAY_S = 1.0
SESSIONS_WITH_TOOL_LOOPS = 4096  # remembered, the least recent dropped

_Key = tuple[str, str]  # (tenant, session id)


class HookNotes:
    """Notes hook calls per session, holding the tool-loop assembles' for a moment."""

    def __init__(
        self,
        uow: UnitOfWork,
        delay_s: float = HELD_WRITE_DELAY_S,
        record: Callable[[UnitOfWork, list[NotedCalls]], RecordedCall] = record_hook_calls,
    ) -> None:
        self._uow, self._delay_s, self._record = uow, delay_s, record
        self._held: dict[_Key, NotedCalls] = {}
        self._timer: asyncio.TimerHandle | None = None
        # The held calls being written, by session: the session's next call waits for them.
        self._writing: dict[_Key, asyncio.Future[RecordedCall]] = {}
        self._tool_loops: OrderedDict[_Key, None] = OrderedDict()

    def makes_tool_loops(self, tenant_id: str, session_id: str) -> bool:
        """Whether this process has noted a tool-loop assemble of the session (its host makes
        one after each pre-prompt assemble)."""
        return (tenant_id, session_id) in self._tool_loops

    async def note(self, call: HookCall) -> RecordedCall:
        """Record the call (a tool-loop assemble's: hold it); what the session's records say now
        (nothing yet for a held call, which raises no flag)."""
        key = (call.identity.tenant_id, call.identity.session_id)
        if call.hook == TOOL_LOOP:
            self._tool_loops[key] = None
            self._tool_loops.move_to_end(key)
            if len(self._tool_loops) > SESSIONS_WITH_TOOL_LOOPS:
                self._tool_loops.popitem(last=False)
            held = self._held.get(key)
            self._held[key] = NotedCalls(call, 1 + (held.count if held else 0), utcnow())
            self._start_timer()
            return NOT_STORED
        await self._written_before(key)
        held = self._held.pop(key, None)
        noted = [NotedCalls(call, 1, utcnow())]
        return await to_thread(self._record, self._uow, [held, *noted] if held else noted)

    async def settle(self, tenant_id: str, session_id: str) -> None:
        """Write the session's held calls now (before its hook records are read)."""
        key = (tenant_id, session_id)
        await self._written_before(key)
        held = self._held.pop(key, None)
        if held is not None:
            await to_thread(self._record, self._uow, [held])

    async def drain(self) -> None:
        """Write every held call and wait for the writes under way (shutdown, tests)."""
        if self._timer is not None:
            self._timer.cancel()
        self._write_held()
        while self._writing:
            await asyncio.gather(*list(self._writing.values()), return_exceptions=True)

    def _start_timer(self) -> None:
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._delay_s, self._write_held)

    async def _written_before(self, key: _Key) -> None:
        writing = self._writing.get(key)
        if writing is not None:
            await asyncio.gather(asyncio.shield(writing), return_exceptions=True)

    def _write_held(self) -> None:
        self._timer = None
        held, self._held = self._held, {}
        for key, calls in held.items():
            task = asyncio.ensure_future(to_thread(self._record, self._uow, [calls]))
            self._writing[key] = task
            task.add_done_callback(functools.partial(self._written, key))

    def _written(self, key: _Key, task: asyncio.Future[RecordedCall]) -> None:
        if self._writing.get(key) is task:
            del self._writing[key]
        if not task.cancelled() and task.exception() is not None:
            log.warning("hook_calls_not_recorded", error=str(task.exception()))
