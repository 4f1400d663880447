"""The console in a real browser: sign in, follow the links, see the diff, edit and delete a
memory (with the version check), retry a failed job."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.console.seed import AUTH, FAILURE, SESSION, TENANT_KEY

pytestmark = pytest.mark.slow


def sign_in(page: Page, base: str) -> None:
    page.goto(f"{base}/console/memories")
    expect(page).to_have_url(re.compile(r"/console/login\?next=%2Fconsole%2Fmemories$"))
    page.get_by_label("API key").fill(TENANT_KEY)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{base}/console/memories")


def test_sign_in_then_search_the_tenants_sessions(
    page: Page, camera, console_server: str, js_errors: list[str]
) -> None:
    page.goto(f"{console_server}/console")
    expect(page.get_by_role("heading", name="Sign in to the console")).to_be_visible()
    camera.shoot("login")
    page.get_by_label("API key").fill("not-a-key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("That API key is not valid.")
    page.get_by_label("API key").fill(TENANT_KEY)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{console_server}/console/sessions")
    sessions = page.locator("#sessions tbody th a")
    expect(sessions).to_have_text(["deploy-review", "billing-cutover"])  # never another tenant's
    camera.shoot("sessions")

    page.get_by_label("Search sessions by id, key, agent or user").fill("billing")
    expect(sessions).to_have_text(["billing-cutover"])  # swapped in by htmx, no page load
    expect(page).to_have_url(re.compile(r"q=billing"))
    page.get_by_role("link", name="billing-cutover").click()
    expect(page.get_by_role("heading", name="Session billing-cutover")).to_be_visible()
    assert js_errors == []


def test_timeline_shows_archives_the_working_memory_diff_and_live_messages(
    page: Page, camera, console_server: str, js_errors: list[str]
) -> None:
    sign_in(page, console_server)
    page.get_by_role("link", name="Sessions", exact=True).click()
    page.get_by_role("link", name=SESSION).click()
    expect(page.get_by_role("heading", name=f"Session {SESSION}")).to_be_visible()
    archives = page.locator("section[aria-labelledby=archives-heading] tbody tr")
    expect(archives).to_have_count(4)
    expect(archives.nth(0)).to_contain_text("completed")
    expect(archives.nth(2)).to_contain_text("failed")
    expect(archives.nth(2)).to_contain_text(FAILURE)

    diff = page.locator("#diff")
    expect(diff.get_by_role("heading")).to_have_text("Changes from archive_002 to archive_004")
    expect(diff.locator("ins").filter(has_text="Next: us-east-1 on Monday").first).to_be_visible()
    live = page.locator("#live")
    expect(live.get_by_role("heading", name="#13 user")).to_be_visible()
    expect(live).to_contain_text("Yes: all pods run v1.4.2.")
    camera.shoot("session")

    page.get_by_role("link", name="Compare with archive_001").click()
    expect(diff.get_by_role("heading")).to_have_text("Changes from archive_001 to archive_002")
    expect(
        diff.locator("del").filter(has_text="The image tag v1.4 does not exist").first
    ).to_be_visible()
    expect(diff.locator("ins").filter(has_text="We decided to pin v1.4.2").first).to_be_visible()
    page.get_by_text("Show the Working Memory of archive_001").click()
    expect(page.locator("pre.wm").first).to_contain_text("## Session Title")
    camera.shoot("session-diff")

    page.get_by_role("link", name="archive_001", exact=True).click()
    expect(page.get_by_role("heading", name="Original messages")).to_be_visible()
    call = page.get_by_role("region", name="Tool call: exec (t1)")
    expect(call).to_contain_text('"command": "kubectl logs deploy/api --tail 20"')
    expect(page.get_by_role("heading", name="#3 Tool result: exec (error)")).to_be_visible()
    expect(page.locator("article.message")).to_have_count(4)
    camera.shoot("archive")
    assert js_errors == []


def test_edit_a_memory_and_a_stale_edit_is_refused(
    page: Page, camera, console_server: str, js_errors: list[str]
) -> None:
    sign_in(page, console_server)
    page.get_by_role("navigation", name="Categories").get_by_role(
        "link", name=re.compile("^entities")
    ).click()
    expect(page.locator("#memories tbody tr")).to_have_count(1)
    camera.shoot("memories")
    page.get_by_role("link", name="Production database is db-prod-7 in eu-west-1").click()
    memory_id = page.url.rsplit("/", 1)[1]
    page.get_by_label("Content").fill(
        "Production database is db-prod-8 in eu-west-1 since the migration"
    )
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_have_text("Saved as version 2.")
    update = page.locator("table.audit tbody tr").filter(has_text="UPDATE")
    expect(update).to_contain_text("console")
    expect(update.locator("del").first).to_contain_text("db-prod-7")
    expect(update.locator("ins").first).to_contain_text("db-prod-8")
    camera.shoot("memory")

    # Someone else saves version 3 while this page still holds version 2.
    other = httpx.patch(
        f"{console_server}/memories/{memory_id}",
        headers={**AUTH, "If-Match": "2"},
        json={"content": "Production database is db-prod-9"},
        timeout=10,
    )
    assert other.status_code == 200 and other.json()["version"] == 3
    page.get_by_label("Content").fill("my stale edit")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text(
        "someone changed this memory while you were editing"
    )
    expect(page.get_by_label("Content")).to_have_value("my stale edit")
    expect(page.locator("pre.current")).to_have_text("Production database is db-prod-9")
    camera.shoot("memory-conflict")
    stored = httpx.get(f"{console_server}/memories/{memory_id}", headers=AUTH, timeout=10).json()
    assert (stored["content"], stored["version"]) == ("Production database is db-prod-9", 3)
    assert js_errors == []


def test_delete_a_memory_keeps_its_audit_trail(
    page: Page, camera, console_server: str, js_errors: list[str]
) -> None:
    sign_in(page, console_server)
    page.get_by_role("link", name="The user prefers green tea in the afternoon").click()
    memory_id = page.url.rsplit("/", 1)[1]
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete this memory").click()
    expect(page).to_have_url(re.compile(r"/console/memories\?deleted="))
    expect(page.get_by_role("status")).to_contain_text(f"Memory {memory_id} was deleted")
    expect(
        page.get_by_role("link", name="The user prefers green tea in the afternoon")
    ).to_have_count(0)
    page.get_by_role("link", name="its page").click()
    expect(page.get_by_role("heading", name="Deleted memory")).to_be_visible()
    expect(page.locator("table.audit tbody tr").filter(has_text="DELETE")).to_contain_text(
        "console"
    )
    camera.shoot("memory-deleted")
    assert (
        httpx.get(f"{console_server}/memories/{memory_id}", headers=AUTH, timeout=10).status_code
        == 404
    )
    assert js_errors == []


def test_retry_a_failed_job(page: Page, camera, console_server: str, js_errors: list[str]) -> None:
    sign_in(page, console_server)
    page.get_by_role("link", name="Jobs").click()
    failed = page.locator("section[aria-labelledby=jobs-failed] tbody tr")
    expect(failed).to_have_count(1)
    expect(failed).to_contain_text("archive_003")
    expect(failed).to_contain_text(FAILURE)
    camera.shoot("jobs")
    failed.get_by_role("button", name=re.compile("^Retry job")).click()
    expect(page.get_by_role("status")).to_contain_text("is queued again")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        archives = httpx.get(
            f"{console_server}/sessions/{SESSION}", headers=AUTH, timeout=10
        ).json()["archives"]
        if archives[2]["status"] == "completed":
            break
        time.sleep(0.1)
    assert archives[2]["status"] == "completed", archives
    page.get_by_role("link", name="Refresh").click()
    expect(page.locator("section[aria-labelledby=jobs-failed]")).to_contain_text("None.")
    expect(
        page.locator("section[aria-labelledby=jobs-succeeded] tbody tr").filter(
            has_text="archive_003"
        )
    ).to_have_count(1)
    camera.shoot("jobs-after-retry")
    assert js_errors == []
