"""A progress bar on stderr: redrawn in place on a terminal, a line every few percent otherwise
(so that logs and tests that read stderr see the progress too)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30
LINE_EVERY_S = 1.0  # without a terminal: a line a second at most, and one at every tenth done
LINE_STEPS = 10
REDRAW_EVERY_S = 0.1  # on a terminal


class ProgressBar:
    def __init__(self, label: str, total: int | None, stream: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.done = 0
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._started = time.monotonic()
        self._last_line = 0.0
        self._last_step = 0

    def advance(self, count: int) -> None:
        self.update(self.done + count)

    def update(self, done: int, total: int | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        now = time.monotonic()
        step = done * LINE_STEPS // self.total if self.total else 0
        stepped = not self._tty and step > self._last_step
        if self._finished or (
            not stepped and now - self._last_line < (REDRAW_EVERY_S if self._tty else LINE_EVERY_S)
        ):
            return  # the last state is drawn by close()
        self._last_line, self._last_step = now, step
        self._stream.write("\r" + self._render(now) if self._tty else self._render(now) + "\n")
        self._stream.flush()

    def close(self, note: str = "") -> None:
        """End the bar with its final state and an optional note."""
        line = self._render(time.monotonic()) + (f" {note}" if note else "")
        self._stream.write(("\r" + line + "\n") if self._tty else line + "\n")
        self._stream.flush()

    @property
    def _finished(self) -> bool:
        return self.total is not None and self.done >= self.total

    def _render(self, now: float) -> str:
        elapsed = now - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        if not self.total:
            return f"{self.label}: {self.done} ({rate:.0f}/s)"
        share = min(1.0, self.done / self.total)
        filled = int(share * BAR_WIDTH)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        return f"{self.label}: [{bar}] {self.done}/{self.total} {share:4.0%} ({rate:.0f}/s, {left:.0f}s left)"
