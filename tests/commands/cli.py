"""Running ``python -m app`` as a separate process, and reading its progress as it goes."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRESS = re.compile(r"(\d+)/(\d+)")


def cli_env(db: Path, **env: str) -> dict[str, str]:
    return {
        **os.environ,
        "CE_DATABASE_URL": f"sqlite:///{db}",
        "CE_EMBEDDING__PROVIDER": "none",
        "CE_LOG_LEVEL": "WARNING",
        **env,
    }


def run_cli(
    *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _interruptible() -> None:
    """In the child before it runs: SIGINT back to its default. A shell without job control
    starts a background command (``make test &``, a CI step) with SIGINT ignored, every process
    under it inherits that, and a command started ignoring SIGINT rightly ignores Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class RunningCommand:
    """A command whose stderr is read line by line on a thread; it can be interrupted (SIGINT)
    however the tests were started."""

    def __init__(self, *args: str, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "app", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_interruptible,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for_progress(self, at_least: int, timeout: float = 60) -> int:
        """Block until a progress line reports ``at_least`` items done; that count."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                raise AssertionError(f"the command ended before {at_least} were done: {self.lines}")
            self.lines.append(line)
            found = PROGRESS.search(line)
            if found and int(found.group(1)) >= at_least:
                return int(found.group(1))
        raise AssertionError(f"no progress to {at_least} within {timeout}s: {self.lines}")

    def finish(self, timeout: float = 60) -> int:
        """Wait for the end; its exit status (the rest of stderr is in ``lines``)."""
        status = self.process.wait(timeout=timeout)
        while (line := self._queue.get(timeout=timeout)) is not None:
            self.lines.append(line)
        assert self.process.stderr is not None
        self.process.stderr.close()
        return status

    def kill(self) -> int:
        """SIGKILL: no chance to clean up, as when the machine loses power mid-command."""
        self.process.kill()
        return self.finish()
