"""The console over HTTP: its switch, sign-in and session cookie, foreign posts, tenant isolation,
masked memories, and its absence from the OpenAPI document."""

from __future__ import annotations

import re

import httpx
import pytest

from app.cli import openapi_document
from app.memory.records import MASKED_TEXT
from tests.conftest import app_client
from tests.helpers.messages import assistant, user

KEYS = "acme-key:acme,globex-key:globex"
ACME = {"Authorization": "Bearer acme-key"}


async def sign_in(client: httpx.AsyncClient, key: str) -> httpx.Response:
    return await client.post("/console/login", data={"api_key": key, "next": "/console/sessions"})


async def seed_acme(client: httpx.AsyncClient) -> None:
    await client.post(
        "/after-turn",
        headers=ACME,
        json={"sessionId": "acme-1", "messages": [user("hello"), assistant("hi")]},
    )
    await client.post(
        "/sessions/acme-1/commit", headers=ACME, json={"keepRecentCount": 0, "wait": True}
    )


async def test_the_console_can_be_switched_off(make_settings) -> None:
    async with app_client(make_settings(console={"enabled": False})) as client:
        assert (await client.get("/console/sessions")).status_code == 404
        assert (await client.get("/console/static/htmx.min.js")).status_code == 404


async def test_without_api_keys_the_local_operator_sees_tenant_default(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/console/sessions")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Tenant <strong>default</strong>" in page.text and "Sign out" not in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    script = await client.get("/console/static/htmx.min.js")
    assert (
        script.status_code == 200
        and script.text.startswith("/*! htmx 2.0.11")
        and "Zero-Clause BSD" in script.text
    )


async def test_sign_in_sets_a_strict_http_only_cookie_that_is_not_the_key(make_settings) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        await seed_acme(client)
        first = await client.get("/console/sessions")
        assert (
            first.status_code == 303
            and first.headers["location"] == "/console/login?next=%2Fconsole%2Fsessions"
        )
        wrong = await sign_in(client, "nope")
        assert wrong.status_code == 401 and "That API key is not valid." in wrong.text
        answer = await sign_in(client, "acme-key")
        assert answer.status_code == 303 and answer.headers["location"] == "/console/sessions"
        cookie = answer.headers["set-cookie"]
        assert re.search(r"HttpOnly", cookie, re.I) and re.search(r"SameSite=strict", cookie, re.I)
        assert "Path=/console" in cookie and "acme-key" not in cookie
        page = await client.get("/console/sessions")
        assert (
            page.status_code == 200
            and "acme-1" in page.text
            and "Tenant <strong>acme</strong>" in page.text
        )
        out = await client.post("/console/logout")
        assert out.status_code == 303
        assert (await client.get("/console/sessions")).status_code == 303


async def test_sign_in_goes_back_only_to_console_pages(make_settings) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        answer = await client.post(
            "/console/login", data={"api_key": "acme-key", "next": "https://elsewhere.example/"}
        )
        assert answer.headers["location"] == "/console"


async def test_a_form_posted_from_another_site_is_refused(make_settings) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        await sign_in(client, "acme-key")
        refused = await client.post(
            "/console/logout", headers={"Origin": "https://elsewhere.example"}
        )
        assert refused.status_code == 403 and "sent from another site" in refused.text
        assert (await client.get("/console/sessions")).status_code == 200  # still signed in


async def test_another_tenants_session_memory_and_job_do_not_exist(make_settings) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        await seed_acme(client)
        memory = (
            await client.post(
                "/memories",
                headers=ACME,
                json={"content": "acme secret plan", "category": "entities"},
            )
        ).json()
        await sign_in(client, "globex-key")
        listing = await client.get("/console/sessions")
        assert "acme-1" not in listing.text
        session = await client.get("/console/sessions/acme-1")
        assert session.status_code == 404 and "Session not found: acme-1" in session.text
        assert (
            await client.get("/console/archives/archive_001", params={"session": "acme-1"})
        ).status_code == 404
        assert (await client.get(f"/console/memories/{memory['memory']['id']}")).status_code == 404
        assert "acme secret plan" not in (await client.get("/console/memories")).text
        jobs = await client.get("/console/jobs")
        assert "acme-1" not in jobs.text
        assert (await client.post("/console/jobs/1/retry")).status_code == 404


async def test_masked_memories_stay_masked_without_the_scope(make_settings) -> None:
    async with app_client(make_settings(api_keys=KEYS)) as client:
        made = await client.post(
            "/memories",
            headers=ACME,
            json={
                "content": "The door code is 4711",
                "category": "entities",
                "sensitivity": "masked",
            },
        )
        memory_id = made.json()["memory"]["id"]
        await client.patch(
            f"/memories/{memory_id}",
            headers={**ACME, "If-Match": "1"},
            json={"content": "The door code is 0815"},
        )
        await sign_in(client, "acme-key")
        page = await client.get(f"/console/memories/{memory_id}")
        assert page.status_code == 200
        assert "4711" not in page.text and "0815" not in page.text and MASKED_TEXT in page.text


async def test_a_stale_version_is_a_409_that_keeps_the_draft(client: httpx.AsyncClient) -> None:
    made = (
        await client.post("/memories", json={"content": "first text", "category": "entities"})
    ).json()
    memory_id = made["memory"]["id"]
    saved = await client.post(
        f"/console/memories/{memory_id}",
        data={
            "version": "1",
            "content": "second text",
            "title": "first text",
            "loaded_title": "first text",
        },
    )
    assert (
        saved.status_code == 303
        and saved.headers["location"] == f"/console/memories/{memory_id}?saved=2"
    )
    stale = await client.post(
        f"/console/memories/{memory_id}", data={"version": "1", "content": "my draft"}
    )
    assert stale.status_code == 409
    assert "my draft</textarea>" in stale.text and "second text" in stale.text
    assert (await client.get(f"/memories/{memory_id}")).json()["content"] == "second text"
    audit = (await client.get(f"/console/memories/{memory_id}")).text
    assert re.search(r"<th scope=\"row\">UPDATE</th>\s*<td>console</td>", audit)
    # The title was derived from the text and left as it was: it follows the text.
    assert (await client.get(f"/memories/{memory_id}")).json()["title"] == "second text"
    await client.post(
        f"/console/memories/{memory_id}",
        data={
            "version": "2",
            "content": "third text",
            "title": "A title of its own",
            "loaded_title": "second text",
        },
    )
    assert (await client.get(f"/memories/{memory_id}")).json()["title"] == "A title of its own"


async def test_htmx_posts_navigate_with_hx_redirect(client: httpx.AsyncClient) -> None:
    made = (
        await client.post("/memories", json={"content": "to be removed", "category": "entities"})
    ).json()
    memory_id = made["memory"]["id"]
    answer = await client.post(
        f"/console/memories/{memory_id}/delete", headers={"HX-Request": "true"}
    )
    assert (
        answer.status_code == 200
        and answer.headers["hx-redirect"] == f"/console/memories?deleted={memory_id}"
    )
    assert (await client.get(f"/memories/{memory_id}")).status_code == 404


@pytest.mark.parametrize("path", ["/console/sessions?offset=-1", "/console/archives/archive_001"])
async def test_bad_parameters_are_an_error_page(client: httpx.AsyncClient, path: str) -> None:
    answer = await client.get(path)
    assert answer.status_code == 400 and answer.headers["content-type"].startswith("text/html")


def test_the_console_is_not_part_of_the_openapi_document() -> None:
    assert not [path for path in openapi_document()["paths"] if path.startswith("/console")]
