"""The OpenClaw host test: select it alone with `pytest -m host tests/host`.

It runs against the newest pinned OpenClaw release (`tests/host/releases/`); `--openclaw
VERSION` (repeatable) or `--openclaw all` (`make host-matrix`) selects others, as does the
environment variable CE_OPENCLAW_RELEASES (comma-separated, or `all`).
"""

from __future__ import annotations

import os

import pytest

from tests.host.install import NEWEST, RELEASES


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--openclaw",
        action="append",
        default=[],
        metavar="VERSION",
        help=f"OpenClaw release(s) for the host test: one of {', '.join(RELEASES)}, or all",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "host: drives the real OpenClaw host with the plugin (installs the host on first use)",
    )


def selected_releases(config: pytest.Config) -> list[str]:
    asked: list[str] = list(config.getoption("--openclaw") or [])
    if not asked and os.environ.get("CE_OPENCLAW_RELEASES"):
        asked = [v.strip() for v in os.environ["CE_OPENCLAW_RELEASES"].split(",") if v.strip()]
    if not asked:
        return [NEWEST]
    if "all" in asked:
        return list(RELEASES)
    unknown = [v for v in asked if v not in RELEASES]
    if unknown:
        raise pytest.UsageError(
            f"OpenClaw {', '.join(unknown)} is not pinned; pinned: {', '.join(RELEASES)}"
        )
    return asked


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "release" in metafunc.fixturenames:
        releases = selected_releases(metafunc.config)
        metafunc.parametrize("release", releases, ids=releases, scope="module")


# Latency summaries of host runs, printed after the test results.
SUMMARIES: list[str] = []


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for summary in SUMMARIES:
        terminalreporter.write_sep("-", "OpenClaw host latency")
        terminalreporter.write_line(summary)
