"""Browser tests of the console: a real service process on a seeded database, headless Chromium.

Chromium comes from Debian's package (`.ci/chromium` installs it); Playwright drives it through
``executable_path``. Each page a test looks at is photographed into the test's temporary folder,
and the page as it stands when a test fails as well.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.console.seed import API_KEYS, seed
from tests.jobs.test_crash_recovery import free_port, start_server

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def chromium_executable() -> str:
    """Debian's chromium, or a clear failure saying how to get it (never a skip)."""
    configured = os.environ.get("CE_TEST_CHROMIUM")
    found = configured or next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)
    if not found or not Path(found).exists():
        pytest.fail(
            "Chromium is not installed: the console's browser tests need Debian's chromium package "
            "(`apt-get install -y chromium`, which `.ci/chromium` runs), or CE_TEST_CHROMIUM=<path>",
            pytrace=False,
        )
    return found


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"report_{report.when}", report)


# Module scope: Playwright's sync API keeps an event loop running on the main thread, which
# must be gone before the asynchronous tests of other modules run.
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = chromium_executable()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def console_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A service with the console on a seeded database; its base URL."""
    db = tmp_path_factory.mktemp("console") / "console.db"
    # Playwright's sync API keeps an event loop running on this thread: seed on another one.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, seed(db)).result()
    port = free_port()
    server = start_server(
        db, port, CE_API_KEYS=API_KEYS, CE_EMBEDDING__PROVIDER="none", CE_AUTO_MIGRATE="false"
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


class Camera:
    """Screenshots of the pages a test visits, numbered, in the test's temporary folder."""

    def __init__(self, page: object, folder: Path) -> None:
        self.page = page
        self.folder = folder
        self.count = 0

    def shoot(self, name: str) -> Path:
        self.count += 1
        path = self.folder / f"{self.count:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
        return path


@pytest.fixture
def js_errors() -> list[str]:
    """JavaScript errors and failed console messages of the test's page (tests assert it stays empty)."""
    return []


@pytest.fixture
def page(
    browser: object, request: pytest.FixtureRequest, tmp_path: Path, js_errors: list[str]
) -> Iterator[object]:
    """A fresh browser context and page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    tab = context.new_page()
    tab.on("pageerror", lambda error: js_errors.append(str(error)))
    # An answer of 401 or 409 is part of a test; a script or style sheet that fails to load is not.
    tab.on(
        "console",
        lambda m: (
            js_errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None
        ),
    )
    tab.on(
        "response",
        lambda r: (
            js_errors.append(f"{r.status} for {r.url}")
            if r.status >= 400
            and r.request.resource_type in ("script", "stylesheet", "image", "font")
            else None
        ),
    )
    tab.set_default_timeout(10_000)
    yield tab
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        tab.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
        (tmp_path / "failure.html").write_text(tab.content())
    context.close()


@pytest.fixture
def camera(page: object, tmp_path: Path) -> Camera:
    return Camera(page, tmp_path)
