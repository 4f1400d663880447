"""The OpenClaw host test: select it alone with `pytest -m host tests/host`."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "host: drives the real OpenClaw host with the plugin (installs the host on first use)",
    )


# Latency summaries of host runs, printed after the test results.
SUMMARIES: list[str] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for summary in SUMMARIES:
        terminalreporter.write_sep("-", "OpenClaw host latency")
        terminalreporter.write_line(summary)
